"""The heuristic's AutoML script on sequence-to-sequence and image-to-image tasks."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from sandmle.harness.competition import load_competition
from sandmle.harness.grading.report import grade_csv, grade_frame
from sandmle.policies.automl import DEFAULT_LEVEL, automl_code
from tests.policies.test_policies import assert_beats_sample, run_script

synthetic = pytest.importorskip("sandmle.benchmarks.synthetic.pipeline")
seeds = pytest.importorskip("sandmle.benchmarks.synthetic.seeds")
denoise = pytest.importorskip("sandmle.benchmarks.synthetic.modalities.denoise_features")
PublicData = pytest.importorskip("sandmle.benchmarks.synthetic.artifacts").PublicData


def _task(seed: str, out: Path):
    outcome = synthetic.generate_task(seeds.get_seed(seed), 0, 21, out)
    assert outcome.task_id, outcome.rejections
    return load_competition(out / outcome.task_id)


def test_text_normalization_lookup_beats_the_copying_sample(tmp_path: Path):
    competition = _task("text-normalization-challenge-english-language", tmp_path / "pack")
    run = tmp_path / "run"
    run.mkdir()
    assert_beats_sample(competition, run, DEFAULT_LEVEL)
    report = grade_csv(run / "submission" / "submission.csv", competition)
    assert report.above_median  # the lookup is the generator's generic learner
    out = run_script(competition, run, automl_code(DEFAULT_LEVEL))
    assert "sequence-to-sequence" in out.stdout and "Validation metric:" in out.stdout


@pytest.mark.parametrize("level", [1, DEFAULT_LEVEL])
def test_denoising_pixel_model_beats_the_white_sample(tmp_path: Path, level: int):
    competition = _task("denoising-dirty-documents", tmp_path / "pack")
    run = tmp_path / "run"
    run.mkdir()
    score = assert_beats_sample(competition, run, level)
    data = PublicData.from_folder(competition.public_dir)
    copy = pd.DataFrame({"id": data.test["id"], "value": denoise.noisy_copy(data)[:, 0]})
    assert score < grade_frame(copy, competition).score  # better than handing the scan back
