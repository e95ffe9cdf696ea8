"""Each sanity rule catches a deliberately broken task."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import yaml

from sandmle.benchmarks.synthetic.sanity import check_directory, check_task
from tests.benchmarks.synthetic.conftest import SMALL_SEEDS


def _rules(root: Path, *rules: str) -> set[str]:
    return {f.rule for f in check_task(root, list(rules)) if f.severity == "error"}


def _edit_thresholds(root: Path, **values: float) -> None:
    path = root / "competition.yaml"
    config = yaml.safe_load(path.read_text())
    config["thresholds"].update(values)
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def test_small_pack_passes_every_rule(small_pack):
    results = check_directory(small_pack)
    assert len(results) == len(SMALL_SEEDS)
    assert {t: [f.reason for f in fs if f.severity == "error"] for t, fs in results.items()} == {
        t: [] for t in results
    }


def test_equal_thresholds_are_not_strictly_monotonic(task_copy):
    root = task_copy()
    silver = yaml.safe_load((root / "competition.yaml").read_text())["thresholds"]["silver"]
    _edit_thresholds(root, bronze=silver)
    assert _rules(root, "thresholds_monotonic") == {"thresholds_monotonic"}


def test_median_above_bronze_is_caught(task_copy):
    root = task_copy()
    gold = yaml.safe_load((root / "competition.yaml").read_text())["thresholds"]["gold"]
    _edit_thresholds(root, median=gold)
    assert _rules(root, "thresholds_monotonic") == {"thresholds_monotonic"}


def test_out_of_order_medals_fail_to_load(task_copy):
    root = task_copy()
    _edit_thresholds(root, gold=0.0)
    assert {f.rule for f in check_task(root)} == {"competition_loads"}


def test_overlapping_ids_are_caught(task_copy):
    root = task_copy()
    public = root / "prepared/public"
    train, test = pd.read_csv(public / "train.csv"), pd.read_csv(public / "test.csv")
    id_column = train.columns[0]
    train.loc[0, id_column] = test.loc[0, id_column]
    train.to_csv(public / "train.csv", index=False)
    assert _rules(root, "ids_disjoint") == {"ids_disjoint"}


def test_answer_column_in_test_is_a_leak(task_copy):
    root = task_copy()
    answers = pd.read_csv(root / "prepared/private/answers.csv")
    test = pd.read_csv(root / "prepared/public/test.csv").merge(answers, on=answers.columns[0])
    test.to_csv(root / "prepared/public/test.csv", index=False)
    failures = check_task(root, ["no_answer_leak"])
    assert any("answer column" in f.reason for f in failures)


def test_renamed_answer_values_are_a_leak(task_copy):
    root = task_copy("nomad2018-predict-transparent-conductors")
    answers = pd.read_csv(root / "prepared/private/answers.csv")
    id_column, target = answers.columns[0], answers.columns[1]
    test = pd.read_csv(root / "prepared/public/test.csv")
    test = test.merge(answers[[id_column, target]].rename(columns={target: "hint"}), on=id_column)
    test.to_csv(root / "prepared/public/test.csv", index=False)
    failures = check_task(root, ["no_answer_leak"])
    assert any("'hint' equals the answer" in f.reason for f in failures)


def test_answers_copied_into_public_is_a_leak(task_copy):
    root = task_copy()
    (root / "prepared/public/answers.csv").write_bytes(
        (root / "prepared/private/answers.csv").read_bytes()
    )
    reasons = [f.reason for f in check_task(root, ["no_answer_leak"])]
    assert any("copy of the answers" in r for r in reasons)


def test_removed_file_named_in_description_is_caught(task_copy):
    root = task_copy()
    (root / "prepared/public/test.csv").unlink()
    failures = check_task(root, ["description_matches_files"])
    assert any("'test.csv', which does not exist" in f.reason for f in failures)


def test_undescribed_column_and_file_are_caught(task_copy):
    root = task_copy("aerial-cactus-identification")
    public = root / "prepared/public"
    train = pd.read_csv(public / "train.csv").assign(extra=1)
    train.to_csv(public / "train.csv", index=False)
    (public / "notes.txt").write_text("hello")
    reasons = [f.reason for f in check_task(root, ["description_matches_files"])]
    assert "column 'extra' of train.csv is not described" in reasons
    assert "'notes.txt' exists but the description does not name it" in reasons


def test_changed_bytes_break_determinism(task_copy):
    root = task_copy("spooky-author-identification")
    path = root / "prepared/public/train.csv"
    path.write_text(path.read_text().replace(".", "!", 1))
    failures = check_task(root, ["deterministic"])
    assert failures and "prepared/public/train.csv" in failures[0].reason


def test_structure_learner_short_of_gold_is_caught(task_copy):
    root = task_copy()
    _edit_thresholds(root, gold=1.0, silver=0.99999)
    reasons = [f.reason for f in check_task(root, ["ladder_medals"])]
    assert any(r.startswith("structure-aware learner scores") for r in reasons)


def test_constant_at_median_is_caught(task_copy):
    root = task_copy()  # roc_auc: the best constant and the sample both score 0.5
    _edit_thresholds(root, gold=0.5, silver=0.4, bronze=0.3, median=0.2)
    reasons = [f.reason for f in check_task(root, ["ladder_medals", "sample_below_median"])]
    assert any(r.startswith("best constant scores 0.5, not below median") for r in reasons)
    assert any(r.startswith("sample submission scores 0.5, not below median") for r in reasons)
    assert any(r.startswith("generic learner scores") and "gold" in r for r in reasons)


def test_sample_exactly_at_median_is_caught(task_copy):
    root = task_copy()
    thresholds = yaml.safe_load((root / "competition.yaml").read_text())["thresholds"]
    _edit_thresholds(root, median=0.5, bronze=max(thresholds["bronze"], 0.50001))
    reasons = [f.reason for f in check_task(root, ["sample_below_median"])]
    assert reasons == ["sample submission scores 0.5, not below median 0.5"]


def test_milestones_closer_than_two_sigma_are_caught(task_copy):
    root = task_copy()
    t = yaml.safe_load((root / "competition.yaml").read_text())["thresholds"]
    sigma = json.loads((root / "generation/ladder.json").read_text())["sigma"]
    _edit_thresholds(root, silver=round(t["bronze"] + 1.5 * sigma, 5))
    reasons = [f.reason for f in check_task(root, ["noise_bands"])]
    assert len(reasons) == 1 and "need 2.0" in reasons[0]
    assert check_task(task_copy("spooky-author-identification"), ["noise_bands"]) == []


def test_oracle_equal_to_the_answers_is_caught(task_copy):
    root = task_copy("nomad2018-predict-transparent-conductors")
    (root / "generation/submissions/oracle.csv").write_bytes(
        (root / "prepared/private/answers.csv").read_bytes()
    )
    reasons = [f.reason for f in check_task(root, ["oracle_not_answers"])]
    assert reasons == ["the oracle's submission equals the answers"]


def test_invalid_baseline_submission_is_caught(task_copy):
    root = task_copy()
    path = root / "generation/submissions/generic.csv"
    frame = pd.read_csv(path)
    frame.iloc[:, 1] = 2.0  # probabilities outside [0, 1]
    frame.to_csv(path, index=False)
    reasons = [f.reason for f in check_task(root, ["grading_runs"])]
    assert any(r.startswith("generic submission invalid") for r in reasons)
