"""The AutoML program's ``main``: read the task, solve it, write the submission.

A part of the one program ``policies/automl.py`` joins (see ``automl/__init__.py``); the last.
"""

from __future__ import annotations

import warnings

import pandas as pd

from .features import build_features
from .models import fit_predict
from .output import cells, choose_level, labels_of, splits, write_submission
from .settings import LEVEL_NAMES, LOWER_IS_BETTER, SAFE
from .structured import solve_structured
from .task import find_file, find_metric, infer_spec, read_description

# ---------------------------------------------------------------- main


def main() -> None:
    """Solve the task in DATA_DIR and write SUBMISSION_DIR/submission.csv."""
    warnings.filterwarnings("ignore")
    sample_path = find_file(["*sample*submission*.csv", "*sample*.csv", "*submission*.csv"])
    train = pd.read_csv(find_file(["train.csv", "*train*.csv"]))
    test_path = find_file(["test.csv", "*test*.csv"])
    test = pd.read_csv(test_path)
    sample = pd.read_csv(sample_path, dtype=str, keep_default_na=False)
    test_ids = pd.read_csv(test_path, dtype=str, keep_default_na=False)
    if not SAFE and (path := solve_structured(train, test, test_ids, sample)) is not None:
        print(f"Wrote submission: {path} ({len(sample)} rows)")
        return
    spec = infer_spec(train, test, sample, find_metric(read_description()))
    train = train.dropna(subset=spec.label_cols).reset_index(drop=True)
    spec.log_target = spec.metric in ("rmsle", "mean_columnwise_rmsle")
    y = labels_of(spec, train)
    x_train, x_test, info = build_features(train, test, spec)
    direction = "lower" if spec.metric in LOWER_IS_BETTER else "higher"
    print(
        f"Task: {spec.kind} ({spec.output}) | targets: {', '.join(spec.targets)} | metric: {spec.metric} ({direction} is better)"
    )
    print(f"Features: {x_train.shape[1]} columns from {info['numeric']} numeric, {info['categorical']} categorical, "
          f"{info['text']} text, {info['image']} image, {info['audio']} audio, {info['date']} date; "
          f"time index: {info['time']}")  # fmt: skip
    level, value = choose_level(spec, x_train, y, splits(spec, train, y, info), info)
    print(f"Model: {LEVEL_NAMES[level]} (level {level})")
    print(f"Validation metric: {value:.6f}")
    path = write_submission(
        sample, test_ids, spec, cells(spec, fit_predict(level, spec, x_train, y, x_test, info))
    )
    print(f"Wrote submission: {path} ({len(sample)} rows)")


if __name__ == "__main__":
    main()
