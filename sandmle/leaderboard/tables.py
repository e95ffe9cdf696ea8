"""The leaderboard's tables, pooled from the sample frame, with the intervals of ``stats``.

Logs sharing model, scaffold, benchmark and run are pooled over their epochs (runs are pooled
only on request: ``logs.pool_runs``); each
sample-epoch is one observation and a rate is the mean of its 0/1 flag in percent, with a
Wilson interval clustered by competition (``stats.rate``). HumanRank is averaged over the
samples that have one. ``rank`` is 1 + the entrants of the same benchmark significantly
better on any-medal (paired over shared competitions), so ties share a rank.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sandmle.harness.scorer import FLAGS
from sandmle.leaderboard import stats
from sandmle.leaderboard.logs import RUN_KEY, entrant_labels

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
RANK_METRIC = "any_medal"
COUNT_COLUMNS = [
    "n", "logs", "competitions", "epochs", "checkpoint_step", "checkpoint_label", "last_run",
]  # fmt: skip
TABLE_COLUMNS = [
    *RUN_KEY,
    "rank",
    *(c for m in METRICS for c in (m, f"{m}_low", f"{m}_high", f"{m}_text")),
    *COUNT_COLUMNS,
]
COMPACT = ("any_medal", "valid_submission", "above_median")
"""The metrics of the default (compact) table."""


def _metric_cells(values: np.ndarray, clusters: np.ndarray, metric: str) -> dict[str, object]:
    if metric in RATES:
        r = stats.rate(values, clusters)
        value, low, high = (100 * x for x in (r.value, r.low, r.high))
        text = stats.format_rate(r)
    else:
        value, low, high = stats.mean_interval(values)
        text = stats.format_mean(value, low, high, int((~np.isnan(values)).sum()))
    return {metric: value, f"{metric}_low": low, f"{metric}_high": high, f"{metric}_text": text}


def _pooled(group: pd.DataFrame) -> dict[str, object]:
    # numpy arrays, not pandas calls: this runs once per entrant (hundreds for 1,000 logs)
    competitions = group["_competition"].to_numpy()  # integer codes (leaderboard_table)
    row: dict[str, object] = {}
    for metric in METRICS:
        values = group[metric].to_numpy(dtype=float, na_value=np.nan)
        row |= _metric_cells(values, competitions, metric)
    counts = np.bincount(competitions)
    counts = counts[counts > 0]
    row["n"] = len(group)
    row["logs"] = len(np.unique(group["_log"].to_numpy()))
    row["competitions"] = len(counts)
    row["epochs"] = int(counts.max())
    steps = {s for s in group["checkpoint_step"].tolist() if s == s}  # s == s: not NaN
    row["checkpoint_step"] = steps.pop() if len(steps) == 1 else np.nan
    labels = {x for x in group.get("checkpoint_label", pd.Series(dtype=object)).tolist()
              if x is not None and x == x}  # fmt: skip
    row["checkpoint_label"] = labels.pop() if len(labels) == 1 else None  # base / SFT / GRPO N
    row["last_run"] = group["created"].max()
    if "entrant" in group.columns:
        row["entrant"] = group["entrant"].iloc[0]
    return row


def _rank_within(samples: pd.DataFrame, keys: list[str], table: pd.DataFrame) -> pd.Series:
    """Each row's rank among the rows of its benchmark (all rows when there is no benchmark)."""
    scope = ["benchmark"] if "benchmark" in keys else []
    means = samples.groupby([*keys, "competition_id"], sort=False, dropna=False)[RANK_METRIC]
    wide = means.mean().unstack("competition_id")  # entrant x competition
    labels = pd.Series("", index=table.index, dtype=object)
    for _, rows in table.groupby(scope, sort=False) if scope else [(None, table)]:
        series = {i: _entrant_row(wide, keys, table.loc[i]) for i in rows.index}
        for i, label in stats.rank_labels(stats.ranks(series)).items():
            labels[i] = label
    return labels


def _entrant_row(wide: pd.DataFrame, keys: list[str], row: pd.Series) -> pd.Series:
    key = tuple(row[k] for k in keys)
    return wide.loc[key if len(keys) > 1 else key[0]].dropna()


def _rank_number(label: str) -> int:
    return int(label.rstrip("=")) if label else 0


def leaderboard_table(samples: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """One row per model x scaffold x benchmark x run (or ``by``), ranked by any-medal."""
    keys = by or RUN_KEY
    if "run" in keys and "run" not in samples.columns:  # a frame not read from logs: one run
        samples = samples.assign(run="")
    columns = [*keys, *(c for c in TABLE_COLUMNS[len(RUN_KEY) :] if c not in keys)]
    if by is None and "entrant" in samples.columns:
        columns.append("entrant")
    if samples.empty:
        return pd.DataFrame(columns=columns)
    coded = samples.assign(  # integer codes: per-entrant counting on text columns is slow
        _competition=pd.factorize(samples["competition_id"])[0],
        _log=pd.factorize(samples["log"])[0],
    )
    rows = [
        {**dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True)), **_pooled(g)}
        for key, g in coded.groupby(keys, sort=False, dropna=False)
    ]
    table = pd.DataFrame(rows)
    table["rank"] = _rank_within(samples, keys, table)
    table = table[columns].assign(_rank=table["rank"].map(_rank_number))
    scope = ["benchmark"] if "benchmark" in keys else []
    order = [*scope, "_rank", "any_medal", "gold_medal", "above_median", "valid_submission"]
    ascending = [*(True for _ in scope), True, False, False, False, False]
    table = table.sort_values(order, ascending=ascending, kind="stable", na_position="last")
    return table.drop(columns="_rank").reset_index(drop=True)


PAIRS_NOTE = (
    f"One test per pair (exact sign-flip test on per-competition means; McNemar's with one "
    f'epoch) gives the verdict and p. "detectable" is the smallest difference any outcome '
    f"at this many shared competitions could show at p < {stats.ALPHA}; below "
    f"{stats.MIN_DECIDABLE} shared competitions none can, so the pair is undecided, not a tie."
)
PAIR_COLUMNS = ["benchmark", "A", "B", "verdict", "A − B", "detectable", "p", "competitions"]
"""``detectable``: the minimal detectable effect at that many shared competitions."""


def entrant_names(frame: pd.DataFrame) -> pd.Series:
    """``model · scaffold`` (`` · run R`` when it ran more than once), as named at load."""
    if "entrant" in frame.columns and frame["entrant"].notna().all():
        return frame["entrant"]
    return (
        entrant_labels(frame)
        if "run" in frame.columns
        else frame["model"] + " · " + frame["scaffold"]
    )


def pairwise_table(
    samples: pd.DataFrame,
    metric: str = RANK_METRIC,
    adjacent: bool = False,
    order: list[str] | None = None,
) -> pd.DataFrame:
    """Pairs of entrants (model · scaffold) of each benchmark, compared on shared competitions.

    Entrants come in ``order`` (the leaderboard's, so pairs read as the table does; default:
    by mean ``metric``, best first). Every pair, or with ``adjacent`` each entrant against the
    next one down (one row per entrant: the size of the summary). One method gives the
    verdict, the p-value and the detectable effect (``stats.compare``), so they cannot disagree.
    """
    rows = []
    for benchmark, part in samples.groupby("benchmark", sort=True):
        entrants = part.assign(entrant=entrant_names(part))
        series = {
            str(name): stats.per_competition(g, metric)  # entrant names are text
            for name, g in entrants.groupby("entrant", sort=True)
        }
        names = _ordered(series, order)
        for a, b in zip(names, names[1:], strict=False) if adjacent else _pairs(names):
            rows.append([benchmark, a, b, *pair_cells(stats.compare(series[a], series[b]), a, b,
                         100.0 if metric in RATES else 1.0)])  # fmt: skip
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


COMPARED = 6
"""Entrants compared by default (app) and in the export: the best ranked."""


def default_pairs(table: pd.DataFrame, samples: pd.DataFrame) -> pd.DataFrame:
    """Every pair of the ``COMPARED`` best-ranked entrants: the app's default and the export's.

    One function for both, so the two show the same table.
    """
    entrants = list(dict.fromkeys(entrant_names(table)))
    return compared_pairs(samples, entrants[:COMPARED], entrants)


def compared_pairs(samples: pd.DataFrame, chosen: list[str], order: list[str]) -> pd.DataFrame:
    """Pairs of the ``chosen`` entrants in leaderboard ``order``; no benchmark column for one."""
    pairs = pairwise_table(samples[entrant_names(samples).isin(chosen)], order=order)
    return pairs.drop(columns="benchmark") if pairs["benchmark"].nunique() == 1 else pairs


def _ordered(series: dict[str, pd.Series], order: list[str] | None) -> list[str]:
    rank = {name: i for i, name in enumerate(order or [])}
    return sorted(series, key=lambda n: (rank.get(n, len(rank)), -float(series[n].mean()), n))


def pair_cells(c: stats.Comparison, a: str, b: str, scale: float) -> list[object]:
    verdict = {"A better": f"{a} better", "B better": f"{b} better"}.get(c.label, c.label)
    unit, digits = (" pts", 0) if scale == 100.0 else ("", 2)  # rate points, or HumanRank
    diff = "—" if np.isnan(c.diff) else f"{scale * c.diff:+.{digits}f}{unit}"
    detectable = "—" if np.isnan(c.detectable) else f"≥ {scale * c.detectable:.{digits}f}{unit}"
    p_value = "—" if c.pairs == 0 else f"{c.p_value:.3f}"
    return [verdict, diff, detectable, p_value, c.pairs]


GRID_COLUMNS = ["model", "scaffold", "competition", "epoch", "status", "score", "medal",
                "invalid reason", "duration s", "tokens"]  # fmt: skip
"""The sample grid's columns (app drill-down and export)."""


def _status(samples: pd.DataFrame) -> np.ndarray:
    scored = samples["scored"].astype(bool)
    medal, valid = samples["any_medal"] > 0, samples["valid_submission"] > 0
    return np.select([~scored, medal, valid], ["error", "medal", "valid"], "invalid")


def _medal(samples: pd.DataFrame) -> np.ndarray:
    flags = ("gold_medal", "silver_medal", "bronze_medal")
    return np.select([samples[f] > 0 for f in flags], [f.removesuffix("_medal") for f in flags], "")


def sample_grid(samples: pd.DataFrame) -> pd.DataFrame:
    """One readable row per sample-epoch, indexed like ``samples``."""
    return pd.DataFrame(
        {
            "model": samples["model"],
            "scaffold": samples["scaffold"],
            "competition": samples["competition_id"],
            "epoch": samples["epoch"],
            "status": _status(samples),
            "score": samples["score"],
            "medal": _medal(samples),
            "invalid reason": samples["invalid_reason"].fillna(""),
            "duration s": samples["total_time"].round(1),
            "tokens": samples["tokens"],
        },
        index=samples.index,
    )


def _pairs(names: list[str]) -> list[tuple[str, str]]:
    return [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]


def filter_samples(
    samples: pd.DataFrame,
    *,
    models: list[str] | None = None,
    scaffolds: list[str] | None = None,
    benchmarks: list[str] | None = None,
    runs: list[str] | None = None,
    since: pd.Timestamp | None = None,
    until: pd.Timestamp | None = None,
) -> pd.DataFrame:
    """Samples of the chosen models, scaffolds, benchmarks and runs, run within the dates."""
    mask = pd.Series(True, index=samples.index)
    chosen_by = {"model": models, "scaffold": scaffolds, "benchmark": benchmarks, "run": runs}
    for column, chosen in chosen_by.items():
        if chosen:
            mask &= samples[column].isin(chosen)
    if since is not None:
        mask &= samples["created"] >= since
    if until is not None:
        mask &= samples["created"] <= until
    return samples[mask]


def generalization_table(
    table: pd.DataFrame, metric: str = RANK_METRIC, samples: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Each model's best scaffold, spread across scaffolds, and drop from its best per scaffold.

    ``table`` is a leaderboard table of one benchmark. The best scaffold is named only when it
    is significantly better than every other scaffold of that model (paired test on
    ``samples``; without samples, only when its value is strictly the highest); otherwise the
    cell reads ``≈ tie: ...`` with the scaffolds that share the top (``too few (2 < 6): ...``
    when the model ran too few competitions for any test to decide). HumanRank is a position
    score (the higher, the more humans beaten), so higher is better for every metric.
    """
    if table.empty:
        return pd.DataFrame(columns=["model", "best scaffold", "best", "worst", "spread"])
    wide = table.pivot_table(index="model", columns="scaffold", values=metric, aggfunc="mean")
    means: dict[tuple, pd.Series] | None = None
    if samples is not None and metric != "human_rank":  # per (model, scaffold), once
        cells = samples.groupby(["model", "scaffold", "competition_id"])[metric].mean()
        means = {k: part.droplevel([0, 1]) for k, part in cells.groupby(level=[0, 1])}  # type: ignore[misc]
    best = {model: _best_scaffold(wide.loc[model], metric, means, model) for model in wide.index}
    summary = pd.DataFrame(
        {
            "best scaffold": pd.Series(best),
            "best": wide.max(axis=1),
            "worst": wide.min(axis=1),
            "spread": wide.max(axis=1) - wide.min(axis=1),
        }
    )
    drops = wide.rsub(wide.max(axis=1), axis=0).add_prefix("drop: ")
    result = summary.join(drops).rename_axis("model").reset_index()
    return result.sort_values("best", ascending=False, kind="stable").reset_index(drop=True)


def _best_scaffold(
    values: pd.Series, metric: str, means: dict[tuple, pd.Series] | None, model: str
) -> str:
    """``means``: per (model, scaffold), the mean ``metric`` per competition."""
    values = values.dropna()
    if means is not None:
        empty = pd.Series(dtype=float)
        series = {name: means.get((model, name), empty) for name in values.index}
        ranked = stats.ranks(series)
        top = sorted(name for name, r in ranked.items() if r == 1)
        shared = max((len(s) for s in series.values()), default=0)
    else:
        top = sorted(values.index[values == values.max()])
        shared = stats.MIN_DECIDABLE
    if len(top) == 1:
        return str(top[0])
    why = (
        stats.TIE
        if shared >= stats.MIN_DECIDABLE
        else f"too few ({shared} < {stats.MIN_DECIDABLE})"
    )
    return f"{why}: {', '.join(map(str, top))}"


def competition_table(samples: pd.DataFrame, metric: str = "any_medal") -> pd.DataFrame:
    """Rate of ``metric`` (%) for each model+scaffold (rows) on each competition (columns)."""
    if samples.empty:
        return pd.DataFrame()
    entrant = entrant_names(samples)
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


def _step(value: float) -> str:  # a checkpoint step, or NaN (none, or several pooled)
    return "" if pd.isna(value) else str(int(value))


def display_table(table: pd.DataFrame) -> pd.DataFrame:
    """The full table as people read it: ``25% [7–59] 2/8`` cells and readable headers."""
    keys = [c for c in ("rank", *RUN_KEY, "checkpoint_run") if c in table.columns]
    shown = table[keys].copy()
    for metric in METRICS:
        shown[LABELS[metric]] = table[f"{metric}_text"]
    for column in ("n", "logs", "competitions", "epochs"):
        shown[column] = table[column]
    shown["step"] = table["checkpoint_step"].map(_step)
    shown["last run"] = table["last_run"].map(lambda t: "" if pd.isna(t) else f"{t:%Y-%m-%d %H:%M}")
    return shown


def compact_table(table: pd.DataFrame) -> pd.DataFrame:
    """The default view: rank, model, scaffold (benchmark when several, run when one model and
    scaffold ran more than once), three rates, and n (left out beside the run: each rate's
    ``k/n`` already says it, and the table fits 1440 px)."""
    keys = ["model", "scaffold"]
    if table["benchmark"].nunique() > 1:
        keys.append("benchmark")
    runs = bool(table.duplicated(["model", "scaffold", "benchmark"]).any())
    if runs:
        keys.append("run")
    shown = table[["rank", *keys]].copy()
    for metric in COMPACT:
        shown[LABELS[metric]] = table[f"{metric}_text"]
    if not runs:
        shown["n"] = table["n"]
    return shown
