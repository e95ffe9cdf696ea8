"""The statistics behind every number the leaderboard, the CLI report and the export show.

Rates (valid, above median, medals) get a Wilson score interval. Samples of one competition
run several times (epochs > 1) are not independent, so their interval uses an effective
sample size ``n / deff``, with the design effect ``deff`` estimated from a cluster-robust
variance over competitions (never below 1 competition's worth per competition, never above n).

Two entrants are compared on the competitions both ran: per competition each gets its mean
flag (over epochs), and the paired differences are tested with an exact sign-flip test. With
one epoch every difference is -1, 0 or 1 and the test is exactly McNemar's exact (binomial)
test on the discordant competitions. That test alone gives the verdict (no second method that
could disagree with it): with fewer than ``MIN_DECIDABLE`` shared competitions no outcome can
reach p < ``ALPHA`` (a clean sweep of 5 gives 0.0625), so the pair is "too few shared
competitions to decide" rather than a tie; otherwise a p-value not below ``ALPHA`` is an
"≈ tie". Each comparison also carries its minimal detectable effect: the smallest mean
difference any outcome at that many competitions could show significant. A rank is 1 + the
number of entrants significantly better, so ties share a rank.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

Z95 = 1.959963984540054
"""Two-sided 95% normal quantile."""
ALPHA = 0.05
"""A paired difference counts as real below this p-value; otherwise the pair is a tie."""
EXACT_FLIPS = 12
"""Up to this many non-zero fractional differences the sign-flip test enumerates every sign."""
TIE = "≈ tie"


def _min_decidable(alpha: float = ALPHA) -> int:
    # The smallest p of the sign-flip test on m non-zero differences is a sweep: 2 / 2**m.
    return next(m for m in itertools.count(1) if 2.0 / 2**m < alpha)


MIN_DECIDABLE = _min_decidable()
"""Shared competitions below which no outcome can be significant (6 at ``ALPHA`` = 0.05)."""


def too_few(needed: int = MIN_DECIDABLE) -> str:
    """The verdict of a pair whose test has no power at its size."""
    return f"too few shared competitions to decide (needs ≥ {needed})"


@dataclass(frozen=True)
class Rate:
    """A proportion with its 95% interval, all in [0, 1]."""

    value: float
    low: float
    high: float
    k: float
    """Successes (a sum of 0/1 flags)."""
    n: int
    """Observations (sample-epochs)."""
    n_eff: float
    """Effective sample size after clustering (``n`` when independent)."""


@dataclass(frozen=True)
class Comparison:
    """Entrant A against entrant B on the competitions both ran."""

    diff: float
    """Mean of A minus B over shared competitions (a rate difference in [-1, 1])."""
    p_value: float
    pairs: int
    """Shared competitions."""

    @property
    def decidable(self) -> bool:
        """Whether some outcome at this many shared competitions could be significant."""
        return self.pairs >= MIN_DECIDABLE

    @property
    def detectable(self) -> float:
        """The minimal detectable effect: the smallest |A − B| that could be significant here.

        With 0/1 outcomes that is ``MIN_DECIDABLE`` competitions won one way, none the other,
        out of ``pairs`` (a larger split needs a larger margin); NaN when none could be.
        """
        return MIN_DECIDABLE / self.pairs if self.decidable else math.nan

    @property
    def label(self) -> str:
        """``"A better"``, ``"B better"``, ``"≈ tie"``, or why the test cannot decide."""
        if self.pairs == 0:
            return "no shared competitions"
        if not self.decidable:
            return too_few()
        if self.p_value >= ALPHA:
            return TIE
        return "A better" if self.diff > 0 else "B better"


def wilson(k: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of ``k`` successes in ``n`` trials (``n`` may be fractional).

    >>> [round(x, 4) for x in wilson(0, 4)]
    [0.0, 0.4899]
    """
    if n <= 0:
        return (0.0, 1.0)
    p = k / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return (max(0.0, centre - half), min(1.0, centre + half))


def effective_n(flags: np.ndarray, clusters: np.ndarray) -> float:
    """``n / deff`` from the cluster-robust variance of the mean of ``flags`` over ``clusters``."""
    n = len(flags)
    group, uniques = pd.factorize(clusters)
    count = len(uniques)
    if count == n:  # one observation per cluster: independent
        return float(n)
    p = float(flags.mean())
    if p in (0.0, 1.0):  # no variance to estimate deff from: count each competition once
        return float(count)
    residual = np.bincount(group, weights=flags) - p * np.bincount(group)
    robust = count / max(count - 1, 1) * float((residual**2).sum()) / n**2
    binomial = p * (1 - p) / n
    return float(min(n, max(count, binomial / robust * n))) if robust > 0 else float(n)


def rate(flags: ArrayLike, clusters: ArrayLike | None = None) -> Rate:
    """The mean of 0/1 ``flags`` with a Wilson interval, clustered when ``clusters`` repeat."""
    values = np.asarray(flags, dtype=float)
    keep = ~np.isnan(values)
    values = values[keep]
    n = len(values)
    if n == 0:
        return Rate(math.nan, math.nan, math.nan, 0.0, 0, 0.0)
    k = float(values.sum())
    n_eff = float(n) if clusters is None else effective_n(values, np.asarray(clusters)[keep])
    low, high = wilson(k / n * n_eff, n_eff)
    return Rate(k / n, low, high, k, n, n_eff)


def mean_interval(values: ArrayLike, z: float = Z95) -> tuple[float, float, float]:
    """Mean and normal 95% interval clipped to [0, 1] (HumanRank).

    The interval is NaN when it cannot be estimated (fewer than two values, or no spread);
    all three are NaN when there are no values.
    """
    data = np.asarray(values, dtype=float)
    data = data[~np.isnan(data)]
    if len(data) == 0:
        return (math.nan, math.nan, math.nan)
    mean = float(data.mean())
    if len(data) < 2 or float(data.std(ddof=1)) == 0.0:  # no spread to estimate an interval from
        return (mean, math.nan, math.nan)
    half = z * float(data.std(ddof=1)) / math.sqrt(len(data))
    return (mean, max(0.0, mean - half), min(1.0, mean + half))


def mcnemar_exact_p(wins: int, losses: int) -> float:
    """Two-sided exact McNemar p-value: ``wins`` and ``losses`` are the discordant pairs.

    >>> round(mcnemar_exact_p(10, 2), 5)
    0.03857
    """
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


@functools.lru_cache(maxsize=EXACT_FLIPS + 1)
def _signs(n: int) -> np.ndarray:
    return np.array(list(itertools.product((1.0, -1.0), repeat=n)))


def sign_flip_p(diffs: Iterable[float]) -> float:
    """Two-sided p-value of the paired sign-flip test; McNemar's exact test on 0/1 data.

    Up to ``EXACT_FLIPS`` non-zero differences every sign pattern is enumerated; above, the
    statistic's normal approximation is used (mean 0, variance the sum of squares).

    >>> round(sign_flip_p([1] * 10 + [-1] * 2 + [0] * 5), 5)
    0.03857
    """
    d = np.asarray([x for x in diffs if abs(x) > 1e-12], dtype=float)
    if len(d) == 0:
        return 1.0
    if np.all(np.abs(np.abs(d) - 1.0) < 1e-12):
        return mcnemar_exact_p(int((d > 0).sum()), int((d < 0).sum()))
    observed = abs(d.sum()) - 1e-9
    if len(d) <= EXACT_FLIPS:
        return float(np.mean(np.abs(_signs(len(d)) @ d) >= observed))
    z = abs(d.sum()) / math.sqrt(float((d**2).sum()))
    return float(math.erfc(z / math.sqrt(2)))


def per_competition(samples: pd.DataFrame, metric: str) -> pd.Series:
    """Mean of ``metric`` per competition (over epochs and logs)."""
    return samples.groupby("competition_id")[metric].mean()


def paired_differences(a: pd.Series, b: pd.Series) -> np.ndarray:
    """A − B on the competitions both have a value for, in A's order.

    Plain dicts rather than an index join: the Models tab pairs thousands of short series,
    and a pandas join costs milliseconds each.
    """
    other = {k: v for k, v in b.items() if v == v}  # v == v: not NaN
    return np.array([v - other[k] for k, v in a.items() if v == v and k in other], dtype=float)


def compare(a: pd.Series, b: pd.Series) -> Comparison:
    """Compare two entrants' per-competition means on the competitions both have."""
    return comparison(paired_differences(a, b))


def comparison(diffs: np.ndarray) -> Comparison:
    """The paired test of per-competition differences A − B (``compare``'s test)."""
    if len(diffs) == 0:
        return Comparison(math.nan, 1.0, 0)
    return Comparison(float(diffs.mean()), sign_flip_p(diffs), len(diffs))


def better(a: pd.Series, b: pd.Series) -> bool:
    """Whether A is significantly better than B (paired test on shared competitions)."""
    return _better(paired_differences(a, b))


def _better(diffs: np.ndarray) -> bool:
    if len(diffs) == 0 or diffs.mean() <= 0:
        return False
    return _cached_p(tuple(sorted(np.round(diffs[diffs != 0], 9)))) < ALPHA


@functools.lru_cache(maxsize=65_536)
def _cached_p(diffs: tuple[float, ...]) -> float:
    # Many pairs share the same differences (all-zero rows, one-epoch 0/1 rows).
    return sign_flip_p(diffs)


def ranks(entrants: dict[str, pd.Series]) -> dict[str, int]:
    """1 + the number of entrants significantly better than each (ties share a rank)."""
    names = list(entrants)
    wide = pd.DataFrame({name: entrants[name] for name in names}).to_numpy(dtype=float).T
    if wide.size == 0:
        return dict.fromkeys(names, 1)
    known = ~np.isnan(wide)
    shared = known[:, None, :] & known[None, :, :]
    values = np.nan_to_num(wide)
    diffs = (values[:, None, :] - values[None, :, :]) * shared  # [better?, worse?, competition]
    beaten = np.zeros(len(names), dtype=int)
    for i, j in np.argwhere(diffs.sum(axis=2) > 0):  # only pairs where i leads can count
        if _better(diffs[i, j][shared[i, j]]):
            beaten[j] += 1
    return {name: 1 + int(count) for name, count in zip(names, beaten, strict=True)}


def rank_labels(rank_of: dict[str, int]) -> dict[str, str]:
    """``"1"`` for a rank held alone, ``"1="`` for one shared with others."""
    counts = pd.Series(rank_of).value_counts()
    return {k: f"{r}=" if counts[r] > 1 else str(r) for k, r in rank_of.items()}


def format_rate(r: Rate) -> str:
    """``"25% [7–59] 2/8"``: percent, interval and counts; ``"—"`` when there is no data."""
    if r.n == 0:
        return "—"
    k = f"{r.k:.0f}" if float(r.k).is_integer() else f"{r.k:.1f}"
    return f"{100 * r.value:.0f}% [{100 * r.low:.0f}–{100 * r.high:.0f}] {k}/{r.n}"


def format_mean(mean: float, low: float, high: float, n: int) -> str:
    """``"0.512 [0.40–0.62] n=4"``; ``"—"`` when there is no value."""
    if n == 0 or math.isnan(mean):
        return "—"
    if math.isnan(low):
        return f"{mean:.3f} n={n}"
    return f"{mean:.3f} [{low:.2f}–{high:.2f}] n={n}"
