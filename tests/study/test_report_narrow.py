"""The CLI report without a terminal: every column readable in 80 columns."""

from __future__ import annotations

from io import StringIO

import pandas as pd
from rich.console import Console

from sandmle.harness.scorer import FLAGS
from sandmle.leaderboard.tables import leaderboard_table
from sandmle.study.report import model_legend, narrow_table, spread_table

MODELS = ("sandmle/heuristic", "sandmle/sample-submission")
SCAFFOLDS = ("react", "aira_greedy")


def _samples(n: int = 8) -> pd.DataFrame:
    rows = [
        {
            "model": model, "scaffold": scaffold, "benchmark": "synthetic", "log": "l",
            "competition_id": f"c{i}", "epoch": 1, "checkpoint_step": None,
            "created": pd.Timestamp("2026-01-01", tz="UTC"), "human_rank": float("nan"),
            **dict.fromkeys(FLAGS, float(model == MODELS[0])),
        }
        for model in MODELS for scaffold in SCAFFOLDS for i in range(n)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_narrow_table_fits_80_columns_with_rank_and_legend() -> None:
    samples = _samples()
    table = leaderboard_table(samples)
    buffer = StringIO()
    console = Console(file=buffer, width=80)
    console.print(narrow_table(table, "leaderboard (logs/demo-0.4.0)"))
    console.print(spread_table(table, samples, model_legend(table)))
    text = buffer.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text  # nothing cut
    assert "A = sandmle/heuristic" in text and "B = sandmle/sample-submission" in text
    rows = [line.split() for line in text.splitlines() if " · " in line]
    assert [(r[0], r[1], r[3]) for r in rows] == [
        ("1=", "A", "react"), ("1=", "A", "aira_greedy"),
        ("3=", "B", "react"), ("3=", "B", "aira_greedy"),
    ]  # fmt: skip
    assert "100 [68–100]" in text and "0 [0–32]" in text  # Wilson 8/8 and 0/8, in %
    assert "hands in nothing" in text  # why the floor reads 0% valid under tree scaffolds
