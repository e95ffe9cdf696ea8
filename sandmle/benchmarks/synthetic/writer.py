"""Technical Writer: description.md, built only from what is in the files.

The "Data" section lists every public file as ``- `name`: ...`` and, for CSVs, every
column after "Columns:"; ``sanity.check_description`` parses exactly that shape back.
"""

from __future__ import annotations

import pandas as pd
from pydantic import BaseModel, ConfigDict

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.developer import DevelopedTask

METRIC_TEXT = {
    "roc_auc": "area under the ROC curve between the predicted probability and the observed label",
    "mean_columnwise_roc_auc": "mean over the target columns of the area under the ROC curve",
    "binary_log_loss": "binary log loss of the predicted probability (lower is better)",
    "multiclass_log_loss": "multi-class log loss of the predicted class probabilities (lower is better)",
    "quadratic_weighted_kappa": "quadratic weighted kappa between predicted and true grades",
    "rmse": "root mean squared error (lower is better)",
    "mae": "mean absolute error (lower is better)",
    "rmsle": "root mean squared logarithmic error (lower is better)",
    "mean_columnwise_rmsle": "mean over the target columns of the RMSLE (lower is better)",
    "accuracy": "accuracy: the share of rows whose predicted label is exactly right",
    "macro_f1": "macro-averaged F1 over the classes",
}


class Description(BaseModel):
    """The Technical Writer's output."""

    model_config = ConfigDict(extra="forbid")

    markdown: str
    """The full text of description.md."""


def write_description(bp: Blueprint, task: DevelopedTask, sample: pd.DataFrame) -> Description:
    parts = [
        f"# {bp.domain.title}",
        _overview(bp),
        _data(bp, task, sample),
        _evaluation(bp),
        _submission(bp, sample),
    ]
    return Description(markdown="\n\n".join(parts) + "\n")


def _overview(bp: Blueprint) -> str:
    what = {
        "binary": f"whether each {bp.domain.entity} is `{bp.domain.class_names[-1] if bp.domain.class_names else ''}`",
        "multiclass": f"the class of each {bp.domain.entity} ({', '.join(bp.domain.class_names)})",
        "multilabel": f"which labels apply to each {bp.domain.entity} ({', '.join(bp.domain.class_names)})",
        "regression": f"{' and '.join(bp.domain.target_columns)} ({bp.domain.unit}) for each {bp.domain.entity}",
        "forecasting": f"{bp.domain.target_columns[0]} ({bp.domain.unit}) for the last days of every {bp.domain.series_column}",
    }[bp.dna.task_type]
    return (
        "## Overview\n\n"
        f"Predict {what.replace('`', '')}. The training set has {bp.n_train} rows with known outcomes; "
        f"the test set has {bp.n_test} rows whose outcomes are hidden."
    )


def _data(bp: Blueprint, task: DevelopedTask, sample: pd.DataFrame) -> str:
    lines = [
        "## Data",
        "",
        f"- `train.csv`: {len(task.train)} rows, one per {bp.domain.entity}. Columns: {_cols(task.train)}.",
        f"- `test.csv`: {len(task.test)} rows, the same without {', '.join(tg.train_label_columns(bp))}. Columns: {_cols(task.test)}.",
        f"- `sample_submission.csv`: a valid submission in the right format. Columns: {_cols(sample)}.",
    ]
    if task.files:
        size = int(bp.params["size"])
        lines.append(
            f"- `images/`: one {size}x{size} grayscale PNG per row of train and test, named <id>.png."
        )
    if bp.dna.modality == "tabular":
        lines += ["", "Some feature values are missing or corrupted, as in real data."]
    return "\n".join(lines)


def _cols(frame: pd.DataFrame) -> str:
    return ", ".join(f"`{c}`" for c in frame.columns)


def _evaluation(bp: Blueprint) -> str:
    return f"## Evaluation\n\nSubmissions are scored on the {METRIC_TEXT.get(bp.dna.metric, bp.dna.metric)} (`{bp.dna.metric}`)."


def _submission(bp: Blueprint, sample: pd.DataFrame) -> str:
    kind = {"prob": "a probability", "label": "a label", "value": "a number"}[bp.dna.target_kind]
    example = sample.head(3).to_csv(index=False, lineterminator="\n", float_format="%.6g")
    return (
        "## Submission format\n\n"
        f"One row per test {bp.domain.id_column}, with {kind} in each of "
        f"{', '.join(bp.domain.target_columns)}. For example:\n\n```\n{example}```"
    )
