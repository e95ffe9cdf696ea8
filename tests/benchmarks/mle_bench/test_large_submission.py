"""A denoising submission at the real row count (5,702,400 rows, > 100 MiB) graded end to end."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import sandbox

from sandmle.benchmarks.mle_bench.replicas.build import build_replicas
from sandmle.benchmarks.mle_bench.task import mle_bench_lite
from sandmle.harness.competition import load_competition
from sandmle.harness.grading.report import grade_csv
from sandmle.harness.layout import SUBMISSION_PATH

CID = "denoising-dirty-documents"
HEIGHTS = [420] * 19 + [258] * 10  # 29 test pages x 540 columns = 5,702,400 pixels
WIDTH = 540


def _pixel_ids() -> np.ndarray:
    parts = []
    for page, height in enumerate(HEIGHTS, start=1):
        rows = np.repeat(np.arange(1, height + 1), WIDTH).astype(str)
        cols = np.tile(np.arange(1, WIDTH + 1), height).astype(str)
        parts.append(np.char.add(np.char.add(f"{page}_", rows), np.char.add("_", cols)))
    return np.concatenate(parts)


@solver
def _hand_in(path: Path) -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await sandbox().write_file(SUBMISSION_PATH, path.read_bytes())
        return state

    return solve


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")
def test_real_size_denoising_submission_is_graded_through_the_sandbox(tmp_path: Path) -> None:
    build_replicas(tmp_path / "data", [CID])
    folder = tmp_path / "data" / CID
    ids = _pixel_ids()
    assert len(ids) == 5_702_400
    rng = np.random.default_rng(0)
    truth = np.round(rng.random(len(ids)), 6)
    pd.DataFrame({"id": ids, "value": truth}).to_csv(
        folder / "prepared/private/answers.csv", index=False
    )
    pd.DataFrame({"id": ids, "value": 1}).to_csv(
        folder / "prepared/public/sampleSubmission.csv", index=False
    )
    submission = tmp_path / "submission.csv"
    guess = np.clip(truth + rng.normal(0, 0.1, len(ids)), 0, 1)
    pd.DataFrame({"id": ids, "value": guess}).to_csv(submission, index=False, float_format="%.17g")
    assert submission.stat().st_size > 100 * 1024**2  # past Inspect's read_file limit
    task = mle_bench_lite(data_dir=str(tmp_path / "data"), competitions=CID, time_limit=3000)
    (log,) = inspect_eval(
        task, model="mockllm/model", solver=_hand_in(submission),
        log_dir=str(tmp_path / "logs"), display="none",
    )  # fmt: skip
    assert log.status == "success", log.error
    (sample,) = log.samples or []
    value = sample.scores["medal_scorer"].value
    assert value["valid_submission"] == 1.0, sample.scores["medal_scorer"].metadata
    host = grade_csv(submission, load_competition(folder))
    assert value["score"] == host.score and host.valid_submission
