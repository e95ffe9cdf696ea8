"""What a generated pack holds: distinct tasks and how hard its medals are, from its own files.

A task is distinct by (rule signature, domain, task type): the same rule form under the same
names for the same kind of target is the same task however its numbers were drawn. Difficulty
is read from each task's ladder (``generation/ladder.json``), in "goodness" (higher is better):

* ``generic_share``: how much of the constant→oracle range the rule-agnostic learner covers
  (its score sets the median); the rest is what a medal asks an agent to find;
* ``gold_share``: the same for the gold threshold (set by the structure-aware learner);
* ``band_sigma``: the width of one medal band in test-noise sds (the gate asks >= 2).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from pydantic import BaseModel

from sandmle.benchmarks.synthetic.planning import rule_signature
from sandmle.benchmarks.synthetic.task_files import GENERATION_DIR, load_blueprint
from sandmle.harness.pack import load_pack


class DifficultyRow(BaseModel):
    """Medians over a group of tasks (one modality, or the whole pack)."""

    group: str
    tasks: int
    generic_share: float
    gold_share: float
    band_sigma: float


class PackSummary(BaseModel):
    tasks: int
    distinct: int
    """Distinct (rule signature, domain, task type) keys."""
    substituted: int
    """Slots written from another seed of their task type."""
    mean_attempts: float | None
    difficulty: list[DifficultyRow]


def summarize_pack(root: Path) -> PackSummary:
    pack = load_pack(root)
    keys, rows = set(), []
    for competition in pack.competitions:
        bp = load_blueprint(competition.root)
        keys.add((rule_signature(bp), bp.domain.slug, bp.dna.task_type))
        rows.append((bp.dna.modality, *_difficulty(competition.root / GENERATION_DIR)))
    groups = sorted({m for m, *_ in rows})
    table = [_row(g, [r[1:] for r in rows if r[0] == g]) for g in groups]
    table.append(_row("all", [r[1:] for r in rows]))
    attempts = [t.attempts for t in pack.manifest.tasks if t.attempts is not None]
    return PackSummary(
        tasks=len(pack),
        distinct=len(keys),
        substituted=sum(t.substitute_for is not None for t in pack.manifest.tasks),
        mean_attempts=round(statistics.mean(attempts), 2) if attempts else None,
        difficulty=table,
    )


def _difficulty(generation: Path) -> tuple[float, float, float]:
    ladder = json.loads((generation / "ladder.json").read_text(encoding="utf-8"))
    milestones = json.loads((generation / "milestones.json").read_text(encoding="utf-8"))
    sign = -1.0 if ladder["is_lower_better"] else 1.0
    g = {k: sign * v["score"] for k, v in ladder["scores"].items() if v["score"] is not None}
    span = g["oracle"] - g["constant"]
    gold = sign * milestones["thresholds"]["gold"]
    share = (lambda v: (v - g["constant"]) / span) if span > 0 else (lambda v: float("nan"))
    return share(g["generic"]), share(gold), min(milestones["bands_in_sigma"])


def _row(group: str, values: list[tuple[float, float, float]]) -> DifficultyRow:
    def median(i: int) -> float:
        return round(statistics.median(v[i] for v in values), 3)

    return DifficultyRow(
        group=group,
        tasks=len(values),
        generic_share=median(0),
        gold_share=median(1),
        band_sigma=median(2),
    )


def summary_lines(summary: PackSummary) -> list[str]:
    """The summary as plain lines (the CLI prints them after a pack is written)."""
    lines = [
        f"distinct tasks (rule signature x domain x task type): {summary.distinct} of "
        f"{summary.tasks}; {summary.substituted} slot(s) from a substitute seed; "
        f"{summary.mean_attempts} attempt(s) per task",
        "difficulty (medians): group, tasks, generic learner's share of constant..oracle, "
        "gold's share, band width in sigma",
    ]
    lines += [
        f"  {r.group:<12} {r.tasks:>5}  generic {r.generic_share:.2f}  gold {r.gold_share:.2f}"
        f"  band {r.band_sigma:.2f} sigma"
        for r in summary.difficulty
    ]
    return lines
