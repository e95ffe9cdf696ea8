"""Technical Writer: varied, deterministic descriptions that keep every exact fact."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pandas as pd
import pytest

from sandmle.benchmarks.synthetic import draft, writer
from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.backends import get_backend
from sandmle.benchmarks.synthetic.blueprint import TaskRequest
from sandmle.benchmarks.synthetic.builtin import BUILTIN_SEEDS
from sandmle.benchmarks.synthetic.leaks import description_leaks
from sandmle.benchmarks.synthetic.phrases import ID_SCHEMES
from sandmle.benchmarks.synthetic.sanity import description_mismatches
from sandmle.benchmarks.synthetic.seeds import SEEDS
from sandmle.benchmarks.synthetic.strategist import plan
from sandmle.benchmarks.synthetic.task_files import write_prepared
from sandmle.harness.grading.metrics import get_metric

AUDIO_SEEDS = ["mlsp-2013-birds", "the-icml-2013-whale-challenge-right-whale-redux"]
PACK_SEEDS = [*BUILTIN_SEEDS, *AUDIO_SEEDS]
N_TASKS = 2 * len(PACK_SEEDS)  # each seed twice


@pytest.fixture(scope="module")
def pack() -> list[tuple]:
    """(blueprint, developed task, sample submission) for a small pack of planned tasks."""
    backend = get_backend("procedural")
    tasks = []
    for index in range(N_TASKS):
        dna = SEEDS[PACK_SEEDS[index % len(PACK_SEEDS)]]
        bp = backend.strategist(TaskRequest(index=index, dna=dna, entropy=[77, index, 0]))
        task = backend.developer(bp)
        ids = task.test[bp.domain.id_column]
        tasks.append((bp, task, tg.submission_frame(bp, ids, tg.constant_canon(bp, len(ids)))))
    return tasks


def headings(markdown: str) -> tuple[str, ...]:
    return tuple(re.findall(r"^## (.+)$", markdown, re.M))


def trigrams(markdown: str) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z]+", markdown.lower())
    return set(zip(words, words[1:], words[2:], strict=False))


def mean_overlap(texts: list[str]) -> float:
    """Mean pairwise Jaccard similarity of the texts' word 3-grams."""
    grams = [trigrams(t) for t in texts]
    pairs = list(itertools.combinations(grams, 2))
    return sum(len(a & b) / len(a | b) for a, b in pairs) / len(pairs)


def one_template(monkeypatch: pytest.MonkeyPatch, tasks: list[tuple]) -> list[str]:
    """The same tasks written by a single template: the first layout and first phrasings."""
    with monkeypatch.context() as patch:
        patch.setattr(draft, "LAYOUTS", draft.LAYOUTS[:1])
        patch.setattr(draft.Draft, "pick", lambda self, options: options[0])
        return [writer.write_description(*t).markdown for t in tasks]


def test_descriptions_vary_well_beyond_one_template(pack, monkeypatch):
    texts = [writer.write_description(*t).markdown for t in pack]
    templated = one_template(monkeypatch, pack)
    structures = {headings(t) for t in texts}
    assert len(structures) >= N_TASKS // 2, structures
    assert len({headings(t) for t in templated}) == 1
    varied, single = mean_overlap(texts), mean_overlap(templated)
    assert varied < 0.6 * single, (varied, single)


def test_every_description_states_the_exact_facts(pack):
    for bp, task, sample in pack:
        text = writer.write_description(bp, task, sample).markdown
        lower = get_metric(bp.dna.metric).lower_is_better
        assert text.startswith(f"# {bp.domain.title}\n")
        assert f"`{bp.dna.metric}`" in text
        assert ("(lower is better)" if lower else "(higher is better)") in text
        header = ", ".join(f"`{c}`" for c in sample.columns)
        submission = section_with(text, "```")
        assert header in submission, bp.task_id
        example = sample.head(3).to_csv(index=False, lineterminator="\n", float_format="%.6g")
        assert f"```\n{example}```" in text
        assert f"e.g. `{sample.iloc[0, 0]}`" in submission
        assert ID_SCHEMES[bp.dna.id_scheme] in submission
        assert f"{len(sample)}" in submission
        if bp.dna.modality == "tabular":
            feature = bp.domain.feature_columns[0]
            assert re.search(rf"`{feature}`.*(reading|code)", text), bp.task_id
        assert not description_leaks(
            text, task.rule.model_dump(), writer.public_names(bp, task, sample)
        )


def section_with(markdown: str, marker: str) -> str:
    return next(s for s in markdown.split("\n## ") if marker in s)


def test_descriptions_match_the_files_and_are_deterministic(pack, tmp_path: Path):
    backend = get_backend("procedural")
    for bp, task, sample in pack[: len(PACK_SEEDS)]:
        root = tmp_path / bp.task_id
        write_prepared(root, bp, task, backend)
        public = root / "prepared/public"
        assert description_mismatches(public) == [], bp.task_id
        again = writer.write_description(bp, task, sample).markdown
        assert (public / "description.md").read_text(encoding="utf-8") == again


RULE = {
    "kind": "text-count",
    "summary": "each class's 3 keywords appear Poisson(1.7) times when true",
    "params": {
        "structure": {
            "mode": "count",
            "keywords": [["lamp", "ocean", "pear"], ["violin", "tiger", "mask"]],
            "partners": [],
            "shapes": [],
        }
    },
}
AUDIO_RULE = {
    "kind": "audio",
    "summary": "x",
    "params": {"structure": {"calls": [{"pattern": "chord"}]}},
}
IMAGE_RULE = {"kind": "shape-class", "summary": "x", "params": {"structure": {"shapes": ["ring"]}}}


@pytest.mark.parametrize(
    ("markdown", "rule", "reason"),
    [
        ("Documents mentioning `lamp` are in class a.", RULE, "keyword"),
        ("Look for lamp and pear in the text.", RULE, "keyword"),
        ("The label depends on a hidden rule.", RULE, "rule term"),
        ("Each class's 3 keywords appear Poisson(1.7) times when true.", RULE, "summary"),
        ("Positive tiles show a ring.", IMAGE_RULE, "shape"),
        ("A chord marks the positive clips.", AUDIO_RULE, "call pattern"),
        ("Targets combine an interaction of two columns.", RULE, "rule term"),
    ],
)
def test_description_leaks_are_flagged(markdown: str, rule: dict, reason: str):
    assert any(reason in r for r in description_leaks(markdown, rule, set()))


def test_public_names_and_lone_common_words_are_not_leaks():
    text = "A ring_cell tile; one lamp on the desk. Columns: `ring`."
    assert description_leaks(text, RULE, set()) == []
    assert description_leaks(text, IMAGE_RULE, {"ring"}) == []


def test_ranking_descriptions_say_what_a_cell_holds_and_how_map_at_k_scores():
    seed = next(s for s in SEEDS.values() if s.metric.startswith("map_at_"))
    bp = plan(TaskRequest(index=0, dna=seed, entropy=[5, 0, 0]))
    k = int(seed.metric.rsplit("_", 1)[1])
    sample = pd.DataFrame({bp.domain.id_column: ["a1"], "items": ["x1 x2"]})
    facts = draft.Facts.of(bp, sample)
    assert facts.value_kind == f"up to {k} item ids separated by single spaces, most likely first"
    assert f"MAP@{k}" in facts.metric_text and "averaged over rows" in facts.metric_text
