"""An interrupted training run resumes from its newest complete checkpoint: GRPO through the
training CLI on real episodes (the reproduce stage's path), the checkpoint helpers on folders."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")

from transformers import TrainingArguments

from sandmle.errors import SandmleError
from sandmle.specs.checkpoint import TRAINER_STATE, last_complete_checkpoint, saved_checkpoints
from sandmle.training.checkpoints import resume_point
from sandmle.training.grpo import supersede_rollouts
from tests.conftest import FIXTURES
from tests.training.conftest import TASKS

CONFIG = Path(__file__).resolve().parents[2] / "sandmle" / "configs" / "train" / "tiny-cpu.yaml"


def checkpoint(root: Path, step: int, complete: bool = True) -> Path:
    folder = root / f"checkpoint-{step}"
    folder.mkdir(parents=True)
    if complete:
        (folder / TRAINER_STATE).write_text("{}")
    return folder


def args(out: Path, wanted: str | bool | None) -> TrainingArguments:
    # YAML's `true` reaches TrainingArguments as a bool, whatever its field's type says
    return TrainingArguments(
        output_dir=str(out),
        resume_from_checkpoint=wanted,  # type: ignore[arg-type]
        report_to="none",
    )


def test_resume_point_skips_a_save_cut_short(tmp_path: Path) -> None:
    checkpoint(tmp_path, 2)
    checkpoint(tmp_path, 10)
    checkpoint(tmp_path, 12, complete=False)  # killed mid-save: no trainer_state.json
    (tmp_path / "checkpoint-final").mkdir()  # not a step
    assert [p.name for p in saved_checkpoints(tmp_path)] == [
        "checkpoint-2",
        "checkpoint-10",
        "checkpoint-12",
    ]
    assert last_complete_checkpoint(tmp_path) == tmp_path / "checkpoint-10"
    assert resume_point(args(tmp_path, True)) == tmp_path / "checkpoint-10"
    assert resume_point(args(tmp_path, "true")) == tmp_path / "checkpoint-10"
    assert resume_point(args(tmp_path, None)) is None
    assert resume_point(args(tmp_path, str(tmp_path / "checkpoint-2"))) == tmp_path / "checkpoint-2"
    with pytest.raises(SandmleError, match="not a finished checkpoint"):
        resume_point(args(tmp_path, str(tmp_path / "checkpoint-12")))


def test_true_with_nothing_saved_is_a_fresh_start(tmp_path: Path) -> None:
    assert resume_point(args(tmp_path / "new", True)) is None


def test_supersede_moves_only_the_steps_a_resume_redoes(tmp_path: Path) -> None:
    for step in (0, 1, 2):
        (tmp_path / f"step-{step:06d}" / "rank-0").mkdir(parents=True)
        (tmp_path / f"step-{step:06d}" / "rank-0" / "x.eval").write_text(str(step))
    moved = supersede_rollouts(tmp_path, 1)
    assert sorted(p.name for p in tmp_path.glob("step-*")) == ["step-000000"]
    assert [p.name for p in moved] == ["step-000001", "step-000002"]
    assert all(p.parent.parent.name == "superseded" for p in moved)
    assert (moved[1] / "rank-0" / "x.eval").read_text() == "2"  # kept, not deleted
    assert supersede_rollouts(tmp_path, 5) == []


def train(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sandmle.training.cli", "grpo", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_grpo_run_killed_after_a_step_resumes_there(tiny_model: Path, tmp_path: Path) -> None:
    """A run that lost its step-2 checkpoint redoes step 2 only: step 1's logged reward comes
    back from the checkpoint and its episodes are not rerun; step 2's first episodes are kept
    aside, out of the per-step folders."""
    pack = tmp_path / "pack"
    for name in TASKS:
        shutil.copytree(FIXTURES / name, pack / name)
    out = tmp_path / "run"
    spec = yaml.safe_load(CONFIG.read_text())
    spec["model"] = str(tiny_model)
    spec["rollout"]["pack"] = str(pack)
    spec["training"].update(output_dir=str(out), save_steps=1, resume_from_checkpoint=True)
    config = tmp_path / "grpo.yaml"
    config.write_text(yaml.safe_dump(spec))

    first = train(config)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    history = json.loads((out / "checkpoint-2" / TRAINER_STATE).read_text())["log_history"]
    step_one = next(h for h in history if h.get("step") == 1 and "reward" in h)
    logs_before = {p.relative_to(out): p.stat().st_mtime for p in out.rglob("*.eval")}
    shutil.rmtree(out / "checkpoint-2")  # the run died before its last save

    second = train(config)
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]
    history = json.loads((out / "checkpoint-2" / TRAINER_STATE).read_text())["log_history"]
    rewarded = [h for h in history if "reward" in h]
    assert [h["step"] for h in rewarded] == [1, 2]
    assert rewarded[0] == step_one  # restored from checkpoint-1, not trained again
    step_logs = sorted((out / "rollouts").glob("step-*/rank-*/*.eval"))
    assert [p.parts[-3] for p in step_logs] == ["step-000000", "step-000001"]
    kept = step_logs[0].relative_to(out)
    assert logs_before[kept] == step_logs[0].stat().st_mtime  # step 1's episodes not rerun
    assert step_logs[1].relative_to(out) not in logs_before  # step 2's episodes are new
    superseded = list((out / "rollouts" / "superseded").glob("*/step-000001/rank-*/*.eval"))
    assert len(superseded) == 1 and superseded[0].name in {p.name for p in logs_before}
