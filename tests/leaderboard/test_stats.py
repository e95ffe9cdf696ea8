"""The interval and paired-test functions against values worked out by hand or in textbooks."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy.stats import binomtest

from sandmle.leaderboard import stats


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (0, 4, 0.0, 0.4899),  # z^2 / (n + z^2) = 3.8415 / 7.8415
        (4, 4, 0.5101, 1.0),
        (7, 22, 0.1636, 0.5268),
        (81, 263, 0.2553, 0.3662),  # Newcombe (1998), Table I, method 3
    ],
)
def test_wilson_matches_textbook_bounds(k: int, n: int, low: float, high: float) -> None:
    got = stats.wilson(k, n)
    assert got == pytest.approx((low, high), abs=5e-5)


def test_rate_is_independent_without_repeated_competitions() -> None:
    r = stats.rate([1, 0, 0, 0], ["a", "b", "c", "d"])
    assert (r.value, r.n, r.n_eff, r.k) == (0.25, 4, 4.0, 1.0)
    assert (r.low, r.high) == pytest.approx(stats.wilson(1, 4))


def test_rate_clusters_repeated_competitions() -> None:
    # Each competition gives the same result every epoch: 3 competitions, not 9 observations.
    flags = [1, 1, 1, 0, 0, 0, 0, 0, 0]
    r = stats.rate(flags, ["a"] * 3 + ["b"] * 3 + ["c"] * 3)
    assert r.n == 9 and r.n_eff == pytest.approx(3.0)
    assert (r.low, r.high) == pytest.approx(stats.wilson(1, 3))
    # all-zero results: no variance to estimate from, so each competition counts once
    zeros = stats.rate([0] * 8, ["a", "a", "b", "b", "c", "c", "d", "d"])
    assert zeros.n_eff == 4.0 and zeros.high == pytest.approx(stats.wilson(0, 4)[1])


def test_rate_without_data_is_nan_and_formats_as_dash() -> None:
    r = stats.rate([])
    assert r.n == 0 and math.isnan(r.value)
    assert stats.format_rate(r) == "—"
    assert stats.format_rate(stats.rate([0, 0, 0, 0])) == "0% [0–49] 0/4"
    assert stats.format_mean(*stats.mean_interval([]), n=0) == "—"


def test_mean_interval_has_no_interval_without_spread() -> None:
    mean, low, high = stats.mean_interval([0.5, 0.5, 0.5])
    assert mean == 0.5 and math.isnan(low) and math.isnan(high)
    assert stats.format_mean(mean, low, high, 3) == "0.500 n=3"
    mean, low, high = stats.mean_interval([0.2, 0.4, 0.6, 0.8])
    assert (low, high) == pytest.approx((0.5 - 1.96 * 0.2582 / 2, 0.5 + 1.96 * 0.2582 / 2), 1e-3)


@pytest.mark.parametrize(("wins", "losses"), [(10, 2), (3, 0), (5, 5), (7, 1), (0, 6), (12, 30)])
def test_mcnemar_exact_is_the_binomial_test_on_discordant_pairs(wins: int, losses: int) -> None:
    expected = binomtest(wins, wins + losses, 0.5).pvalue
    assert stats.mcnemar_exact_p(wins, losses) == pytest.approx(expected, rel=1e-12)
    diffs = [1.0] * wins + [-1.0] * losses + [0.0] * 4  # concordant pairs do not count
    assert stats.sign_flip_p(diffs) == pytest.approx(expected, rel=1e-12)


def test_sign_flip_enumerates_fractional_differences() -> None:
    # 3 equal differences: 2 of the 8 sign patterns are as extreme as the observed one
    assert stats.sign_flip_p([0.5, 0.5, 0.5]) == pytest.approx(0.25)
    assert stats.sign_flip_p([0.5, -0.5, 0.25, 0.0]) == pytest.approx(1.0)
    assert stats.sign_flip_p([]) == 1.0


def _series(values: list[float]) -> pd.Series:
    return pd.Series(values, index=[f"c{i}" for i in range(len(values))], dtype=float)


def test_identical_entrants_are_a_tie() -> None:
    a = _series([0.0] * 6)
    comparison = stats.compare(a, a.copy())
    assert comparison.label == stats.TIE and comparison.p_value == 1.0
    assert comparison.diff == 0.0 and comparison.pairs == 6


def test_a_clear_difference_is_named_with_its_detectable_effect() -> None:
    a, b = _series([1.0] * 12), _series([0.0] * 12)
    comparison = stats.compare(a, b)
    assert comparison.label == "A better" and comparison.p_value < 0.001
    assert comparison.detectable == pytest.approx(6 / 12)  # 6 of 12 won, none lost


def test_too_few_competitions_is_no_tie() -> None:
    # 5 of 5 won is the best possible outcome at 5 competitions: p = 2 / 2**5 = 0.0625
    sweep = stats.compare(_series([1.0] * 5), _series([0.0] * 5))
    assert sweep.p_value == pytest.approx(0.0625)
    assert sweep.label == "too few shared competitions to decide (needs ≥ 6)"
    assert math.isnan(sweep.detectable)
    six = stats.compare(_series([1.0] * 6), _series([0.0] * 6))
    assert six.label == "A better" and six.p_value == pytest.approx(2 / 64)
    even = stats.compare(_series([1.0, 0.0] * 4), _series([0.0, 1.0] * 4))
    assert even.label == stats.TIE


@pytest.mark.parametrize("n", [6, 7, 10, 20, 40])
def test_detectable_effect_is_the_smallest_significant_outcome(n: int) -> None:
    # every split of n 0/1 competitions into wins, losses and draws, tested by the real test
    smallest = min(
        (w - l) / n
        for w in range(n + 1)
        for l in range(n + 1 - w)  # noqa: E741 - losses
        if w > l and stats.sign_flip_p([1.0] * w + [-1.0] * l + [0.0] * (n - w - l)) < stats.ALPHA
    )
    assert stats.compare(_series([0.0] * n), _series([0.0] * n)).detectable == pytest.approx(
        smallest
    )


def test_min_decidable_follows_alpha() -> None:
    assert stats.MIN_DECIDABLE == 6
    assert all(stats.sign_flip_p([1.0] * m) >= stats.ALPHA for m in range(1, 6))


def test_compare_uses_only_shared_competitions() -> None:
    a = pd.Series([1.0, 1.0], index=["x", "y"])
    b = pd.Series([0.0, 1.0], index=["y", "z"])
    comparison = stats.compare(a, b)
    assert comparison.pairs == 1 and comparison.diff == 1.0
    assert stats.compare(a, pd.Series([1.0], index=["q"])).label == "no shared competitions"


def test_ranks_group_ties() -> None:
    strong = _series([1.0] * 10)
    weak = _series([0.0] * 10)
    ranked = stats.ranks({"strong": strong, "weak-a": weak, "weak-b": weak.copy()})
    assert ranked == {"strong": 1, "weak-a": 2, "weak-b": 2}
    assert stats.rank_labels(ranked) == {"strong": "1", "weak-a": "2=", "weak-b": "2="}
    zeros = stats.ranks({name: weak.copy() for name in "abc"})
    assert set(stats.rank_labels(zeros).values()) == {"1="}
