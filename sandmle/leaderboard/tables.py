"""The leaderboard's tables, pooled from the sample frame.

Runs sharing model, scaffold and benchmark are pooled over all their logs and epochs: each
sample-epoch is one observation, a rate is the mean of its 0/1 flag in percent, and its
standard error is ``sd / sqrt(n)`` (0 for a single observation). HumanRank is averaged
over the samples that have one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sandmle.harness.scorer import FLAGS
from sandmle.leaderboard.logs import RUN_KEY

RATES = FLAGS
"""The 0/1 flags shown as percentages."""
METRICS = ("any_medal", "gold_medal", "silver_medal", "bronze_medal", "above_median",
           "valid_submission", "human_rank")  # fmt: skip
"""In the order the table shows them: the ranking metric first."""
LABELS = {
    "valid_submission": "Valid %",
    "above_median": "Above median %",
    "bronze_medal": "Bronze %",
    "silver_medal": "Silver %",
    "gold_medal": "Gold %",
    "any_medal": "Any medal %",
    "human_rank": "HumanRank",
}
COUNT_COLUMNS = ["n", "logs", "competitions", "checkpoint_step", "last_run"]
TABLE_COLUMNS = [
    *RUN_KEY,
    *(c for m in METRICS for c in (m, f"{m}_stderr")),
    *COUNT_COLUMNS,
]


def _stderr(values: pd.Series) -> float:
    values = values.dropna()
    return float(values.std(ddof=1) / np.sqrt(len(values))) if len(values) > 1 else 0.0


def _pooled(group: pd.DataFrame) -> dict[str, float]:
    row: dict[str, float] = {}
    for metric in METRICS:
        scale = 100.0 if metric in RATES else 1.0
        values = group[metric].astype(float)
        row[metric] = float(values.mean()) * scale if values.notna().any() else np.nan
        row[f"{metric}_stderr"] = _stderr(values) * scale
    row["n"] = len(group)
    row["logs"] = group["log"].nunique()
    row["competitions"] = group["competition_id"].nunique()
    steps = group["checkpoint_step"].dropna()
    row["checkpoint_step"] = steps.iloc[0] if steps.nunique() == 1 else np.nan
    row["last_run"] = group["created"].max()
    return row


def leaderboard_table(samples: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """One row per model x scaffold x benchmark (or ``by``), ranked by any-medal %."""
    keys = by or RUN_KEY
    columns = [*keys, *(c for c in TABLE_COLUMNS[len(RUN_KEY) :] if c not in keys)]
    if samples.empty:
        return pd.DataFrame(columns=columns)
    rows = [
        {**dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True)), **_pooled(g)}
        for key, g in samples.groupby(keys, sort=False, dropna=False)
    ]
    table = pd.DataFrame(rows)[columns]
    order = ["any_medal", "gold_medal", "above_median", "valid_submission"]
    table = table.sort_values(order, ascending=False, kind="stable", na_position="last")
    return table.reset_index(drop=True)


def filter_samples(
    samples: pd.DataFrame,
    *,
    models: list[str] | None = None,
    scaffolds: list[str] | None = None,
    benchmarks: list[str] | None = None,
    since: pd.Timestamp | None = None,
    until: pd.Timestamp | None = None,
) -> pd.DataFrame:
    """Samples of the chosen models, scaffolds and benchmarks, run within the dates."""
    mask = pd.Series(True, index=samples.index)
    for column, chosen in (("model", models), ("scaffold", scaffolds), ("benchmark", benchmarks)):
        if chosen:
            mask &= samples[column].isin(chosen)
    if since is not None:
        mask &= samples["created"] >= since
    if until is not None:
        mask &= samples["created"] <= until
    return samples[mask]


def generalization_table(table: pd.DataFrame, metric: str = "any_medal") -> pd.DataFrame:
    """Each model's best scaffold, spread across scaffolds, and drop from its best per scaffold.

    ``table`` is a leaderboard table of one benchmark. HumanRank is a position score (the
    higher, the more humans beaten), so higher is better for every metric.
    """
    if table.empty:
        return pd.DataFrame(columns=["model", "best_scaffold", "best", "worst", "spread"])
    wide = table.pivot_table(index="model", columns="scaffold", values=metric, aggfunc="mean")
    summary = pd.DataFrame(
        {
            "best_scaffold": wide.idxmax(axis=1),
            "best": wide.max(axis=1),
            "worst": wide.min(axis=1),
            "spread": wide.max(axis=1) - wide.min(axis=1),
        }
    )
    drops = wide.rsub(wide.max(axis=1), axis=0).add_prefix("drop: ")
    result = summary.join(drops).reset_index()
    return result.sort_values("best", ascending=False, kind="stable").reset_index(drop=True)


def competition_table(samples: pd.DataFrame, metric: str = "any_medal") -> pd.DataFrame:
    """Rate of ``metric`` (%) for each model+scaffold (rows) on each competition (columns)."""
    if samples.empty:
        return pd.DataFrame()
    entrant = samples["model"] + " · " + samples["scaffold"]
    scale = 100.0 if metric in RATES else 1.0
    wide = (samples.assign(entrant=entrant)).pivot_table(
        index="entrant", columns="competition_id", values=metric, aggfunc="mean"
    )
    return wide * scale


def training_curve_table(samples: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard pooled per training run, scaffold, benchmark and step (checkpoints only)."""
    checkpoints = samples.dropna(subset=["checkpoint_step"])
    by = ["checkpoint_run", "scaffold", "benchmark", "checkpoint_step"]
    table = leaderboard_table(checkpoints, by=by)
    return table.sort_values(by).reset_index(drop=True) if not table.empty else table


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """The table as people read it: ``12.5 ± 3.1`` cells and readable headers."""
    shown = table[[*RUN_KEY]].copy()
    for metric in METRICS:
        digits = 1 if metric in RATES else 3
        shown[LABELS[metric]] = [
            "–" if pd.isna(v) else f"{v:.{digits}f} ± {s:.{digits}f}"
            for v, s in zip(table[metric], table[f"{metric}_stderr"], strict=True)
        ]
    for column in ("n", "logs", "competitions"):
        shown[column] = table[column]
    shown["step"] = table["checkpoint_step"].map(lambda s: "" if pd.isna(s) else str(int(s)))
    return shown
