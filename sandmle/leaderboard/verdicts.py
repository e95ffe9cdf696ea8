"""Model-level verdicts: a pooled rank over scaffolds and benchmarks, whether a gap between two
models holds under each scaffold, and head-to-head win rates.

A *cell* is one competition of one benchmark; a model's value on a cell is its mean ``metric``
over its scaffolds, runs and epochs there. The pooled rank resamples cells (a paired bootstrap:
every model is scored on the same resampled cells) and reports each model's score and rank
with 95% percentile intervals. The cross-scaffold table tests each pair of models under each
scaffold both ran, with ``stats.compare`` on shared cells, and adjusts the p-values of the whole
table for multiple comparisons by Holm's method: a gap "holds" under a scaffold when its Holm
p is below ``stats.ALPHA``. Reference rows (published results) never enter these frames.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sandmle.harness.scorer import FLAGS
from sandmle.leaderboard import stats

BOOTSTRAP = 2000
"""Bootstrap replicates of the pooled rank (seeded: the same logs give the same intervals)."""
SEED = 0
CELL = ["benchmark", "competition_id"]
MODEL_RANK_COLUMNS = ["rank", "model", "score", "score 95% CI", "rank 95% CI", "scaffolds",
                      "benchmarks", "competitions"]  # fmt: skip
CROSS_COLUMNS = ["A", "B", "holds under", "scaffolds tested"]
MULTIPLE_NOTE = (
    "One paired test per pair of models per scaffold (exact sign-flip / McNemar on shared "
    "competitions); p-values adjusted across the whole table by Holm's method. A gap holds "
    f"under a scaffold when its Holm p < {stats.ALPHA}; raw p in brackets."
)


def cell_means(samples: pd.DataFrame, metric: str, by: str = "model") -> pd.DataFrame:
    """``by`` (rows) x cell (columns): the mean ``metric`` over scaffolds, runs and epochs."""
    means = samples.groupby([by, *CELL], sort=True)[metric].mean()
    return means.unstack(CELL)


def _ranks(values: np.ndarray) -> np.ndarray:
    """Competition ranks (1 = best; ties share the best) of each row's value, per column."""
    return (values[None, :, :] > values[:, None, :]).sum(axis=1) + 1


def model_rank(
    samples: pd.DataFrame, metric: str = "any_medal", replicates: int = BOOTSTRAP
) -> pd.DataFrame:
    """One row per model: pooled score (%) and rank, each with a 95% paired-bootstrap interval."""
    if samples.empty:
        return pd.DataFrame(columns=MODEL_RANK_COLUMNS)
    wide = cell_means(samples, metric)
    values = wide.to_numpy(dtype=float)
    have = ~np.isnan(values)
    rng = np.random.default_rng(SEED)
    picks = rng.integers(0, values.shape[1], size=(replicates, values.shape[1]))
    weights = np.stack([np.bincount(p, minlength=values.shape[1]) for p in picks], axis=1)
    filled = np.nan_to_num(values)
    counts = have.astype(float) @ weights  # models x replicates
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = (filled @ weights) / counts
    boot = np.where(counts > 0, boot, -np.inf)  # a model with no resampled cell ranks last
    boot_ranks = _ranks(boot)
    point = np.nanmean(np.where(have, values, np.nan), axis=1)
    point_rank = _ranks(point[:, None])[:, 0]
    scale = 100.0 if metric in FLAGS else 1.0
    rows = []
    for i, model in enumerate(wide.index):
        finite = boot[i][np.isfinite(boot[i])]
        low, high = np.percentile(finite, [2.5, 97.5]) if finite.size else (np.nan, np.nan)
        r_low, r_high = np.percentile(boot_ranks[i], [2.5, 97.5])
        part = samples[samples["model"] == model]
        rows.append({
            "rank": int(point_rank[i]),
            "model": model,
            "score": scale * point[i],
            "score 95% CI": f"{scale * low:.0f}–{scale * high:.0f}",
            "rank 95% CI": _span(int(np.floor(r_low)), int(np.ceil(r_high))),
            "scaffolds": part["scaffold"].nunique(),
            "benchmarks": part["benchmark"].nunique(),
            "competitions": int(have[i].sum()),
        })  # fmt: skip
    table = pd.DataFrame(rows, columns=MODEL_RANK_COLUMNS)
    return table.sort_values(["rank", "model"], kind="stable").reset_index(drop=True)


def _span(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}–{high}"


def holm(p_values: list[float]) -> list[float]:
    """Holm-adjusted p-values (step-down, monotone, capped at 1), in the given order.

    >>> [round(p, 3) for p in holm([0.01, 0.04, 0.03])]
    [0.03, 0.06, 0.06]
    """
    order = np.argsort(p_values, kind="stable")
    m = len(p_values)
    adjusted = np.empty(m)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted.tolist()


@dataclass(frozen=True)
class PairTest:
    """Model ``a`` against ``b`` under one scaffold, on the cells both ran there."""

    a: str
    b: str
    scaffold: str
    comparison: stats.Comparison


@dataclass
class _PairRow:
    a: str
    b: str
    holds: list[str] = field(default_factory=list)
    cells: dict[str, str] = field(default_factory=dict)


def pair_tests(samples: pd.DataFrame, metric: str = "any_medal") -> list[PairTest]:
    """Every (model A, model B, scaffold) paired test on shared cells; A ranks above B pooled."""
    order = list(model_rank(samples, metric, replicates=1)["model"])
    tests = []
    for scaffold, part in samples.groupby("scaffold", sort=True):
        wide = cell_means(part, metric)
        values = wide.to_numpy(dtype=float)  # rows as arrays: hundreds of pairs per scaffold
        row = {name: i for i, name in enumerate(wide.index)}
        for i, a in enumerate(order):
            for b in order[i + 1 :]:
                if a in row and b in row:
                    va, vb = values[row[a]], values[row[b]]
                    shared = ~np.isnan(va) & ~np.isnan(vb)
                    c = stats.comparison(va[shared] - vb[shared])
                    if c.pairs:
                        tests.append(PairTest(a, b, str(scaffold), c))
    return tests


def cross_scaffold_table(samples: pd.DataFrame, metric: str = "any_medal") -> pd.DataFrame:
    """Per pair of models: under which scaffolds the gap holds (Holm-adjusted), and each test.

    One column per scaffold reads ``+25 pts, p 0.031 (raw 0.008) ✓`` (✓: the gap holds there;
    "too few" when the scaffold's shared competitions cannot decide). "holds under" names each
    such scaffold with the better model (A or B).
    """
    tests = pair_tests(samples, metric)
    if not tests:
        return pd.DataFrame(columns=CROSS_COLUMNS)
    adjusted = holm([t.comparison.p_value for t in tests])
    scale = 100.0 if metric in FLAGS else 1.0
    rows: dict[tuple[str, str], _PairRow] = {}
    for test, p_holm in zip(tests, adjusted, strict=True):
        c = test.comparison
        row = rows.setdefault((test.a, test.b), _PairRow(test.a, test.b))
        holds = c.decidable and p_holm < stats.ALPHA
        if holds:
            row.holds.append(f"{test.scaffold} ({'A' if c.diff > 0 else 'B'})")
        row.cells[test.scaffold] = _cell(c, p_holm, holds, scale)
    scaffolds = sorted({t.scaffold for t in tests})
    records = [
        {"A": r.a, "B": r.b, "holds under": ", ".join(r.holds) or "none",
         "scaffolds tested": len(r.cells), **{s: r.cells.get(s, "—") for s in scaffolds}}
        for r in rows.values()
    ]  # fmt: skip
    return pd.DataFrame(records, columns=[*CROSS_COLUMNS, *scaffolds])


def _cell(c: stats.Comparison, p_holm: float, holds: bool, scale: float) -> str:
    unit = " pts" if scale == 100.0 else ""
    if not c.decidable:
        return f"{scale * c.diff:+.0f}{unit}, too few ({c.pairs} < {stats.MIN_DECIDABLE})"
    mark = " ✓" if holds else ""
    return f"{scale * c.diff:+.0f}{unit}, p {p_holm:.3f} (raw {c.p_value:.3f}){mark}"


def win_rates(samples: pd.DataFrame, metric: str = "any_medal") -> pd.DataFrame:
    """Row model's head-to-head win rate (%) against the column model.

    Over every (scaffold, benchmark, competition) both ran, a win is a higher mean ``metric``
    and a draw counts half; NaN where they share none.
    """
    models = sorted(samples["model"].unique())
    keyed = samples.assign(_cell=samples["scaffold"] + "|" + samples["benchmark"] + "|"
                           + samples["competition_id"].astype(str))  # fmt: skip
    wide = keyed.groupby(["model", "_cell"])[metric].mean().unstack("_cell")
    matrix = pd.DataFrame(np.nan, index=models, columns=models)
    for a in models:
        for b in models:
            if a == b:
                continue
            both = wide.loc[[a, b]].dropna(axis=1)
            if both.shape[1]:
                wins = (both.loc[a] > both.loc[b]).sum() + 0.5 * (both.loc[a] == both.loc[b]).sum()
                matrix.loc[a, b] = 100.0 * wins / both.shape[1]
    return matrix.rename_axis("model")
