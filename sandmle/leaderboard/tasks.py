"""Per-task and per-entrant views: which tasks separate entrants, and what each entrant cost.

A task's *separation* is the variance across entrants of their mean any-medal on it: 0 when
every entrant scored alike (the task says nothing about who is better), 0.25 at most (half
medal, half do not). A task is *saturated* when every entrant medals, or none does. The
*normalised score* puts a submission's raw score on the task's own medal scale: 0 at the
median threshold, 1 at gold (the sign of ``gold - median`` carries the metric's direction).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sandmle.leaderboard.tables import entrant_names

TASK_COLUMNS = ["benchmark", "competition", "separation", "saturated", "medal %", "valid %",
                "normalised score", "entrants"]  # fmt: skip
COST_COLUMNS = ["entrant", "benchmark", "Any medal %", "tokens in / sample",
                "tokens out / sample", "working s / sample", "wall s / sample", "n"]  # fmt: skip
NA = "n/a"
"""Tokens of a policy that calls no model (offline reference policies)."""


def normalised_score(samples: pd.DataFrame) -> pd.Series:
    """Each sample's score on its task's medal scale (0 = median, 1 = gold); NaN when invalid."""
    span = samples["gold_threshold"].astype(float) - samples["median_threshold"].astype(float)
    value = (samples["score"].astype(float) - samples["median_threshold"].astype(float)) / span
    valid = samples["valid_submission"].astype(float) > 0
    return value.where(valid & np.isfinite(span) & (span != 0))


def _saturated(means: pd.Series) -> str:
    if len(means) < 2:
        return ""
    if (means == 1).all():
        return "all medal"
    return "none medal" if (means == 0).all() else ""


def task_table(samples: pd.DataFrame) -> pd.DataFrame:
    """One row per task, most separating first; saturated tasks flagged."""
    if samples.empty:
        return pd.DataFrame(columns=TASK_COLUMNS)
    frame = samples.assign(entrant=entrant_names(samples), norm=normalised_score(samples))
    rows = []
    for (benchmark, competition), part in frame.groupby(["benchmark", "competition_id"]):
        means = part.groupby("entrant")["any_medal"].mean()
        rows.append([benchmark, competition, float(means.var(ddof=0)), _saturated(means),
                     100 * part["any_medal"].mean(), 100 * part["valid_submission"].mean(),
                     part["norm"].mean(), len(means)])  # fmt: skip
    table = pd.DataFrame(rows, columns=TASK_COLUMNS)
    return table.sort_values(["separation", "competition"], ascending=[False, True]).reset_index(
        drop=True
    )


def _per_sample(total: float, n: int) -> float:
    return total / n if n else float("nan")


def cost_table(samples: pd.DataFrame) -> pd.DataFrame:
    """Per entrant: any-medal beside tokens (in, out), working and wall time per sample-epoch.

    Tokens read ``n/a`` for an entrant with no model usage at all (an offline policy), never 0.
    """
    if samples.empty:
        return pd.DataFrame(columns=COST_COLUMNS)
    frame = samples.assign(entrant=entrant_names(samples))
    rows = []
    for (entrant, benchmark), part in frame.groupby(["entrant", "benchmark"], sort=False):
        n = len(part)
        used = part["tokens"].fillna(0).sum() > 0
        tokens = [
            f"{_per_sample(part[c].fillna(0).sum(), n):,.0f}" if used else NA  # text: one type
            for c in ("input_tokens", "output_tokens")
        ]
        rows.append([entrant, benchmark, 100 * part["any_medal"].mean(), *tokens,
                     part["working_time"].mean(), part["total_time"].mean(), n])  # fmt: skip
    return pd.DataFrame(rows, columns=COST_COLUMNS)
