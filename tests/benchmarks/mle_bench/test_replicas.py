"""Micro replicas: deterministic, in MLE-bench's layout, and graded as the real data would be."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from sandmle.benchmarks.mle_bench.competitions import get_competition, lite_competitions
from sandmle.benchmarks.mle_bench.replicas.build import MARKER, build_replicas
from sandmle.benchmarks.mle_bench.replicas.cli import replicas_app
from sandmle.benchmarks.mle_dojo.replicas import build_replicas_with_dojo
from sandmle.errors import SandmleError
from sandmle.harness.competition import load_competition
from sandmle.harness.grading.report import grade_csv

BEST = {  # the best value of each lite metric
    "roc_auc": 1.0,
    "mean_columnwise_roc_auc": 1.0,
    "quadratic_weighted_kappa": 1.0,
    "accuracy": 1.0,
    "rmse": 0.0,
    "mean_columnwise_rmsle": 0.0,
    "binary_log_loss": 0.0,
    "multiclass_log_loss": 0.0,
}


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("replicas")
    build_replicas_with_dojo(out)
    return out


def digests(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def perfect_submission(competition_id: str, answers: Path, dest: Path) -> Path:
    """The answers reduced to the submission's columns (jigsaw's unscored -1 rows become 0)."""
    lite = get_competition(competition_id)
    targets = list(lite.target_columns)
    frame = pd.read_csv(answers)[[*lite.id_columns, *targets]]
    if competition_id.startswith("jigsaw"):
        frame[targets] = frame[targets].clip(lower=0)
    frame.to_csv(dest, index=False)
    return dest


def test_replicas_are_deterministic(replicas: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    build_replicas_with_dojo(again)
    assert digests(again) == digests(replicas)
    build_replicas(again, ["leaf-classification"], seed=1)  # a replica is overwritten in place
    assert digests(again / "leaf-classification") != digests(replicas / "leaf-classification")


def test_never_overwrites_real_data(tmp_path: Path) -> None:
    real = tmp_path / "leaf-classification" / "prepared" / "public"
    real.mkdir(parents=True)
    with pytest.raises(SandmleError, match="not a sandmle replica"):
        build_replicas(tmp_path, ["leaf-classification"])
    assert real.is_dir()


@pytest.mark.parametrize("competition_id", list(lite_competitions()))
def test_layout_matches_mle_bench(replicas: Path, competition_id: str) -> None:
    lite = get_competition(competition_id)
    root = replicas / competition_id
    assert (root / MARKER).is_file()
    assert (root / "prepared/public/description.md").is_file()
    answers = pd.read_csv(root / lite.answers)
    sample = pd.read_csv(root / lite.sample_submission)
    assert set(lite.id_columns) | set(lite.target_columns) <= set(answers.columns)
    assert set(lite.target_columns) <= set(sample.columns)
    assert len(sample) == len(answers)
    total = sum(1 for _ in root.rglob("*"))
    assert 5 <= len(answers) <= 400 and total < 400


def test_real_file_layouts(replicas: Path) -> None:
    def names(rel: str) -> list[str]:
        with zipfile.ZipFile(replicas / rel) as archive:
            return archive.namelist()

    assert all(
        "/" not in n and n.endswith(".jpg")
        for n in names("aerial-cactus-identification/prepared/public/test.zip")
    )
    assert names(
        "text-normalization-challenge-english-language/prepared/public/en_test_2.csv.zip"
    ) == ["en_test_2.csv"]
    assert all(
        n.startswith("test2/") and n.endswith(".aif")
        for n in names("the-icml-2013-whale-challenge-right-whale-redux/prepared/public/test2.zip")
    )
    assert (
        (replicas / "random-acts-of-pizza/prepared/public/train.json")
        .read_text()
        .startswith("[\n    {")
    )
    ids = pd.read_csv(replicas / "aptos2019-blindness-detection/prepared/private/test.csv")[
        "id_code"
    ]
    assert all(len(i) == 12 for i in ids)
    assert all(
        (replicas / f"aptos2019-blindness-detection/prepared/public/test_images/{i}.png").is_file()
        for i in ids
    )
    birds = pd.read_csv(replicas / "mlsp-2013-birds/prepared/private/answers.csv")
    assert len(birds) % 19 == 0 and set(birds["Id"] % 100) == set(range(19))
    text = (
        replicas / "mlsp-2013-birds/prepared/public/essential_data/rec_labels_test_hidden.txt"
    ).read_text()
    assert text.startswith("rec_id,[labels]\n") and ",?\n" in text
    jigsaw = pd.read_csv(
        replicas / "jigsaw-toxic-comment-classification-challenge/prepared/private/test.csv"
    )
    assert (jigsaw.iloc[:, 1:].sum(axis=1) == -6).any()
    assert (replicas / "leaf-classification/prepared/private/images").is_dir()


@pytest.mark.parametrize("competition_id", list(lite_competitions()))
def test_graders_on_sample_and_perfect_submissions(
    replicas: Path, competition_id: str, tmp_path: Path
) -> None:
    competition = load_competition(replicas / competition_id)
    sample = grade_csv(competition.sample_submission_path, competition)
    assert sample.valid_submission, sample.invalid_reason  # MLE-bench: valid for all 22
    perfect = perfect_submission(competition_id, competition.answers_path, tmp_path / "p.csv")
    report = grade_csv(perfect, competition)
    assert report.valid_submission, report.invalid_reason
    assert report.score == BEST[get_competition(competition_id).metric]


def test_replicas_command(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    result = CliRunner().invoke(
        replicas_app,
        ["--out", str(out), "-c", "spooky-author-identification", "--dojo"],
    )
    assert result.exit_code == 0, result.output
    assert "wrote 1 micro replicas" in result.output
    assert (out / "spooky-author-identification/prepared/private/test.csv").is_file()
    assert (out / "mle-dojo/spooky-author-identification/data/private/test_answer.csv").is_file()
