"""``sandmle reproduce --profile toy``, for real: every stage's outcome (slow, a few minutes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandmle.leaderboard import reproduce_view as view
from sandmle.leaderboard.logs import load_logs
from sandmle.specs.checkpoint import checkpoint_info, checkpoint_label
from sandmle.specs.profile import load_profile

pytestmark = pytest.mark.slow

STAGES = ["packs", "replicas", "base", "teacher", "sft", "grpo-dense", "grpo-sparse", "eval"]


def _reproduce(out: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "sandmle.cli", "reproduce", "--profile", "toy", "--out", str(out)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    # outside the checkout: there 'sandmle/<task>' would name the source folder
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=5400)


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("toy")
    done = _reproduce(root / "out", root)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    return root / "out", done.stdout


def test_every_stage_finished(toy: tuple[Path, str]) -> None:
    out, _ = toy
    outcome = {s: json.loads((out / "stages" / f"{s}.json").read_text()) for s in STAGES}
    packs = outcome["packs"]
    assert packs["train_tasks"] == 2 and packs["heldout_tasks"] == 2
    assert packs["train_secret"] != packs["heldout_secret"]
    train_data = {p.read_bytes() for p in (out / "packs" / "train").rglob("train.csv")}
    heldout_data = {p.read_bytes() for p in (out / "packs" / "heldout").rglob("train.csv")}
    assert heldout_data and not heldout_data & train_data  # no held-out data seen in training
    assert outcome["replicas"] == {**outcome["replicas"], "replicas": 1, "dojo_replicas": 1}


def test_checkpoints_are_written_and_labelled(toy: tuple[Path, str]) -> None:
    out, _ = toy
    manifest = view.read_manifest(out)
    labels = {role: checkpoint_label(checkpoint_info(m)) for role, m in manifest["roles"].items()}
    assert labels == {"base": "base", "SFT": "SFT step 2", "GRPO": "GRPO step 2",
                      "GRPO-sparse": "GRPO-sparse step 2"}  # fmt: skip
    sft = checkpoint_info(manifest["roles"]["SFT"])
    assert sft.kind == "sft" and sft.base_model == str(out / "models" / "base")
    for role, mode in (("GRPO", "dense"), ("GRPO-sparse", "sparse")):
        info = checkpoint_info(manifest["roles"][role])
        assert info.kind == "grpo" and info.reward_mode == mode
        assert info.base_model == manifest["roles"]["SFT"].removeprefix("hf/")  # same start


def test_every_eval_succeeded_without_errors(toy: tuple[Path, str]) -> None:
    out, _ = toy
    profile, _ = load_profile("toy")
    health = json.loads((out / "stages" / "eval.json").read_text())
    cells = 4 * len(profile.eval.scaffolds) * len(profile.eval.benchmarks)
    assert health["success"] and health["logs"] == cells == health["cells"]
    assert health["unfinished"] == health["sample_errors"] == health["agent_errors"] == 0
    assert health["samples"] == 4 * len(profile.eval.scaffolds) * (2 + 1 + 1)


def test_the_report_holds_every_cell(toy: tuple[Path, str]) -> None:
    out, stdout = toy
    profile, _ = load_profile("toy")
    manifest = view.read_manifest(out)
    samples = view.with_roles(load_logs([out / "eval"]).samples, manifest)
    cells = view.cell_table(samples, manifest)
    assert len(cells) == 4 * len(profile.eval.scaffolds) * 3
    assert set(cells["bench"]) == {"held-out", "lite", "dojo"}
    shown = set(zip(cells["bench"], cells["n"], strict=True))
    assert shown == {("held-out", 2), ("lite", 1), ("dojo", 1)}
    pairs = view.paired_table(samples, manifest)
    assert {(a, b) for a, b in zip(pairs["A"], pairs["B"], strict=True)} == {
        ("GRPO", "SFT"), ("GRPO", "GRPO-sparse")}  # fmt: skip
    assert "too few" in stdout  # 2 shared tasks per benchmark: no power, said so
    report = stdout.splitlines()
    report = report[next(i for i, line in enumerate(report) if "valid / medal" in line) :]
    assert max(map(len, report)) <= 80  # the report's tables, without a terminal
    curves = view.read_curves(out)
    assert {"reward", "valid rate"} <= set(curves["metric"])
    assert set(curves["run"]) == {"grpo-dense", "grpo-sparse"}
    assert "plotly" in (out / "report.html").read_text()


def test_a_rerun_skips_every_finished_stage(toy: tuple[Path, str]) -> None:
    out, _ = toy
    again = _reproduce(out, out.parent)
    assert again.returncode == 0, again.stderr[-2000:]
    skipped = [line for line in again.stdout.splitlines() if "done earlier, skipped" in line]
    assert len(skipped) == len(STAGES)


def test_a_checkpoint_evaluates_with_inspect_eval_as_it_is(toy: tuple[Path, str]) -> None:
    """``inspect eval --model hf/<checkpoint dir>``, the command a user would type."""
    out, _ = toy
    folder = view.read_manifest(out)["roles"]["GRPO-sparse"].removeprefix("hf/")
    pack = out / "packs" / "heldout"
    cmd = [
        sys.executable, "-m", "inspect_ai", "eval", "sandmle/synthetic", "-T", f"pack={pack}",
        "-T", "message_limit=4", "--limit", "1", "--model", f"hf/{folder}", "-M", "device=cpu",
        "--max-tokens", "16", "--solver", "sandmle/react", "--log-dir", str(out.parent / "cli"),
        "--display", "none",
    ]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(cmd, cwd=out.parent, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    from inspect_ai.log import list_eval_logs, read_eval_log

    (info,) = list_eval_logs(str(out.parent / "cli"))
    log = read_eval_log(info.name)
    assert log.status == "success" and not any(s.error for s in log.samples or [])
