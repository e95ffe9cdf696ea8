"""``accelerate launch --num_processes 2`` on CPU (gloo) runs one step of the same training."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.training.test_grpo import CONFIG

ROOT = Path(__file__).resolve().parents[2]


def test_two_processes_run_one_grpo_step(tiny_model: Path, pack_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    cmd = [
        sys.executable, "-m", "accelerate.commands.launch",
        "--config_file", str(ROOT / "configs/accelerate/cpu-2proc.yaml"),
        "-m", "sandmle.training.cli", "grpo", "--config", str(CONFIG),
        "--model", str(tiny_model), "--pack", str(pack_dir),
        "--output-dir", str(out), "--max-steps", "1",
    ]  # fmt: skip
    env = {**os.environ, "TRL_EXPERIMENTAL_SILENCE": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    ranks = sorted(p.name for p in (out / "rollouts" / "step-000000").iterdir())
    assert ranks == ["rank-0", "rank-1"]  # each process ran its own slice of episodes
    state = json.loads((out / "checkpoint-1" / "trainer_state.json").read_text())
    (step,) = [h for h in state["log_history"] if "reward" in h]
    assert step["step"] == 1 and "rewards/valid_reward/mean" in step
    assert json.loads((out / "checkpoint-1" / "sandmle_checkpoint.json").read_text())["step"] == 1
    shutil.rmtree(out / "rollouts")
