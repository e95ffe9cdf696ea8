"""What a study or the demo leaves behind: a terminal table, the HTML export, the spread table."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from rich import box
from rich.console import Console
from rich.table import Table

from sandmle.leaderboard.export import export_html
from sandmle.leaderboard.logs import load_logs
from sandmle.leaderboard.stats import TIE
from sandmle.leaderboard.tables import generalization_table, leaderboard_table

COLUMNS = [
    ("any_medal", "medal"),
    ("valid_submission", "valid"),
    ("above_median", ">median"),
]
CAPTION = (
    "% with 95% Wilson interval and k/n sample-epochs; rank 1= etc.: tied with the others "
    "of that rank (paired test on shared competitions)"
)
WIDE = 140
"""From this console width on, the full table; below (80 columns without a terminal), the
narrow one: models by letter with a legend, intervals without k/n (n has its own column)."""
FLOOR_NOTE = (
    "The sample submission is a floor only where a scaffold hands it in: ReAct copies it (100% "
    "valid), the tree scaffolds hand in a node's submission only when some node is good, so "
    "under them a policy that writes no working code hands in nothing (0% valid)."
)


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def _short_rate(row: pd.Series, key: str) -> str:
    value, low, high = (row[f"{key}{s}"] for s in ("", "_low", "_high"))
    if pd.isna(value):
        return "—"
    return f"{value:.0f} [{low:.0f}–{high:.0f}]"


def model_legend(table: pd.DataFrame) -> dict[str, str]:
    """A letter per model, in the table's order (A = the first model listed)."""
    models = list(dict.fromkeys(table["model"]))
    return {m: chr(ord("A") + i) if i < 26 else f"M{i}" for i, m in enumerate(models)}


def narrow_table(table: pd.DataFrame, title: str) -> Table:
    """The leaderboard in 80 columns: rank, model letter · scaffold, rates in %, n, a legend."""
    legend = model_legend(table)
    keys = ["benchmark"] if table["benchmark"].nunique() > 1 else []
    if not keys and not table.empty:
        title = f"{title}: {table['benchmark'].iloc[0]}"
    caption = "  ".join(f"{letter} = {model}" for model, letter in legend.items())
    caption += (
        f"\n% [95% Wilson interval] of n sample-epochs. Rank 1= etc.: tied with the others of "
        f"that rank (paired test on shared competitions).\n{FLOOR_NOTE}"
    )
    out = Table(title=title, caption=caption, box=box.SIMPLE_HEAD, pad_edge=False,
                caption_justify="left")  # fmt: skip
    out.add_column("rank", no_wrap=True)
    out.add_column("entrant", no_wrap=True)
    for key in keys:
        out.add_column(key, overflow="fold")
    for _, label in COLUMNS:
        out.add_column(f"{label} %", justify="right", no_wrap=True)
    out.add_column("n", justify="right", no_wrap=True)
    for _, row in table.iterrows():
        cells = [str(row["rank"]), f"{legend[row['model']]} · {row['scaffold']}"]
        cells += [str(row[key]) for key in keys]
        cells += [_short_rate(row, key) for key, _ in COLUMNS]
        out.add_row(*cells, _cell(row.get("n")))
    return out


def rich_table(table: pd.DataFrame, title: str) -> Table:
    """The leaderboard as a rich table: rank, entrant, rates with intervals, n."""
    keys = ["model", "scaffold"]
    if table["benchmark"].nunique() > 1:  # one benchmark: named in the title instead
        keys.append("benchmark")
    elif not table.empty:
        title = f"{title}: {table['benchmark'].iloc[0]}"
    out = Table(title=title, caption=CAPTION, show_lines=False)
    out.add_column("rank", no_wrap=True)
    for key in keys:
        out.add_column(key, no_wrap=True)
    for _, label in COLUMNS:
        out.add_column(label, justify="right", no_wrap=True)
    out.add_column("n", justify="right")
    for _, row in table.iterrows():
        cells = [str(row["rank"]), *(str(row[key]) for key in keys)]
        cells += [str(row[f"{key}_text"]) for key, _ in COLUMNS]
        cells.append(_cell(row.get("n")))
        out.add_row(*cells)
    return out


def spread_table(
    table: pd.DataFrame, samples: pd.DataFrame, legend: dict[str, str] | None = None
) -> Table:
    """Each model's spread across scaffolds, per benchmark; no best scaffold among ties.

    With a ``legend`` (the narrow layout) models are named by their letter.
    """
    out = Table(title=f"cross-scaffold spread (any medal %; {TIE}: not distinguishable)")
    for name in ("benchmark", "model", "best scaffold", "best", "worst", "spread"):
        out.add_column(name, overflow="fold")
    for benchmark, part in table.groupby("benchmark", sort=True):
        mine = samples[samples["benchmark"] == benchmark]
        for _, row in generalization_table(part, "any_medal", mine).iterrows():
            out.add_row(
                str(benchmark),
                (legend or {}).get(str(row["model"]), str(row["model"])),
                str(row["best scaffold"]),
                _cell(row["best"]),
                _cell(row["worst"]),
                _cell(row["spread"]),
            )
    return out


def write_report(log_dir: Path, console: Console | None = None) -> Path:
    """Print the leaderboard and spread tables; write ``report.html`` beside the logs."""
    console = console or Console()
    loaded = load_logs([log_dir])
    table = leaderboard_table(loaded.samples)
    narrow = console.width < WIDE
    title = f"leaderboard ({log_dir})"
    console.print(narrow_table(table, title) if narrow else rich_table(table, title))
    if not table.empty:
        legend = model_legend(table) if narrow else None
        console.print(spread_table(table, loaded.samples, legend))
    return export_html([log_dir], log_dir / "report.html")
