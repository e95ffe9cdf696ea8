"""The pack-level transfer gate."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from sandmle.benchmarks.synthetic import transfer
from sandmle.benchmarks.synthetic.packs import PackSpec, generate_pack
from sandmle.benchmarks.synthetic.transfer import (
    FOLDS,
    LEAVE_ONE_OUT_MAX,
    held_out_sets,
    transfer_failures,
)
from sandmle.harness.pack import load_pack


def _task(pack: Path, seed_task: str) -> str:
    return next(t.id for t in load_pack(pack).manifest.tasks if t.seed_task == seed_task)


def test_a_task_the_other_tasks_already_solve_is_caught(small_pack: Path, tmp_path: Path):
    """A copy of a task under another id teaches its twin everything: the gate must see it."""
    original = _task(small_pack, "aerial-cactus-identification")
    shutil.copytree(small_pack / original, tmp_path / original)
    twin = Path(shutil.copytree(small_pack / original, tmp_path / "twin-999"))
    config = yaml.safe_load((twin / "competition.yaml").read_text())
    (twin / "competition.yaml").write_text(yaml.safe_dump({**config, "id": "twin-999"}))
    failures = transfer_failures(tmp_path, [original, "twin-999"])
    assert set(failures) == {original, "twin-999"}
    assert "trained on 1 other image task(s)" in failures[original]


@pytest.mark.slow
def test_accepted_binary_image_tasks_pass_the_gate(tmp_path: Path):
    seeds = [
        "aerial-cactus-identification",
        "histopathologic-cancer-detection",
        "siim-isic-melanoma-classification",
    ]
    spec = PackSpec(n=3, seed=2, seed_ids=seeds, secret="transfer-test-secret")
    outcomes = generate_pack(spec, tmp_path / "p", workers=2, progress=False)
    ids = [o.task_id for o in outcomes if o.task_id]
    assert ids and transfer_failures(tmp_path / "p", ids) == {}
    for outcome in outcomes:  # every regenerated or dropped slot says why
        transfers = [f for r in outcome.rejections for f in r.failures if f.rule == "transfer"]
        assert all("trained on" in f.reason for f in transfers)


def test_an_audio_twin_is_caught_and_distinct_audio_tasks_pass(small_pack: Path, tmp_path: Path):
    """Audio tasks share the call bank's feature space: a copy under another id is caught;
    two whale-like tasks with their own call mappings and bands are not."""
    original = _task(small_pack, "the-icml-2013-whale-challenge-right-whale-redux")
    shutil.copytree(small_pack / original, tmp_path / "twins" / original)
    twin = Path(shutil.copytree(small_pack / original, tmp_path / "twins" / "twin-998"))
    config = yaml.safe_load((twin / "competition.yaml").read_text())
    (twin / "competition.yaml").write_text(yaml.safe_dump({**config, "id": "twin-998"}))
    failures = transfer_failures(tmp_path / "twins", [original, "twin-998"])
    assert set(failures) == {original, "twin-998"}
    assert "trained on 1 other audio task(s)" in failures[original]

    seeds = ["the-icml-2013-whale-challenge-right-whale-redux"] * 2
    spec = PackSpec(n=2, seed=3, seed_ids=seeds, secret="transfer-test-secret")
    outcomes = generate_pack(spec, tmp_path / "p", workers=2, progress=False)
    ids = [o.task_id for o in outcomes if o.task_id]
    assert len(ids) == 2 and transfer_failures(tmp_path / "p", ids) == {}


@pytest.mark.parametrize("n", [2, 24, 25, 125, 400])
def test_every_task_is_held_out_once_and_small_groups_stay_leave_one_out(n: int) -> None:
    """Up to 24 tasks the gate is the leave-one-out it always was (same bytes for such
    packs); past that each fit leaves out one fold, and every task is still graded once by a
    model that never saw it."""
    held = held_out_sets(n)
    assert sorted(i for fold in held for i in fold) == list(range(n))
    if n <= LEAVE_ONE_OUT_MAX:
        assert held == [[i] for i in range(n)]
    else:
        assert len(held) == FOLDS and max(len(f) for f in held) <= -(-n // FOLDS)


def test_features_are_computed_in_parallel_and_reused_only_while_the_files_are_the_same(
    small_pack: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A later gate round reuses the features of the tasks it did not regenerate; a task
    whose files changed under the same id is computed again; workers give the same arrays."""
    original = _task(small_pack, "aerial-cactus-identification")
    ids = [original, "twin-997"]
    for task_id in ids:
        shutil.copytree(small_pack / original, tmp_path / task_id)
    monkeypatch.setattr(transfer, "_CACHE", {})
    parallel = transfer._features(tmp_path, "image", ids, workers=2)
    monkeypatch.setattr(transfer, "_CACHE", {})
    serial = transfer._features(tmp_path, "image", ids, workers=1)
    for (a_train, a_test), (b_train, b_test) in zip(parallel, serial, strict=True):
        assert np.array_equal(a_train, b_train) and np.array_equal(a_test, b_test)
    assert transfer._features(tmp_path, "image", ids, workers=1)[0][0] is serial[0][0]
    train_csv = tmp_path / ids[0] / "prepared" / "public" / "train.csv"
    rows = train_csv.read_text().splitlines()
    train_csv.write_text("\n".join(rows[:-1]) + "\n")  # same id, other contents
    changed = transfer._features(tmp_path, "image", ids, workers=1)
    assert len(changed[0][0]) == len(serial[0][0]) - 1
    assert changed[1][0] is serial[1][0]
