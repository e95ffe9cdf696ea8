"""The tabular rule library: terms over named columns, their basis functions and weights.

Shared by tabular tasks (a target per row) and ranking tasks (a taste per user). A rule's
form (``blueprint.form``) names the term kinds: linear terms, a product of two columns, a
step at a cut, a periodic (sine) response, a square, a group effect of a category, and
missingness that carries signal. :func:`rule_terms` picks the columns, cuts and periods;
:func:`term_weights` the weights. Visible values lie in each column's plausible range (see
``domains.RANGES``); :func:`visible_frame` adds noisy copies, irrelevant columns, corrupted
readings and blanks on top.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.domains import CATEGORY_LEVELS, RANGES

Term = dict[str, Any]
N_LEVELS = 4
LINEAR_WEIGHT = 0.35  # linear terms are a small share: the rule's shape is what pays


def informative_frame(bp: Blueprint, x: np.ndarray, cats: np.ndarray) -> pd.DataFrame:
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


def rule_terms(
    bp: Blueprint,
    numeric: list[str],
    categorical: list[str],
    clean: pd.DataFrame,
    rng: np.random.Generator,
) -> list[Term]:
    """Concrete terms for the blueprint's form: columns, cuts, periods (not weights)."""
    terms: list[Term] = []
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
            period = round(std * float(rng.uniform(1.2, 2.2)), 4)
            terms.append({"kind": "sine", "columns": [col], "period": period})
        elif kind == "square":
            terms.append({"kind": "square", "columns": [col]})
        elif kind == "group" and categorical:
            terms.append({"kind": "group", "columns": [str(rng.choice(categorical))]})
        elif kind == "missing":
            terms.append({"kind": "missing", "columns": [col]})
    return terms


def signal_missingness(
    terms: list[Term], n: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Columns whose blanks carry signal: blank in a random 20-35% of rows."""
    return {
        t["columns"][0]: rng.random(n) < rng.uniform(0.2, 0.35)
        for t in terms
        if t["kind"] == "missing"
    }


def basis_matrix(frame: pd.DataFrame, terms: list[Term]) -> np.ndarray:
    """The rule's basis functions of the (clean or noisy) columns, one block per term.

    Numbers are standardised with the frame's own median and spread; blanks become the
    median; a ``missing`` term reads the blank flag (``_miss_<col>`` when given, else NaN).
    """
    blocks = []
    for term in terms:
        cols, kind = term["columns"], term["kind"]
        if kind == "group":
            values = frame[cols[0]].astype(str)
            levels = [(values == lv).to_numpy(float) for lv in CATEGORY_LEVELS[:N_LEVELS]]
            blocks.append(np.column_stack(levels))
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


def term_weights(terms: list[Term], width: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """Weights of the basis columns for ``k`` outputs: small linear weights, signed shapes."""
    rows = []
    for term in terms:
        size = _width(term)
        scale = LINEAR_WEIGHT if term["kind"] == "linear" else 1.0
        sign = rng.choice([-1.0, 1.0], (1, k))
        rows.append(rng.normal(0, 1, (size, k)) * scale + (0 if term["kind"] == "linear" else sign))
    weights = np.vstack(rows)
    assert weights.shape[0] == width
    return weights


def _width(term: Term) -> int:
    return {"linear": len(term["columns"]), "group": N_LEVELS, "sine": 2}.get(term["kind"], 1)


def describe_term(term: Term) -> str:
    """One term as the rule's summary names it, e.g. ``step(age) > 41.2``."""
    cols = " x ".join(term["columns"]) if term["kind"] != "linear" else "linear terms"
    extra = {"step": f" > {term.get('cut')}", "sine": f" periodic ({term.get('period')})"}
    return f"{term['kind']}({cols}){extra.get(term['kind'], '')}"


def visible_frame(
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
    numeric = names[: d + len(extra)]  # the frame's first columns, all floats
    outliers = rng.random(n) < noise.outlier_rate
    columns = rng.integers(0, len(numeric), int(outliers.sum()))
    readings = np.array(frame[numeric], dtype=np.float64)  # a writable copy
    readings[np.flatnonzero(outliers), columns] *= 10  # one corrupted reading per such row
    frame[numeric] = readings
    blank = rng.random(frame.shape) < noise.missing_rate
    frame = frame.mask(blank)
    for col, flag in missing.items():
        frame.loc[flag, col] = np.nan
    return frame[names]
