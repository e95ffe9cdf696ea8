"""MLE-Dojo's rules (``-T grader=dojo``) on every Dojo-layout replica, against both references.

Each replica is graded on a set of hand-made variants of its answers and sample submission
(shuffled rows, extra/missing columns, wrong ids, NaN, text in a number column, ...):

* with MLE-Dojo's own metric classes, where the ``mledojo`` package is importable: validity must
  agree on every variant and scores within 1e-9 (the parity acceptance check);
* with MLE-bench's rules (our lite graders): both graders run on every variant, and the variants
  where they are known to differ (Dojo rejects extra columns, NYC taxi is MSE, ...) do differ.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import sandmle.benchmarks.mle_bench.graders  # noqa: F401  (registers the lite graders)
from sandmle.benchmarks.mle_bench.competitions import get_competition, grader_name
from sandmle.benchmarks.mle_dojo import competitions as dojo
from sandmle.benchmarks.mle_dojo.graders import RULES, UNGRADABLE, dojo_grade
from sandmle.benchmarks.mle_dojo.replicas import (
    DOJO_SUBDIR,
    NOT_IN_DOJO,
    build_replicas_with_dojo,
)
from sandmle.errors import InvalidSubmission
from sandmle.harness.competition import load_competition
from sandmle.harness.grading.reading import read_csv_reference
from sandmle.harness.grading.registry import get_grader

DOJO_REPLICAS = sorted(set(RULES) - set(NOT_IN_DOJO))
HAS_MLEDOJO = importlib.util.find_spec("mledojo") is not None
Variant = Callable[[pd.DataFrame, pd.DataFrame, np.random.Generator], pd.DataFrame]


def _numeric_targets(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns[1:] if pd.api.types.is_numeric_dtype(frame[c])]


def _noisy(answers: pd.DataFrame, sample: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    frame = answers[[c for c in sample.columns if c in answers.columns]].copy()
    for column in _numeric_targets(frame):
        frame[column] = np.clip(frame[column] + rng.normal(0, 0.3, len(frame)), 0, None)
    return frame


def _with_nan(
    answers: pd.DataFrame, sample: pd.DataFrame, rng: np.random.Generator
) -> pd.DataFrame:
    frame = sample.copy()
    columns = _numeric_targets(frame) or list(frame.columns[1:])
    frame[columns[0]] = frame[columns[0]].astype(object)
    frame.loc[frame.index[0], columns[0]] = np.nan
    return frame


def _with_text(
    answers: pd.DataFrame, sample: pd.DataFrame, rng: np.random.Generator
) -> pd.DataFrame:
    frame = sample.copy()
    column = frame.columns[-1]
    frame[column] = frame[column].astype(object)
    frame.loc[frame.index[-1], column] = "oops"
    return frame


def _changed_id(
    answers: pd.DataFrame, sample: pd.DataFrame, rng: np.random.Generator
) -> pd.DataFrame:
    frame = sample.copy()
    first = frame.columns[0]
    frame[first] = frame[first].astype(object)
    frame.loc[frame.index[0], first] = "not-an-id"
    return frame


VARIANTS: dict[str, Variant] = {
    "sample": lambda a, s, r: s,
    "answers": lambda a, s, r: a,
    "answers-shuffled": lambda a, s, r: a.sample(frac=1.0, random_state=1),
    "sample-shuffled": lambda a, s, r: s.sample(frac=1.0, random_state=2),
    "columns-reversed": lambda a, s, r: s[list(reversed(s.columns))],
    "extra-column": lambda a, s, r: s.assign(extra=1),
    "missing-last-column": lambda a, s, r: s.drop(columns=[s.columns[-1]]),
    "row-dropped": lambda a, s, r: s.iloc[1:],
    "row-duplicated": lambda a, s, r: pd.concat([s.iloc[:-1], s.iloc[:1]]),
    "noisy": _noisy,
    "nan": _with_nan,
    "text-in-target": _with_text,
    "changed-id": _changed_id,
    "answers-columns-of-sample": lambda a, s, r: a[[c for c in s.columns if c in a.columns]],
}


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("replicas")
    build_replicas_with_dojo(out, DOJO_REPLICAS)
    return out


def _variant_files(folder: Path, tmp: Path) -> dict[str, Path]:
    answers = pd.read_csv(folder / dojo.PRIVATE / dojo.ANSWERS)
    sample = pd.read_csv(folder / dojo.PUBLIC / "sample_submission.csv")
    rng = np.random.default_rng(0)
    files = {}
    for name, make in VARIANTS.items():
        path = tmp / f"{folder.name}-{name}.csv"
        make(answers.copy(), sample.copy(), rng).to_csv(path, index=False)
        files[name] = path
    return files


def _ours(competition_id: str, submission: Path, answers: Path) -> float | None:
    try:
        return dojo_grade(
            competition_id, read_csv_reference(submission), read_csv_reference(answers)
        )
    except InvalidSubmission:
        return None


def _mledojo(competition_id: str, submission: Path, answers: Path) -> float | None:
    """MLE-Dojo's own two steps, as ``mledojo/gym/interface.py`` runs them."""
    metric = dojo.mledojo_metric_class(competition_id)()
    sub, truth = pd.read_csv(submission), pd.read_csv(answers)
    try:
        metric.validate_submission(sub, truth)
        return float(metric.evaluate(truth, sub))
    except Exception:  # noqa: BLE001 - MLE-Dojo fails the submission on any error
        return None


def _same(ours: float | None, theirs: float | None) -> bool:
    if ours is None or theirs is None:
        return ours is theirs
    if math.isnan(ours) or math.isnan(theirs):
        return math.isnan(ours) and math.isnan(theirs)
    return abs(ours - theirs) <= 1e-9


@pytest.mark.skipif(not HAS_MLEDOJO, reason="MLE-Dojo's mledojo package is not importable")
@pytest.mark.parametrize("competition_id", DOJO_REPLICAS)
def test_dojo_rules_match_mledojo(replicas: Path, tmp_path: Path, competition_id: str) -> None:
    folder = replicas / DOJO_SUBDIR / competition_id
    answers = folder / dojo.PRIVATE / dojo.ANSWERS
    disagreements = {}
    for name, path in _variant_files(folder, tmp_path).items():
        ours, theirs = _ours(competition_id, path, answers), _mledojo(competition_id, path, answers)
        if not _same(ours, theirs):
            disagreements[name] = (ours, theirs)
    assert disagreements == {}


@pytest.mark.parametrize("competition_id", DOJO_REPLICAS)
def test_both_graders_grade_every_replica(
    replicas: Path, tmp_path: Path, competition_id: str
) -> None:
    lite = get_competition(competition_id)
    mlebench_answers = replicas / competition_id / lite.answers
    folder = replicas / DOJO_SUBDIR / competition_id
    config = load_competition(replicas / competition_id).config
    grade_mlebench = get_grader(grader_name(competition_id))
    outcomes = {}
    for name, path in _variant_files(folder, tmp_path).items():
        try:
            theirs = grade_mlebench(
                read_csv_reference(path), read_csv_reference(mlebench_answers), config
            )
        except InvalidSubmission:
            theirs = None
        ours = _ours(competition_id, path, folder / dojo.PRIVATE / dojo.ANSWERS)
        outcomes[name] = (ours, theirs)
    assert outcomes["answers-columns-of-sample"][0] is not None  # the answers pass Dojo's rules
    assert outcomes["extra-column"][0] is None  # Dojo rejects any column the answers lack
    assert outcomes["row-dropped"] == (None, None)


def test_dojo_scores_nyc_taxi_as_mse_and_mlebench_as_rmse(replicas: Path, tmp_path: Path) -> None:
    cid = "new-york-city-taxi-fare-prediction"
    folder = replicas / DOJO_SUBDIR / cid
    path = _variant_files(folder, tmp_path)["noisy"]
    mse = _ours(cid, path, folder / dojo.PRIVATE / dojo.ANSWERS)
    config = load_competition(replicas / cid).config
    answers = read_csv_reference(replicas / cid / get_competition(cid).answers)
    rmse = get_grader(grader_name(cid))(read_csv_reference(path), answers, config)
    assert mse is not None and mse > 0
    assert math.sqrt(mse) == pytest.approx(rmse, abs=1e-12)


def test_jigsaw_needs_the_answers_row_order(replicas: Path, tmp_path: Path) -> None:
    cid = "jigsaw-toxic-comment-classification-challenge"
    folder = replicas / DOJO_SUBDIR / cid
    files = _variant_files(folder, tmp_path)
    answers = folder / dojo.PRIVATE / dojo.ANSWERS
    assert _ours(cid, files["answers"], answers) is not None
    assert _ours(cid, files["answers-shuffled"], answers) is None


def test_spooky_is_excluded_with_the_reason(tmp_path: Path) -> None:
    out = tmp_path / "r"
    build_replicas_with_dojo(out, ["spooky-author-identification"])
    folder = out / DOJO_SUBDIR / "spooky-author-identification"
    grading = dojo.choose_grading(folder, "dojo")
    assert grading.grader is None and "EAP,HPL,MWS" in (grading.unsupported or "")
    assert "spooky-author-identification" in UNGRADABLE
    assert dojo.choose_grading(folder, "mle-bench").grader is not None


@pytest.mark.parametrize(
    ("competition_id", "folders", "files", "absent"),
    [
        ("dogs-vs-cats-redux-kernels-edition", ["train", "test"], [], ["train.zip", "test.zip"]),
        ("aerial-cactus-identification", ["train", "test"], ["train.csv"], ["train.zip"]),
        (
            "the-icml-2013-whale-challenge-right-whale-redux",
            ["train2", "test2"],
            [],
            ["train2.zip", "sampleSubmission.csv"],
        ),
        (
            "text-normalization-challenge-english-language",
            [],
            ["en_train.csv", "en_test_2.csv"],
            ["en_train.csv.zip", "en_sample_submission_2.csv"],
        ),
        (
            "detecting-insults-in-social-commentary",
            [],
            ["train.csv"],
            ["sample_submission_null.csv"],
        ),
    ],
)
def test_dojo_layout_follows_dojos_prepare(
    replicas: Path,
    competition_id: str,
    folders: list[str],
    files: list[str],
    absent: list[str],
) -> None:
    public = replicas / DOJO_SUBDIR / competition_id / dojo.PUBLIC
    for name in folders:
        assert any((public / name).iterdir()), name
    for name in [*files, "sample_submission.csv", "description.txt"]:
        assert (public / name).is_file(), name
    for name in absent:
        assert not (public / name).exists(), name
    private = sorted(p.name for p in (public.parent / "private").iterdir())
    assert private == ["private_leaderboard.csv", "public_leaderboard.csv", "test_answer.csv"]


def test_dojo_answers_are_what_dojo_writes(replicas: Path) -> None:
    insults = replicas / DOJO_SUBDIR / "detecting-insults-in-social-commentary"
    answers = pd.read_csv(insults / dojo.PRIVATE / dojo.ANSWERS, nrows=0)
    assert list(answers.columns) == ["Insult", "Date", "Comment"]  # MLE-bench's gold submission
    ranzcr = replicas / DOJO_SUBDIR / "ranzcr-clip-catheter-line-classification"
    sample = pd.read_csv(ranzcr / dojo.PUBLIC / "sample_submission.csv")
    truth = pd.read_csv(ranzcr / dojo.PRIVATE / dojo.ANSWERS)
    assert list(sample.columns) == list(truth.columns)  # the whole test table, classes copied
    assert (sample["ETT - Normal"] == truth["ETT - Abnormal"]).all()
