"""Time-series forecasting: many series whose curve is composed from a library of terms.

Every series has a level and a seasonal cycle (period 7, 12 or 24 steps, shared phase); the
strategist's form adds some of: a per-series trend, an event-flag effect, a changepoint
(the trend bends at a known step), a second harmonic, and a per-series seasonal amplitude.
Train holds the first steps of every series, test the last ``horizon`` steps; the hidden
rule is the noise-free curve. ``rule.params["structure"]`` records the form, period and
changepoint step (never the coefficients).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.artifacts import DevelopedTask, HiddenRule, PublicData
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.modalities.contract import Matrices, Modality
from sandmle.benchmarks.synthetic.rows import make_ids


def build(bp: Blueprint, rng: np.random.Generator) -> DevelopedTask:
    n_series, length = int(bp.params["n_series"]), int(bp.params["length"])
    horizon, period = int(bp.params["horizon"]), int(bp.params["period"])
    day_col, flag_col = bp.domain.feature_columns
    form = set(bp.form or ["level", "season", "trend", "event"])
    structure: dict[str, Any] = {
        "terms": sorted(form),
        "period": period,
        "changepoint": int(rng.integers(length // 3, length - horizon - period))
        if "changepoint" in form
        else None,
    }
    series, day = np.repeat(np.arange(n_series), length), np.tile(np.arange(length), n_series)
    flag = (rng.random(len(day)) < 0.15).astype(np.int64)
    coef = _coefficients(n_series, form, rng)
    mean = curve(series, day, flag, structure, coef)
    sigma = float(rng.uniform(1.0, 2.5))
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
    rule = HiddenRule(
        kind="series-" + "+".join(sorted(form)),
        summary=f"value = {' + '.join(sorted(form))} (period {period}) + N(0, {sigma:.1f})",
        params={
            "structure": structure,
            "coefficients": {k: np.round(v, 3).tolist() for k, v in coef.items()},
            "sigma": round(sigma, 3),
        },
    )
    return DevelopedTask(
        rule=rule,
        train=train,
        test=test,
        answers=tg.answers_frame(bp, test[bp.domain.id_column], values[is_test].reshape(-1, 1)),
        oracle=mean[is_test].reshape(-1, 1),
    )


def _coefficients(n: int, form: set[str], rng: np.random.Generator) -> dict[str, np.ndarray]:
    shared_amp = float(rng.uniform(6, 14))
    return {
        "level": rng.uniform(30, 90, n),
        "trend": rng.uniform(-0.3, 0.9, n) if "trend" in form else np.zeros(n),
        "amplitude": rng.uniform(0.3, 1.7, n) * shared_amp
        if "series-season" in form
        else np.full(n, shared_amp),
        "phase": np.full(n, float(rng.uniform(0, 2 * np.pi))),
        "event": np.array([float(rng.uniform(8, 18)) if "event" in form else 0.0]),
        "bend": rng.uniform(-1.0, 1.0, n) if "changepoint" in form else np.zeros(n),
        "harmonic": np.array([float(rng.uniform(3, 8)) if "harmonic" in form else 0.0]),
    }


def curve(
    series: np.ndarray,
    day: np.ndarray,
    flag: np.ndarray,
    structure: dict[str, Any],
    coef: dict[str, np.ndarray],
) -> np.ndarray:
    angle = 2 * np.pi * day / structure["period"] + coef["phase"][series]
    cp = structure["changepoint"]
    after = np.maximum(day - cp, 0) if cp is not None else np.zeros(len(day))
    mean = (
        coef["level"][series]
        + coef["trend"][series] * day
        + coef["bend"][series] * after
        + coef["amplitude"][series] * np.sin(angle)
        + coef["harmonic"][0] * np.sin(2 * angle)
        + coef["event"][0] * flag
    )
    return np.maximum(mean, 0.5)


def features(bp: Blueprint, data: PublicData) -> Matrices:
    """Series one-hot, step, step modulo a week and the event flag: a first notebook's view."""
    day_col, flag_col = bp.domain.feature_columns
    both = pd.concat([data.train, data.test], ignore_index=True)
    parts = [
        pd.get_dummies(both[bp.domain.series_column], dtype=float),
        pd.get_dummies(both[day_col] % 7, prefix="dow", dtype=float),
        both[[day_col, flag_col]].astype(float),
    ]
    encoded = pd.concat(parts, axis=1).to_numpy(dtype=np.float64)
    return encoded[: len(data.train)], encoded[len(data.train) :]


def structure_features(bp: Blueprint, rule: HiddenRule, data: PublicData) -> Matrices:
    """Per-series level and trend (and bend), the seasonal basis at the rule's period, the flag."""
    structure = rule.params["structure"]
    day_col, flag_col = bp.domain.feature_columns
    both = pd.concat([data.train, data.test], ignore_index=True)
    series = pd.get_dummies(both[bp.domain.series_column], dtype=float).to_numpy()
    day = both[day_col].to_numpy(dtype=float)
    angle = 2 * np.pi * day / structure["period"]
    terms = set(structure["terms"])
    parts = [
        series,
        np.column_stack([np.sin(angle), np.cos(angle)]),
        both[[flag_col]].to_numpy(float),
    ]
    if "trend" in terms:
        parts.append(series * day[:, None] / 100)
    if structure.get("changepoint") is not None:
        parts.append(series * np.maximum(day - structure["changepoint"], 0)[:, None] / 100)
    if "harmonic" in terms:
        parts.append(np.column_stack([np.sin(2 * angle), np.cos(2 * angle)]))
    if "series-season" in terms:
        parts.append(series * np.sin(angle)[:, None])
        parts.append(series * np.cos(angle)[:, None])
    encoded = np.hstack(parts)
    return encoded[: len(data.train)], encoded[len(data.train) :]


MODALITY = Modality(
    name="time-series", build=build, features=features, structure_features=structure_features
)
