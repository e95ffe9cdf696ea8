"""The pack-level transfer gate."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from sandmle.benchmarks.synthetic.packs import PackSpec, generate_pack
from sandmle.benchmarks.synthetic.transfer import transfer_failures
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
