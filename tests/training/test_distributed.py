"""``accelerate launch --num_processes 2`` on CPU (gloo): one step of the same training, and
rollouts in vLLM server mode with the client on the main process only."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")

from tests.training.test_grpo import CONFIG

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def launch(*args: str) -> list[str]:
    with socket.socket() as s:  # a free port: other launches may run at the same time
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return [
        sys.executable, "-m", "accelerate.commands.launch",
        "--config_file", str(ROOT / "sandmle/configs/accelerate/cpu-2proc.yaml"),
        "--main_process_port", str(port), *args,
    ]  # fmt: skip


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "TRL_EXPERIMENTAL_SILENCE": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, cwd=ROOT)


def test_two_processes_run_one_grpo_step(tiny_model: Path, pack_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = run(
        launch(
            "-m",
            "sandmle.training.cli",
            "grpo",
            "--config",
            str(CONFIG),
            "--model",
            str(tiny_model),
            "--pack",
            str(pack_dir),
            "--output-dir",
            str(out),
            "--max-steps",
            "1",
        )  # fmt: skip
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "terminate called" not in done.stderr  # the process group is torn down cleanly
    ranks = sorted(p.name for p in (out / "rollouts" / "step-000000").iterdir())
    assert ranks == ["rank-0", "rank-1"]  # each process ran its own slice of episodes
    state = json.loads((out / "checkpoint-1" / "trainer_state.json").read_text())
    (step,) = [h for h in state["log_history"] if "reward" in h]
    assert step["step"] == 1 and "rewards/valid_reward/mean" in step
    assert json.loads((out / "checkpoint-1" / "sandmle_checkpoint.json").read_text())["step"] == 1
    shutil.rmtree(out / "rollouts")


def test_server_mode_serves_every_rank_from_the_main_process_client(
    tiny_model: Path, pack_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "fake-vllm"
    done = run(launch(str(HERE / "fake_vllm_rollout.py"), str(tiny_model), str(pack_dir), str(out)))
    assert done.returncode == 0, done.stderr[-3000:]
    main, other = (json.loads((out / f"rank-{r}.json").read_text()) for r in (0, 1))
    assert main["has_client"] and not other["has_client"]
    for rank in (main, other):
        # real episodes on both ranks: the sample submission was copied and graded valid
        assert [m["valid_submission"] for m in rank["medal"]] == [1.0, 1.0]
        assert all(r > 0.2 for r in rank["reward"])
        assert rank["metrics"]["rollout/dropped"][0] == 0
    # rank 1's turns (bike-rentals, 3 each) went through rank 0's client too: 2x2 + 2x3 turns
    assert sum(main["server_calls"]) == 2 * 2 + 2 * 3
    assert other["metrics"]["rollout/turns"][0] == 3.0
    # the server fails: every rank's step fails loudly with the backend's error, no reward of 0
    for rank in (main, other):
        assert "vllm-serve went away" in rank["fail_mode"]
        assert rank["dropped"] == [True, True]
        assert rank["drop_reward"] == [None, None] and rank["drop_mask_sum"] == [0, 0]


def test_two_processes_resume_where_the_last_save_left_off(
    tiny_model: Path, pack_dir: Path, tmp_path: Path
) -> None:
    """Rank 0 moves the redone step's episodes aside before any rank writes new ones; both
    ranks then run that step again from checkpoint-1."""
    out = tmp_path / "run"
    spec = yaml.safe_load(CONFIG.read_text())
    spec["training"].update(save_steps=1, resume_from_checkpoint=True)
    config = tmp_path / "grpo.yaml"
    config.write_text(yaml.safe_dump(spec))
    args = ["-m", "sandmle.training.cli", "grpo", "--config", str(config), "--model",
            str(tiny_model), "--pack", str(pack_dir), "--output-dir", str(out)]  # fmt: skip
    first = run(launch(*args))
    assert first.returncode == 0, first.stderr[-3000:]
    shutil.rmtree(out / "checkpoint-2")  # the run died before its last save
    second = run(launch(*args))
    assert second.returncode == 0, second.stderr[-3000:]
    logs = sorted(p.relative_to(out / "rollouts").parts[:2]
                  for p in (out / "rollouts").glob("step-*/rank-*/*.eval"))  # fmt: skip
    assert logs == [("step-000000", f"rank-{r}") for r in (0, 1)] + [
        ("step-000001", f"rank-{r}") for r in (0, 1)
    ]
    superseded = list((out / "rollouts" / "superseded").glob("*/step-000001/rank-*/*.eval"))
    assert len(superseded) == 2  # the first attempt's step 2, one log per rank
    state = json.loads((out / "checkpoint-2" / "trainer_state.json").read_text())
    assert [h["step"] for h in state["log_history"] if "reward" in h] == [1, 2]


def test_two_processes_refill_their_own_flat_groups(
    tiny_model: Path, pack_dir: Path, tmp_path: Path
) -> None:
    """``refill_flat_groups`` under two ranks: each process holds one whole group and refills
    it on a task its own call has not used, with no collective in between, so the step ends
    on both ranks and TRL logs the refills (the tiny model's rewards are flat: nothing
    submitted)."""
    out = tmp_path / "run"
    spec = yaml.safe_load(CONFIG.read_text())
    spec["rollout"]["refill_flat_groups"] = 2
    config = tmp_path / "grpo.yaml"
    config.write_text(yaml.safe_dump(spec))
    done = run(launch("-m", "sandmle.training.cli", "grpo", "--config", str(config), "--model",
                      str(tiny_model), "--pack", str(pack_dir), "--output-dir", str(out),
                      "--max-steps", "1"))  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    step = out / "rollouts" / "step-000000"
    for rank in ("rank-0", "rank-1"):
        assert list((step / rank / "refill-1").glob("*.eval")), rank
    state = json.loads((out / "checkpoint-1" / "trainer_state.json").read_text())
    (logged,) = [h for h in state["log_history"] if "reward" in h]
    assert logged["rollout/refilled_groups"] >= 1
