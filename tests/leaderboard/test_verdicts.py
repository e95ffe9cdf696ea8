"""Model-level verdicts on frames whose answers are known by construction."""

from __future__ import annotations

import pandas as pd
import pytest

from sandmle.harness.scorer import FLAGS
from sandmle.leaderboard import verdicts

COMPETITIONS = [f"c{i}" for i in range(10)]


def _frame(medals: dict[tuple[str, str], list[int]]) -> pd.DataFrame:
    """Sample rows: (model, scaffold) -> any_medal per competition, one epoch."""
    rows = []
    for (model, scaffold), flags in medals.items():
        for competition, flag in zip(COMPETITIONS, flags, strict=True):
            rows.append(
                {
                    "model": model,
                    "scaffold": scaffold,
                    "benchmark": "b",
                    "run": "r",
                    "competition_id": competition,
                    **dict.fromkeys(FLAGS, float(flag)),
                }
            )
    return pd.DataFrame(rows)  # fmt: skip


ALL, NONE, HALF = [1] * 10, [0] * 10, [1, 0] * 5


@pytest.fixture
def samples() -> pd.DataFrame:
    # good sweeps bad under s1 and s2; under s3 (two competitions only) nothing can decide;
    # mid ties good under s2 and sits between them under s1
    three = {("good", "s3"): ALL[:2] + [0] * 8, ("bad", "s3"): [0] * 10}
    frame = _frame(
        {
            ("good", "s1"): ALL,
            ("good", "s2"): ALL,
            ("mid", "s1"): HALF,
            ("mid", "s2"): ALL,
            ("bad", "s1"): NONE,
            ("bad", "s2"): NONE,
            **three,
        }
    )
    keep = (frame["scaffold"] != "s3") | frame["competition_id"].isin(["c0", "c1"])
    return frame[keep]  # fmt: skip


def test_pooled_model_rank_with_intervals(samples: pd.DataFrame) -> None:
    table = verdicts.model_rank(samples).set_index("model")
    assert list(table.index) == ["good", "mid", "bad"]
    assert list(table["rank"]) == [1, 2, 3]
    assert table.loc["good", "score"] == 100.0 and table.loc["bad", "score"] == 0.0
    assert table.loc["good", "rank 95% CI"] == "1" and table.loc["bad", "rank 95% CI"] == "3"
    assert table.loc["good", "scaffolds"] == 3 and table.loc["good", "competitions"] == 10
    # mid's pooled cells are 1 or 0.5 (mean over s1 and s2): its interval spans 50–100
    low, high = map(float, table.loc["mid", "score 95% CI"].split("–"))
    assert 50 <= low < 75 < high <= 100


def test_cross_scaffold_table_says_where_each_gap_holds(samples: pd.DataFrame) -> None:
    table = verdicts.cross_scaffold_table(samples).set_index(["A", "B"])
    good_bad = table.loc[("good", "bad")]
    assert good_bad["holds under"] == "s1 (A), s2 (A)"
    # 10 discordant competitions all one way: McNemar's exact p = 2 * 0.5**10 = 0.00195; Holm
    # multiplies the smallest of the table's 7 tests by 7
    assert good_bad["s1"].startswith("+100 pts, p 0.014 (raw 0.002) ✓")
    assert good_bad["s3"] == "+100 pts, too few (2 < 6)"
    good_mid = table.loc[("good", "mid")]
    assert good_mid["holds under"] == "none" and good_mid["s2"].startswith("+0 pts, p 1.000")
    assert good_mid["s3"] == "—"  # mid never ran s3


def test_holm_adjusts_step_down() -> None:
    # Holm (1979): sorted p times (m - i), made monotone
    assert verdicts.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert verdicts.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_win_rates_are_complementary(samples: pd.DataFrame) -> None:
    wins = verdicts.win_rates(samples)
    assert wins.loc["good", "bad"] == 100.0 and wins.loc["bad", "good"] == 0.0
    # good vs mid: s1 wins 5, draws 5; s2 draws 10 -> (5 + 7.5) / 20
    assert wins.loc["good", "mid"] == pytest.approx(62.5)
    assert wins.loc["good", "mid"] + wins.loc["mid", "good"] == pytest.approx(100.0)
    assert pd.isna(wins.loc["good", "good"])
