"""The AutoML program, reading the task: its files, its metric and what to predict.

A part of the one program ``policies/automl.py`` joins (see ``automl/__init__.py``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from .settings import DATA_DIR, LABEL_METRICS, METRIC_PATTERNS, REGRESSION_METRICS, Spec

# ---------------------------------------------------------------- reading the task


def find_file(patterns: list[str]) -> Path:
    for pattern in patterns:
        hits = sorted(p for p in DATA_DIR.glob(pattern) if p.is_file())
        if hits:
            return hits[0]
    raise FileNotFoundError(f"none of {patterns} in {DATA_DIR}")


def read_description() -> str:
    texts = [p.read_text(errors="ignore") for p in sorted(DATA_DIR.glob("*.md"))]
    texts += [p.read_text(errors="ignore") for p in sorted(DATA_DIR.glob("*.txt"))[:3]]
    return "\n".join(texts)


def find_metric(text: str) -> str | None:
    """The metric named in the description, its Evaluation section first."""
    lowered = text.lower()
    section = re.search(r"#+[^\n]*(evaluation|metric)[^\n]*\n(.*?)(?=\n#+ |\Z)", lowered, re.S)
    for scope in ([section.group(2)] if section else []) + [lowered]:
        for name in [m for m, _ in METRIC_PATTERNS]:
            if f"`{name}`" in scope:
                return name
        for name, pattern in METRIC_PATTERNS:
            if re.search(pattern, scope):
                return name
    return None


def is_integral(values: pd.Series) -> bool:
    numbers = pd.to_numeric(values, errors="coerce").dropna()
    return len(numbers) == len(values.dropna()) and bool((numbers == numbers.round()).all())


def infer_spec(
    train: pd.DataFrame, test: pd.DataFrame, sample: pd.DataFrame, metric: str | None
) -> Spec:
    ids = [c for c in sample.columns if c in test.columns] or [sample.columns[0]]
    targets = [c for c in sample.columns if c not in ids]
    if all(c in train.columns for c in targets):
        return spec_from_targets(train, sample, ids, targets, metric)
    names = {str(t) for t in targets}
    for col in [c for c in train.columns if c not in test.columns]:
        if set(train[col].dropna().astype(str)) & names:
            return Spec(
                ids, targets, "multiclass", "onehot", [col], metric or "multiclass_log_loss"
            )
    raise ValueError(
        f"cannot find the training labels for {targets} in train columns {list(train.columns)}"
    )


def spec_from_targets(
    train: pd.DataFrame,
    sample: pd.DataFrame,
    ids: list[str],
    targets: list[str],
    metric: str | None,
) -> Spec:
    y = train[targets].dropna()
    if len(targets) > 1:
        binary = all(set(pd.to_numeric(y[c], errors="coerce").unique()) <= {0, 1} for c in targets)
        if binary and metric not in REGRESSION_METRICS:
            return Spec(
                ids, targets, "multilabel", "prob", targets, metric or "mean_columnwise_roc_auc"
            )
        return Spec(ids, targets, "regression", "value", targets, metric or "mean_columnwise_rmse")
    values = y[targets[0]]
    numeric = pd.api.types.is_numeric_dtype(values)
    few = is_integral(values) and values.nunique() <= 20
    if metric in REGRESSION_METRICS or (metric is None and numeric and not few):
        return Spec(ids, targets, "regression", "value", targets, metric or "rmse")
    kind = "binary" if values.nunique() <= 2 else "multiclass"
    sample_values = pd.to_numeric(sample[targets[0]], errors="coerce")
    prob_sample = bool(sample_values.notna().all()) and not is_integral(sample_values)
    wants_labels = metric in LABEL_METRICS or (metric is None and not prob_sample)
    output = "label" if wants_labels or kind == "multiclass" else "prob"
    default = "accuracy" if output == "label" else "roc_auc"
    return Spec(ids, targets, kind, output, targets, metric or default)
