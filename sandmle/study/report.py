"""What a study or the demo leaves behind: a terminal table, the HTML export, the spread table."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
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


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.1f}" if isinstance(value, float) else str(value)


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


def spread_table(table: pd.DataFrame, samples: pd.DataFrame) -> Table:
    """Each model's spread across scaffolds, per benchmark; no best scaffold among ties."""
    out = Table(title=f"cross-scaffold spread (any medal %; {TIE}: not distinguishable)")
    for name in ("benchmark", "model", "best scaffold", "best", "worst", "spread"):
        out.add_column(name)
    for benchmark, part in table.groupby("benchmark", sort=True):
        mine = samples[samples["benchmark"] == benchmark]
        for _, row in generalization_table(part, "any_medal", mine).iterrows():
            out.add_row(
                str(benchmark),
                str(row["model"]),
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
    console.print(rich_table(table, f"leaderboard ({log_dir})"))
    if not table.empty:
        console.print(spread_table(table, loaded.samples))
    return export_html([log_dir], log_dir / "report.html")
