"""Seq2seq (text normalization) and image-to-image (denoising) tasks: the lite seeds keep
their structure; formats, metric values and invalid submissions; the learnability gate."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from sandmle.benchmarks.synthetic.artifacts import PublicData
from sandmle.benchmarks.synthetic.blueprint import TaskRequest
from sandmle.benchmarks.synthetic.modalities import denoise, seq2seq_en, seq2seq_learners
from sandmle.benchmarks.synthetic.modalities.denoise_features import noisy_copy
from sandmle.benchmarks.synthetic.pipeline import generate_task
from sandmle.benchmarks.synthetic.sanity import check_task
from sandmle.benchmarks.synthetic.seeds import LITE_SEEDS, SEEDS, get_seed
from sandmle.benchmarks.synthetic.strategist import plan
from sandmle.harness.competition import load_competition
from sandmle.harness.grading.report import grade_frame

TEXT_NORMALIZATION = (
    "text-normalization-challenge-english-language",
    "text-normalization-challenge-russian-language",
)
DENOISING = "denoising-dirty-documents"
LITE_CSV = Path(__file__).parents[2] / "fixtures/mlebench/lite-competitions.csv"
# MLE-bench-lite's task type names -> the generator's
TASK_TYPES = {"sequence-to-sequence": "seq2seq", "image-to-image-regression": "image-to-image"}


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("s2s-denoise")
    roots = {}
    for index, seed in enumerate((TEXT_NORMALIZATION[0], DENOISING)):
        outcome = generate_task(get_seed(seed), index, 5, out, max_attempts=4)
        assert outcome.task_id, [r.failures for r in outcome.rejections]
        roots[seed] = out / outcome.task_id
    return roots


def _report(root: Path, frame: pd.DataFrame):
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    parsed = pd.read_csv(io.StringIO(buffer.getvalue()))
    return grade_frame(parsed, load_competition(root))


def _answers(root: Path) -> pd.DataFrame:
    return pd.read_csv(root / "prepared/private/answers.csv")


# ---------------------------------------------------------------- seeds keep their task type


def test_lite_seeds_keep_seq2seq_and_image_to_image():
    for seed in TEXT_NORMALIZATION:
        assert SEEDS[seed].task_type == "seq2seq" and SEEDS[seed].modality == "text"
    assert SEEDS[DENOISING].task_type == "image-to-image" and SEEDS[DENOISING].modality == "image"
    assert set(TEXT_NORMALIZATION) | {DENOISING} <= set(LITE_SEEDS)


def test_task_types_match_mle_bench_lite_table():
    rows = {r["id"]: r for r in csv.DictReader(LITE_CSV.open(encoding="utf-8"))}
    for seed_id, row in rows.items():
        if row["task_type"] in TASK_TYPES:
            assert SEEDS[seed_id].task_type == TASK_TYPES[row["task_type"]], seed_id
            assert SEEDS[seed_id].original_modality == row["modality"]
            assert SEEDS[seed_id].metric == row["metric"]
    assert sum(row["task_type"] in TASK_TYPES for row in rows.values()) == 3


def test_russian_seed_writes_cyrillic_tokens(tmp_path):
    outcome = generate_task(get_seed(TEXT_NORMALIZATION[1]), 2, 5, tmp_path, max_attempts=4)
    assert outcome.task_id, outcome.rejections
    train = pd.read_csv(tmp_path / outcome.task_id / "prepared/public/train.csv")
    changed = train[train["before"] != train["after"]]
    assert changed["after"].str.contains("[а-я]").mean() > 0.9
    assert train["before"].str.contains("[а-яА-Я]").mean() > 0.4  # plain words are Russian


# ---------------------------------------------------------------- seq2seq task


def test_seq2seq_files_follow_the_text_normalization_format(tasks):
    root = tasks[TEXT_NORMALIZATION[0]]
    public = root / "prepared/public"
    train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
    sample, answers = pd.read_csv(public / "sample_submission.csv"), _answers(root)
    assert list(train.columns) == ["id", "sentence_id", "token_id", "class", "before", "after"]
    assert list(test.columns) == ["id", "sentence_id", "token_id", "before"]
    assert list(sample.columns) == list(answers.columns) == ["id", "after"]
    ids = test["sentence_id"].astype(str) + "_" + test["token_id"].astype(str)
    assert (ids == test["id"]).all() and list(answers["id"]) == list(test["id"])
    assert (sample["after"] == test["before"]).all()  # Kaggle's sample copies `before`
    assert not answers["after"].isna().any() and not train["after"].isna().any()
    unchanged = (train["before"] == train["after"]).mean()
    assert 0.6 < unchanged < 0.95  # most tokens are "<self>", as in the real data
    digits = train[train["before"].str.fullmatch(r"\d{1,3}")]
    assert digits["after"].str.fullmatch(r"[a-z ]+|\d{1,3}").all()


def test_seq2seq_ladder_copy_lookup_rules(tasks):
    root = tasks[TEXT_NORMALIZATION[0]]
    scores = json.loads((root / "generation/baselines.json").read_text())
    t = load_competition(root).config.thresholds
    assert scores["constant"] < t.median < scores["generic"] < t.gold <= scores["structure"]
    assert [f.reason for f in check_task(root) if f.severity == "error"] == []


def test_seq2seq_accuracy_on_a_hand_worked_submission(tasks):
    root = tasks[TEXT_NORMALIZATION[0]]
    answers = _answers(root)
    assert _report(root, answers).score == 1.0
    wrong = answers.copy()
    wrong.loc[:9, "after"] = wrong.loc[:9, "after"] + "x"  # 10 tokens wrong
    assert _report(root, wrong).score == pytest.approx(1 - 10 / len(answers), abs=5e-6)
    upper = answers.assign(after=answers["after"].str.upper())  # case counts
    changed = (upper["after"] != answers["after"]).sum()
    assert _report(root, upper).score == pytest.approx(1 - changed / len(answers), abs=5e-6)
    shuffled = answers.sample(frac=1.0, random_state=0)  # row order does not matter
    assert _report(root, shuffled).score == 1.0


@pytest.mark.parametrize(
    ("break_it", "reason"),
    [
        (lambda a: a.iloc[1:], r"rows, expected"),
        (lambda a: a.rename(columns={"after": "text"}), r"missing column"),
        (lambda a: a.drop(columns="id"), r"missing column"),
        (lambda a: a.assign(id=a["id"].where(a.index != 0, a["id"].iloc[1])), r"duplicate id"),
        (lambda a: a.assign(id=a["id"].where(a.index != 0, "99999_0")), r"not in the test set"),
        (lambda a: a.assign(after=a["after"].where(a.index != 0, None)), r"missing values"),
    ],
)
def test_seq2seq_invalid_submissions_are_invalid_not_crashes(tasks, break_it, reason):
    root = tasks[TEXT_NORMALIZATION[0]]
    report = _report(root, break_it(_answers(root)))
    assert not report.valid_submission and report.score is None
    assert re.search(reason, report.invalid_reason or "")


def test_seq2seq_learners_see_only_public_files(tasks):
    root = tasks[TEXT_NORMALIZATION[0]]
    data = PublicData.from_folder(root / "prepared/public")
    rule = json.loads((root / "generation/rule.json").read_text())
    classes = rule["params"]["structure"]["classes"]
    fitted = seq2seq_learners.fit_variants(data.train, classes)  # variants read off train.csv
    assert {c: v for c, v in fitted.items() if c in seq2seq_en.VARIANTS} == rule["params"][
        "variants"
    ]
    lookup = seq2seq_learners.lookup_predict(data.train, data.test)[:, 0]
    unseen = ~data.test["before"].isin(set(data.train["before"]))
    assert (lookup[unseen.to_numpy()] == data.test["before"][unseen]).all()  # copy fallback


def test_seq2seq_structure_no_better_than_lookup_is_rejected(tmp_path, monkeypatch):
    monkeypatch.setattr(
        seq2seq_learners,
        "structure_predict",
        lambda train, test, classes, code="en": seq2seq_learners.lookup_predict(train, test),
    )
    outcome = generate_task(get_seed(TEXT_NORMALIZATION[1]), 0, 5, tmp_path, max_attempts=2)
    assert outcome.task_id is None
    reasons = [f.reason for r in outcome.rejections for f in r.failures]
    assert len(reasons) == 2 and all("too close to generic" in r for r in reasons)


def test_seq2seq_oracle_equal_to_answers_is_caught(tasks, tmp_path):
    source = tasks[TEXT_NORMALIZATION[0]]
    root = Path(shutil.copytree(source, tmp_path / source.name))
    (root / "generation/submissions/oracle.csv").write_bytes(
        (root / "prepared/private/answers.csv").read_bytes()
    )
    assert [f.rule for f in check_task(root, ["oracle_not_answers"])] == ["oracle_not_answers"]


# ---------------------------------------------------------------- denoising task


def test_denoising_files_follow_the_dirty_documents_format(tasks):
    root = tasks[DENOISING]
    public = root / "prepared/public"
    bp = json.loads((root / "generation/blueprint.json").read_text())
    size = bp["params"]["size"]
    noisy = sorted((public / "train").glob("*.png"))
    assert [p.name for p in noisy] == sorted(
        p.name for p in (public / "train_cleaned").glob("*.png")
    )
    assert len(noisy) == bp["params"]["n_train_images"]
    tests = sorted((public / "test").glob("*.png"))
    assert len(tests) == bp["params"]["n_test_images"]
    for path in noisy[:2] + tests[:2]:
        image = Image.open(path)
        assert image.mode == "L" and image.size == (size, size)
    answers, test = _answers(root), pd.read_csv(public / "test.csv")
    assert list(answers.columns) == ["id", "value"] and list(answers["id"]) == list(test["id"])
    assert len(answers) == len(tests) * size * size
    assert answers["value"].between(0, 1).all()
    first = tests[0].stem
    assert f"{first}_1_1" in set(answers["id"]) and f"{first}_{size}_{size}" in set(answers["id"])
    assert f"{first}_0_1" not in set(answers["id"])  # 1-based rows and columns
    # train.csv's values are train_cleaned/ read row-major, divided by 255
    train = pd.read_csv(public / "train.csv")
    stem = noisy[0].stem
    clean = np.asarray(Image.open(public / "train_cleaned" / f"{stem}.png"), dtype=float) / 255
    rows = train[train["image"] == int(stem)]
    assert np.allclose(rows["value"].to_numpy(), clean.ravel(), atol=1e-6)
    sample = pd.read_csv(public / "sample_submission.csv")
    assert (sample["value"] == 1).all() and list(sample["id"]) == list(test["id"])


def test_denoising_rmse_on_a_hand_worked_submission(tasks):
    root = tasks[DENOISING]
    answers = _answers(root)
    assert _report(root, answers).score == 0.0
    shifted = answers.assign(value=answers["value"] + 0.1)
    assert _report(root, shifted).score == pytest.approx(0.1, abs=1e-5)
    half = answers.copy()
    half.loc[: len(half) // 2 - 1, "value"] += 0.2  # half the pixels off by 0.2
    assert _report(root, half).score == pytest.approx(np.sqrt(0.02), abs=1e-5)
    outside = answers.assign(value=answers["value"] + 2.0)  # not clipped, simply scored
    assert _report(root, outside).score == pytest.approx(2.0, abs=1e-5)


@pytest.mark.parametrize(
    ("break_it", "reason"),
    [
        (lambda a: a.iloc[:-1], r"rows, expected"),
        (lambda a: a.rename(columns={"value": "pixel"}), r"missing column"),
        (lambda a: a.assign(value="white"), r"not numeric"),
        (lambda a: a.assign(value=a["value"].where(a.index != 3, np.nan)), r"NaN"),
        (lambda a: a.assign(id=a["id"].where(a.index != 0, "1_0_0")), r"not in the test set"),
    ],
)
def test_denoising_invalid_submissions_are_invalid_not_crashes(tasks, break_it, reason):
    root = tasks[DENOISING]
    report = _report(root, break_it(_answers(root)))
    assert not report.valid_submission and report.score is None
    assert re.search(reason, report.invalid_reason or "")


def test_denoising_ladder_and_noisy_copy_sit_where_they_should(tasks):
    root = tasks[DENOISING]
    scores = json.loads((root / "generation/baselines.json").read_text())
    t = load_competition(root).config.thresholds
    assert scores["constant"] > t.median > scores["generic"] > t.gold >= scores["structure"]
    data = PublicData.from_folder(root / "prepared/public")
    copy = pd.DataFrame({"id": data.test["id"], "value": noisy_copy(data)[:, 0]})
    report = _report(root, copy)
    assert report.valid_submission and not report.above_median  # doing nothing earns nothing
    sample = pd.read_csv(root / "prepared/public/sample_submission.csv")
    assert not _report(root, sample).above_median
    assert [f.reason for f in check_task(root) if f.severity == "error"] == []


def test_degradation_kinds_vary_between_tasks():
    forms = {
        tuple(plan(TaskRequest(index=i, dna=SEEDS[DENOISING], entropy=[3, i, 0])).form)
        for i in range(12)
    }
    assert len(forms) >= 4 and all(set(f) <= set(denoise.NOISES) for f in forms)
    classes = {
        tuple(plan(TaskRequest(index=i, dna=SEEDS[TEXT_NORMALIZATION[0]], entropy=[3, i, 0])).form)
        for i in range(12)
    }
    assert len(classes) >= 8 and all(set(c) <= set(seq2seq_en.CLASSES) for c in classes)
