"""Time-series forecasting: several series with level, trend, weekly season and an event flag.

Train holds the first days of every series, test the last ``horizon`` days; the hidden rule
is the noise-free curve, which the oracle predicts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.developer import DevelopedTask, HiddenRule, make_ids


def build(bp: Blueprint, rng: np.random.Generator) -> DevelopedTask:
    n_series, length = int(bp.params["n_series"]), int(bp.params["length"])
    horizon, period = int(bp.params["horizon"]), int(bp.params["period"])
    day_col, flag_col = bp.domain.feature_columns
    level = rng.uniform(30, 90, n_series)
    trend = rng.uniform(-0.4, 1.2, n_series)
    amp = rng.uniform(4, 14, n_series)
    phase = rng.integers(0, period, n_series)
    effect, sigma = float(rng.uniform(6, 16)), float(rng.uniform(1.5, 4.0))
    series, day = np.repeat(np.arange(n_series), length), np.tile(np.arange(length), n_series)
    flag = (rng.random(len(day)) < 0.2).astype(np.int64)
    mean = (
        level[series]
        + trend[series] * day
        + amp[series] * np.sin(2 * np.pi * (day + phase[series]) / period)
    )
    mean = np.maximum(mean + effect * flag, 0.5)
    values = np.maximum(np.round(mean + rng.normal(0, sigma, len(day)), 3), 0.0)
    ids = make_ids(bp.dna.id_scheme, len(day), rng, prefix="d")
    names = np.array([f"{bp.domain.series_column}_{s + 1}" for s in range(n_series)], dtype=object)
    frame = pd.DataFrame(
        {
            bp.domain.id_column: ids,
            bp.domain.series_column: names[series],
            day_col: day,
            flag_col: flag,
        }
    )
    is_test = day >= length - horizon
    target = bp.domain.target_columns[0]
    train = frame[~is_test].reset_index(drop=True).assign(**{target: values[~is_test]})
    test = frame[is_test].reset_index(drop=True)
    return DevelopedTask(
        rule=_rule(level, trend, amp, phase, effect, sigma, flag_col),
        train=train,
        test=test,
        answers=tg.answers_frame(bp, test[bp.domain.id_column], values[is_test].reshape(-1, 1)),
        oracle=mean[is_test].reshape(-1, 1),
    )


def _rule(level, trend, amp, phase, effect: float, sigma: float, flag_col: str) -> HiddenRule:
    return HiddenRule(
        kind="level-trend-season",
        summary=f"value = level + trend*day + weekly sine + {effect:.1f} when {flag_col} + N(0, {sigma:.1f})",
        params={
            "level": np.round(level, 3).tolist(),
            "trend": np.round(trend, 3).tolist(),
            "amplitude": np.round(amp, 3).tolist(),
            "phase": [int(p) for p in phase],
            "effect": round(effect, 3),
            "sigma": round(sigma, 3),
        },
    )


def features(bp: Blueprint, task: DevelopedTask) -> tuple[np.ndarray, np.ndarray]:
    """Series one-hot, day, day of week one-hot and the event flag."""
    day_col, flag_col = bp.domain.feature_columns
    both = pd.concat([task.train, task.test], ignore_index=True)
    parts = [
        pd.get_dummies(both[bp.domain.series_column], dtype=float),
        pd.get_dummies(both[day_col] % int(bp.params["period"]), prefix="dow", dtype=float),
        both[[day_col, flag_col]].astype(float),
    ]
    encoded = pd.concat(parts, axis=1).to_numpy(dtype=np.float64)
    return encoded[: len(task.train)], encoded[len(task.train) :]
