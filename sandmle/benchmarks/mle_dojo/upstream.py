"""``mle-dojo/native``: grade with MLE-Dojo's own metric class, where ``mledojo`` is importable.

MLE-Dojo grades in two steps (``mledojo/gym/interface.py``): ``validate_submission(submission,
ground_truth)``, then ``evaluate(ground_truth, submission)``; an exception in either makes the
submission fail. Both become ``InvalidSubmission`` here, with MLE-Dojo's message. MLE-Dojo
reads both files with plain ``pd.read_csv``; the grading core hands us the tables parsed with the
round-trip float parser, which differs from that by at most one ulp.

Importing this module also registers the metric name ``mle_dojo`` that such competitions'
configs carry; it only says "graded by MLE-Dojo's metric class" and is never computed directly.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sandmle.benchmarks.mle_dojo import competitions as dojo
from sandmle.errors import CompetitionError, InvalidSubmission
from sandmle.harness.competition import CompetitionConfig
from sandmle.harness.grading.metrics import metric
from sandmle.harness.grading.registry import grader


@metric(dojo.NATIVE_METRIC, lower_is_better=False)
def mle_dojo_metric(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Placeholder name for "MLE-Dojo's metric class decides"; see the ``mle-dojo/native`` grader."""
    raise CompetitionError("metric 'mle_dojo' is computed by the mle-dojo/native grader only")


@grader(dojo.NATIVE_GRADER)
def native_grader(
    submission: pd.DataFrame, answers: pd.DataFrame, config: CompetitionConfig
) -> float:
    """Options: ``competition`` (MLE-Dojo's competition id; the config id by default)."""
    competition_id = str(config.grader.options.get("competition", config.id))
    metric_class = dojo.mledojo_metric_class(competition_id)
    if metric_class is None:
        raise CompetitionError(
            f"{competition_id}: MLE-Dojo's metric class is unavailable (install the mledojo package)"
        )
    metrics = metric_class()
    try:
        metrics.validate_submission(submission, answers)
    except Exception as exc:  # noqa: BLE001 - MLE-Dojo reports any validation error as invalid
        raise InvalidSubmission(f"MLE-Dojo validation: {exc}") from None
    try:
        return float(metrics.evaluate(answers, submission))
    except Exception as exc:  # noqa: BLE001 - MLE-Dojo reports a failed evaluation as a failure
        raise InvalidSubmission(f"MLE-Dojo evaluation failed: {exc}") from None
