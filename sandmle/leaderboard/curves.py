"""Checkpoints of one training run: the curve over steps, and a paired test between two steps.

A curve is one training run under one scaffold on one benchmark (``tables.training_curve_table``
draws it). Two of its checkpoints are compared as two entrants are (``stats.compare`` on the
competitions both ran, the pairs table's cells), so a step that looks better on the curve is
called better only when the paired test says so.
"""

from __future__ import annotations

import pandas as pd

from sandmle.leaderboard import stats
from sandmle.leaderboard.tables import RANK_METRIC, RATES, pair_cells

CURVE_KEY = ["checkpoint_run", "scaffold", "benchmark"]
"""One curve: a training run's checkpoints under one scaffold on one benchmark."""
STEP_COLUMNS = ["training run", "scaffold", "benchmark", "A", "B", "verdict", "A − B",
                "detectable", "p", "competitions"]  # fmt: skip


def curves_with_steps(samples: pd.DataFrame) -> dict[tuple[str, str, str], list[int]]:
    """Each curve (``CURVE_KEY``) with at least two checkpoint steps, and its steps in order."""
    checkpoints = samples.dropna(subset=["checkpoint_step"])
    found: dict[tuple[str, str, str], list[int]] = {}
    for key, rows in checkpoints.groupby(CURVE_KEY, sort=True):
        steps = sorted({int(s) for s in rows["checkpoint_step"]})
        if len(steps) >= 2:
            found[(str(key[0]), str(key[1]), str(key[2]))] = steps
    return found


def step_name(step: int) -> str:
    return f"step {step}"


def compare_steps(
    samples: pd.DataFrame,
    curve: tuple[str, str, str],
    step_a: int,
    step_b: int,
    metric: str = RANK_METRIC,
) -> pd.DataFrame:
    """One row: checkpoint ``step_a`` against ``step_b`` of ``curve``, paired by competition."""
    run, scaffold, benchmark = curve
    rows = samples[
        (samples["checkpoint_run"] == run)
        & (samples["scaffold"] == scaffold)
        & (samples["benchmark"] == benchmark)
    ]
    series = {
        step: stats.per_competition(rows[rows["checkpoint_step"] == step], metric)
        for step in (step_a, step_b)
    }
    comparison = stats.compare(series[step_a], series[step_b])
    a, b = step_name(step_a), step_name(step_b)
    scale = 100.0 if metric in RATES else 1.0
    cells = [run, scaffold, benchmark, a, b, *pair_cells(comparison, a, b, scale)]
    return pd.DataFrame([cells], columns=STEP_COLUMNS)


def first_against_last(samples: pd.DataFrame, metric: str = RANK_METRIC) -> pd.DataFrame:
    """Every curve's last checkpoint against its first: the app's default choice, the export's."""
    rows = [
        compare_steps(samples, curve, steps[-1], steps[0], metric)
        for curve, steps in curves_with_steps(samples).items()
    ]
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=STEP_COLUMNS)
