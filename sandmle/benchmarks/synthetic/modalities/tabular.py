"""Tabular tasks: a hidden rule composed from a library of terms over named columns.

The strategist picks the term kinds (``blueprint.form``): always linear terms, plus some of
a product of two columns, a step at a cut, a periodic (sine) response, a square, a group
effect of a category, and missingness that carries signal. The developer picks the columns,
cuts, periods and weights. Visible values lie in each column's plausible range (see
``domains.RANGES``); noisy copies, irrelevant columns, corrupted readings and blanks are
added on top. ``rule.params["structure"]`` records the form (never the weights): the
structure-aware learner applies it to the noisy public columns and fits the weights itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit, softmax

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.developer import DevelopedTask, HiddenRule, make_ids, split_rows
from sandmle.benchmarks.synthetic.domains import CATEGORY_LEVELS, RANGES

N_LEVELS = 4
LINEAR_WEIGHT = 0.35  # linear terms are a small share: the rule's shape is what pays


def build(bp: Blueprint, rng: np.random.Generator) -> DevelopedTask:
    n, d, c = bp.n_train + bp.n_test, bp.dna.n_numeric, bp.dna.n_categorical
    x = rng.standard_normal((n, d))
    x[bp.n_train :, 0] += bp.noise.shift  # covariate shift: test rows drift on one feature
    cats = rng.integers(0, N_LEVELS, (n, c))
    names = bp.domain.feature_columns
    clean = _informative_frame(bp, x, cats)
    structure = _structure(bp, names[:d], names[len(names) - c :], clean, rng)
    missing = _signal_missingness(structure, n, rng)
    flags = {f"_miss_{col}": flag for col, flag in missing.items()}
    basis = basis_matrix(clean.assign(**flags), structure)
    k = bp.dna.n_outputs
    weights = _weights(structure, basis.shape[1], k, rng)
    z = basis @ weights
    z = (z - z.mean(axis=0)) / (z.std(axis=0) + 1e-9)
    y, oracle = _targets(bp, z, rng)
    ids = make_ids(bp.dna.id_scheme, n, rng, prefix=bp.domain.slug.split("-")[0][:3])
    visible = _visible(bp, x, clean, missing, rng)
    frame = pd.concat([ids.rename(bp.domain.id_column), visible], axis=1)
    train, test = split_rows(bp, frame)
    train = pd.concat([train, tg.train_label_frame(bp, y[: bp.n_train])], axis=1)
    rule = HiddenRule(
        kind="tabular-" + "+".join(t["kind"] for t in structure),
        summary="targets combine " + ", ".join(_describe(t) for t in structure),
        params={"structure": structure, "weights": np.round(weights, 3).tolist()},
    )
    return DevelopedTask(
        rule=rule,
        train=train,
        test=test,
        answers=tg.answers_frame(bp, test[bp.domain.id_column], y[bp.n_train :]),
        oracle=oracle[bp.n_train :],
    )


def _informative_frame(bp: Blueprint, x: np.ndarray, cats: np.ndarray) -> pd.DataFrame:
    """Clean informative values in each column's plausible range."""
    names = bp.domain.feature_columns
    d, c = x.shape[1], cats.shape[1]
    frame = pd.DataFrame({name: _in_range(name, x[:, j]) for j, name in enumerate(names[:d])})
    levels = np.array(CATEGORY_LEVELS[:N_LEVELS], dtype=object)
    for j, name in enumerate(names[len(names) - c :] if c else []):
        frame[name] = levels[cats[:, j]]
    return frame


def _in_range(name: str, x: np.ndarray) -> np.ndarray:
    low, high, decimals = RANGES.get(name, (0.0, 100.0, 2))
    centre, scale = (low + high) / 2, (high - low) / 6
    return np.round(np.clip(centre + scale * x, low, high), decimals)


def _structure(
    bp: Blueprint,
    numeric: list[str],
    categorical: list[str],
    clean: pd.DataFrame,
    rng: np.random.Generator,
) -> list[dict[str, Any]]:
    """Concrete terms for the blueprint's form: columns, cuts, periods (not weights)."""
    terms: list[dict[str, Any]] = []
    stats = {c: (float(clean[c].mean()), float(clean[c].std()) or 1.0) for c in numeric}
    for kind in bp.form or ["linear", "product", "step"]:
        col = str(rng.choice(numeric))
        mean, std = stats[col]
        if kind == "linear":
            terms.append({"kind": "linear", "columns": list(numeric)})
        elif kind == "product":
            a, b = (str(v) for v in rng.choice(numeric, 2, replace=len(numeric) < 2))
            terms.append({"kind": "product", "columns": [a, b]})
        elif kind == "step":
            cut = mean + std * float(rng.uniform(-0.6, 0.6))
            terms.append({"kind": "step", "columns": [col], "cut": round(cut, 4)})
        elif kind == "sine":
            terms.append(
                {
                    "kind": "sine",
                    "columns": [col],
                    "period": round(std * float(rng.uniform(1.2, 2.2)), 4),
                }
            )
        elif kind == "square":
            terms.append({"kind": "square", "columns": [col]})
        elif kind == "group" and categorical:
            terms.append({"kind": "group", "columns": [str(rng.choice(categorical))]})
        elif kind == "missing":
            terms.append({"kind": "missing", "columns": [col]})
    return terms


def _signal_missingness(
    structure: list[dict[str, Any]], n: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Columns whose blanks carry signal: blank in a random 20-35% of rows."""
    return {
        t["columns"][0]: rng.random(n) < rng.uniform(0.2, 0.35)
        for t in structure
        if t["kind"] == "missing"
    }


def basis_matrix(frame: pd.DataFrame, structure: list[dict[str, Any]]) -> np.ndarray:
    """The rule's basis functions of the (clean or noisy) columns, one block per term.

    Numbers are standardised with the frame's own median and spread; blanks become the
    median; a ``missing`` term reads the blank flag (``_miss_<col>`` when given, else NaN).
    """
    blocks = []
    for term in structure:
        cols, kind = term["columns"], term["kind"]
        if kind == "group":
            values = frame[cols[0]].astype(str)
            blocks.append(
                np.column_stack(
                    [(values == lv).to_numpy(float) for lv in CATEGORY_LEVELS[:N_LEVELS]]
                )
            )
            continue
        if kind == "missing":
            flag = frame.get(f"_miss_{cols[0]}", frame[cols[0]].isna())
            blocks.append(np.asarray(flag, dtype=float).reshape(-1, 1))
            continue
        raw = {c: _filled(frame[c]) for c in cols}
        if kind == "linear":
            blocks.append(np.column_stack([_standard(raw[c]) for c in cols]))
        elif kind == "product":
            blocks.append((_standard(raw[cols[0]]) * _standard(raw[cols[1]])).reshape(-1, 1))
        elif kind == "step":
            blocks.append((raw[cols[0]] > term["cut"]).astype(float).reshape(-1, 1))
        elif kind == "sine":
            angle = 2 * np.pi * raw[cols[0]] / term["period"]
            blocks.append(np.column_stack([np.sin(angle), np.cos(angle)]))
        elif kind == "square":
            blocks.append((_standard(raw[cols[0]]) ** 2).reshape(-1, 1))
    return np.hstack(blocks)


def _filled(values: pd.Series) -> np.ndarray:
    numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
    median = np.nanmedian(numbers) if np.isfinite(numbers).any() else 0.0
    return np.where(np.isfinite(numbers), numbers, median)


def _standard(values: np.ndarray) -> np.ndarray:
    centre = np.median(values)
    spread = np.subtract(*np.percentile(values, [75, 25])) / 1.349 or 1.0
    return np.clip((values - centre) / spread, -4, 4)


def _weights(
    structure: list[dict[str, Any]], width: int, k: int, rng: np.random.Generator
) -> np.ndarray:
    rows = []
    for term in structure:
        size = _width(term)
        scale = LINEAR_WEIGHT if term["kind"] == "linear" else 1.0
        sign = rng.choice([-1.0, 1.0], (1, k))
        rows.append(rng.normal(0, 1, (size, k)) * scale + (0 if term["kind"] == "linear" else sign))
    weights = np.vstack(rows)
    assert weights.shape[0] == width
    return weights


def _width(term: dict[str, Any]) -> int:
    return {"linear": len(term["columns"]), "group": N_LEVELS, "sine": 2}.get(term["kind"], 1)


def _describe(term: dict[str, Any]) -> str:
    cols = " x ".join(term["columns"]) if term["kind"] != "linear" else "linear terms"
    extra = {"step": f" > {term.get('cut')}", "sine": f" periodic ({term.get('period')})"}
    return f"{term['kind']}({cols}){extra.get(term['kind'], '')}"


def _targets(
    bp: Blueprint, z: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    signal, task, eps = float(bp.params["signal"]), bp.dna.task_type, bp.noise.label_noise
    if task == "binary":
        logit = signal * z[:, 0]
        p1 = expit(logit - np.quantile(logit, 1 - bp.dna.balance))
        proba = np.stack([1 - p1, p1], axis=1)
        return tg.sample_classes(proba, eps, rng), tg.oracle_classes(proba, eps)
    if task == "multiclass":
        proba = softmax(signal * z, axis=1)
        return tg.sample_classes(proba, eps, rng), tg.oracle_classes(proba, eps)
    if task == "multilabel":
        logit = signal * z
        proba = expit(logit - np.quantile(logit, 1 - bp.dna.balance, axis=0))
        return tg.sample_labels(proba, eps, rng), tg.oracle_labels(proba, eps)
    return regression_values(bp, z, rng)


def regression_values(
    bp: Blueprint, z: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Values in domain units; positive targets are log-normal around the rule."""
    scale = rng.uniform(5, 50, z.shape[1])
    noise = rng.standard_normal(z.shape) * (0.25 + bp.noise.label_noise)
    if bp.dna.positive:
        mean = scale * np.exp(0.6 * z)
        return np.round(mean * np.exp(0.6 * noise), 3), mean
    mean = scale * (2 + z)
    return np.round(mean + scale * noise, 3), mean


def _visible(
    bp: Blueprint,
    x: np.ndarray,
    clean: pd.DataFrame,
    missing: dict[str, np.ndarray],
    rng: np.random.Generator,
) -> pd.DataFrame:
    """Informative columns plus noisy copies and irrelevant columns, with outliers and blanks."""
    n, noise = len(x), bp.noise
    names = bp.domain.feature_columns
    d = x.shape[1]
    frame = clean.copy()
    extra = names[d : d + noise.n_correlated + noise.n_irrelevant]
    for j, name in enumerate(extra):
        source = x[:, int(rng.integers(0, d))] if j < noise.n_correlated else 0
        frame.insert(d + j, name, _in_range(name, source + rng.standard_normal(n)))
    numeric = names[: d + len(extra)]
    outliers = rng.random(n) < noise.outlier_rate
    columns = rng.integers(0, len(numeric), int(outliers.sum()))
    for row, col in zip(np.flatnonzero(outliers), columns, strict=True):
        frame.iloc[row, col] = frame.iloc[row, col] * 10
    blank = rng.random(frame.shape) < noise.missing_rate
    frame = frame.mask(blank)
    for col, flag in missing.items():
        frame.loc[flag, col] = np.nan
    return frame[names]


def features(bp: Blueprint, task) -> tuple[np.ndarray, np.ndarray]:
    """Median-imputed numbers plus one-hot categories: what a first notebook does."""
    columns = bp.domain.feature_columns
    both = pd.concat([task.train[columns], task.test[columns]], ignore_index=True)
    encoded = pd.get_dummies(both, dummy_na=True, dtype=float)
    encoded = encoded.fillna(encoded.median()).fillna(0.0).to_numpy(dtype=np.float64)
    return encoded[: len(task.train)], encoded[len(task.train) :]


def structure_features(bp: Blueprint, rule: HiddenRule, data) -> tuple[np.ndarray, np.ndarray]:
    """The rule's basis applied to the noisy public columns (train and test together)."""
    structure = rule.params["structure"]
    both = pd.concat([data.train, data.test], ignore_index=True)
    basis = basis_matrix(both, structure)
    return basis[: len(data.train)], basis[len(data.train) :]
