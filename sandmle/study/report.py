"""What a study or the demo leaves behind: a terminal table, the HTML export, the spread table."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.table import Table

from sandmle.leaderboard import export_html, generalization_table, leaderboard_table, load_logs

COLUMNS = [
    ("valid_submission", "valid"),
    ("above_median", ">median"),
    ("any_medal", "medal"),
    ("gold_medal", "gold"),
]


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def rich_table(table: pd.DataFrame, title: str) -> Table:
    """The leaderboard as a rich table (rates in %, n = sample-epochs)."""
    keys = ["model", "scaffold"]
    if table["benchmark"].nunique() > 1:  # one benchmark: named in the title instead
        keys.append("benchmark")
    elif not table.empty:
        title = f"{title}: {table['benchmark'].iloc[0]}"
    out = Table(title=title, caption="rates in % of n samples", show_lines=False)
    for key in keys:
        out.add_column(key, no_wrap=True)
    for _, label in COLUMNS:
        out.add_column(label, justify="right")
    out.add_column("n", justify="right")
    for _, row in table.iterrows():
        cells = [str(row[key]) for key in keys]
        cells += [_cell(row.get(key)) for key, _ in COLUMNS]
        cells.append(_cell(row.get("n")))
        out.add_row(*cells)
    return out


def spread_table(table: pd.DataFrame) -> Table:
    """Each model's spread across scaffolds, per benchmark."""
    out = Table(title="cross-scaffold spread (any medal %)")
    for name in ("benchmark", "model", "best scaffold", "best", "worst", "spread"):
        out.add_column(name)
    for benchmark, part in table.groupby("benchmark", sort=True):
        for _, row in generalization_table(part).iterrows():
            out.add_row(
                str(benchmark),
                str(row["model"]),
                str(row["best_scaffold"]),
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
        console.print(spread_table(table))
    return export_html([log_dir], log_dir / "report.html")
