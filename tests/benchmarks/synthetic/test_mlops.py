"""Noise-aware milestones: placed from the ladder's bootstrap spread, rejected when too thin."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sandmle.benchmarks.synthetic.blueprint import TaskRequest
from sandmle.benchmarks.synthetic.mlops import (
    MIN_BAND_SIGMA,
    Ladder,
    LadderScore,
    NoisyMilestones,
    bootstrap_ladder,
    place_milestones,
)
from sandmle.benchmarks.synthetic.pipeline import generate_task
from sandmle.benchmarks.synthetic.seeds import get_seed
from sandmle.benchmarks.synthetic.strategist import plan
from sandmle.harness.competition import CompetitionConfig, Thresholds


def _blueprint(seed: str = "tabular-playground-series-may-2022"):
    return plan(TaskRequest(index=0, dna=get_seed(seed), entropy=[1, 0, 0]))


def _ladder(constant: float, generic: float, structure: float, sigma: float, lower: bool):
    scores = {
        name: LadderScore(score=value, sd=sigma, q05=value, q95=value)
        for name, value in (("constant", constant), ("generic", generic), ("structure", structure))
    }
    return Ladder(scores=scores, is_lower_better=lower, sigma=sigma)


@pytest.mark.parametrize("lower", [False, True])
def test_generic_sits_above_median_and_structure_reaches_gold(lower: bool):
    sign = -1 if lower else 1
    ladder = _ladder(sign * 0.5, sign * 0.7, sign * 0.9, 0.02, lower)
    milestones = place_milestones(_blueprint(), ladder)
    t = milestones.thresholds
    g = [sign * v for v in (t.median, t.bronze, t.silver, t.gold)]
    assert g == sorted(g)
    assert g[0] == pytest.approx(0.69) and g[3] == pytest.approx(0.89)
    assert min(milestones.bands_in_sigma) >= MIN_BAND_SIGMA
    assert milestones.constant_gap_in_sigma == pytest.approx(9.5)


def test_bands_thinner_than_two_sigma_are_rejected():
    with pytest.raises(NoisyMilestones, match="too close to generic"):
        place_milestones(_blueprint(), _ladder(0.5, 0.80, 0.90, 0.02, False))


def test_constant_near_the_median_is_rejected():
    with pytest.raises(NoisyMilestones, match="best constant"):
        place_milestones(_blueprint(), _ladder(0.69, 0.70, 0.99, 0.02, False))


def test_bootstrap_spread_shrinks_with_more_test_rows():
    config = CompetitionConfig(
        id="t",
        name="t",
        metric="accuracy",
        id_columns=["id"],
        target_columns=["y"],
        thresholds=Thresholds(gold=0.9, silver=0.8, bronze=0.7, median=0.6),
    )
    rng = np.random.default_rng(0)

    def spread(n: int) -> float:
        answers = pd.DataFrame({"id": range(n), "y": rng.integers(0, 2, n)})
        right = rng.random(n) < 0.8  # a model that is right 80% of the time
        guess = pd.DataFrame({"id": range(n), "y": np.where(right, answers.y, 1 - answers.y)})
        ladder = bootstrap_ladder(
            config, answers, {"generic": guess, "structure": guess}, np.random.default_rng(1)
        )
        assert ladder.scores["generic"].q05 < ladder.scores["generic"].score
        return ladder.sigma

    small, large = spread(40), spread(800)
    assert small == pytest.approx(np.sqrt(0.16 / 40), rel=0.35)
    assert large == pytest.approx(np.sqrt(0.16 / 800), rel=0.35)


def test_grouped_bootstrap_resamples_whole_pages_and_sentences():
    """Rows of one page (or sentence) share their errors: the test-noise bootstrap draws the
    page, never a pixel alone, so a page-level error cannot shrink into pixel-level noise."""
    import numpy as np
    import pandas as pd

    from sandmle.benchmarks.synthetic.mlops import _draw
    from sandmle.benchmarks.synthetic.pipeline import row_groups

    pixels = pd.Series([f"{page}_{r}_{c}" for page in (7, 8, 19) for r in (1, 2) for c in (1, 2)])
    assert list(row_groups("image-to-image", pixels)) == ["7"] * 4 + ["8"] * 4 + ["19"] * 4
    tokens = pd.Series(["s1_0", "s1_1", "s12_0"])
    assert list(row_groups("seq2seq", tokens)) == ["s1", "s1", "s12"]
    assert row_groups("binary", tokens) is None
    groups = row_groups("image-to-image", pixels)
    for seed in range(20):
        idx = _draw(np.random.default_rng(seed), len(pixels), groups)
        assert len(idx) == len(pixels)
        for start in range(0, len(idx), 4):  # each drawn page comes whole, in one block
            assert sorted(idx[start : start + 4]) == list(
                np.flatnonzero(groups == groups[idx[start]])
            )


def test_hard_label_binary_table_slots_pass_the_noise_gate(tmp_path: Path):
    """Accuracy on one yes/no logit left titanic's bands under 2 sigma (seeds 1000-1019:
    118 rejections, 12 of 20 slots empty after 8 attempts). With sharper labels and more
    test rows about one attempt in two passes (21 rejections, none empty). These five slots:
    3 rejections now, 33 and three empty slots before; the bound allows 2 per slot."""
    dna = get_seed("titanic")
    outcomes = [generate_task(dna, index=0, seed=s, out_root=tmp_path) for s in range(5)]
    assert [o.task_id is not None for o in outcomes] == [True] * 5
    assert sum(len(o.rejections) for o in outcomes) <= 10


def test_probability_binary_table_slots_pass_the_noise_gate(tmp_path: Path):
    """AUC on one yes/no label per row: with ~650 test rows sigma (~0.019) left
    generic..structure (~0.08) under the 6 sigma the bands need (seeds 1000-1019: 80
    rejections, one slot empty after 8 attempts). With 3x the test rows, 6 and none empty.
    These five slots: 2 rejections now, 12 before; the bound allows one per slot."""
    dna = get_seed("tabular-playground-series-may-2022")
    outcomes = [generate_task(dna, index=0, seed=s, out_root=tmp_path) for s in range(5)]
    assert [o.task_id is not None for o in outcomes] == [True] * 5
    assert sum(len(o.rejections) for o in outcomes) <= 5


@pytest.mark.parametrize("metric", ["roc_auc", "rmsle", "accuracy"])
def test_the_fast_bootstrap_gives_the_scores_of_grading_every_resample(
    metric: str, monkeypatch: pytest.MonkeyPatch
):
    """The standard grader checks the whole table once and its metric then runs on each
    resample's rows: the same floats as grading every resampled table, including resamples
    the metric refuses (one class only: AUC undefined) and a table invalid as a whole (a
    missing row: every resample is graded, as before). Shuffled ids and a grouped draw."""
    from sandmle.benchmarks.synthetic import mlops

    rng = np.random.default_rng(3)
    n = 12  # small: some AUC resamples hold one class only
    ids = rng.permutation(n) + 100
    y = rng.integers(0, 2, n) if metric != "rmsle" else rng.random(n) * 50
    answers = pd.DataFrame({"id": ids, "y": y})
    pred = rng.random(n) if metric == "roc_auc" else y if metric == "accuracy" else y * 1.1
    if metric == "accuracy":
        pred = np.where(rng.random(n) < 0.7, y, 1 - y)
    good = pd.DataFrame({"id": ids[::-1], "y": pred[::-1]})  # another row order
    missing = good.iloc[1:]
    config = CompetitionConfig(
        id="t",
        name="t",
        metric=metric,
        id_columns=["id"],
        target_columns=["y"],
        thresholds=Thresholds(gold=0.9, silver=0.8, bronze=0.7, median=0.6),
    )
    subs = {"generic": good, "structure": good, "constant": missing}
    groups = np.repeat(np.arange(n // 2), 2)

    def ladder(fast: bool, grouped: bool) -> dict:
        if not fast:
            monkeypatch.setattr(mlops, "_standard_arrays", lambda *a, **k: None)
        out = bootstrap_ladder(
            config, answers, subs, np.random.default_rng(5), groups if grouped else None
        )
        monkeypatch.undo()
        return out.model_dump()

    for grouped in (False, True):
        fast, slow = ladder(True, grouped), ladder(False, grouped)
        assert fast == slow
        assert fast["scores"]["constant"]["score"] is None  # the missing row, on the full set
    if metric == "roc_auc":  # some resamples were refused, and left out alike
        assert np.isfinite(fast["sigma"])
