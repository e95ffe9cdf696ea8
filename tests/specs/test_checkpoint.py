"""Training steps from model names and ``sandmle_checkpoint.json``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandmle.specs.checkpoint import (
    METADATA_FILE,
    checkpoint_info,
    run_from_name,
    step_from_name,
)


@pytest.mark.parametrize(
    ("name", "step"),
    [
        ("vllm/runs/grpo/checkpoint-200", 200),
        ("hf/runs/grpo/checkpoint_50/", 50),
        ("hf/org/qwen-step1500-dpo", 1500),
        ("hf/out/global_step30", 30),
        ("hf/out/ckpt-7", 7),
        ("openai/gpt-4o", None),
        ("hf/org/stepwise-model", None),
        ("hf/org/steps", None),
    ],
)
def test_step_from_name(name: str, step: int | None) -> None:
    assert step_from_name(name) == step


def test_run_drops_the_step_part() -> None:
    assert run_from_name("vllm/runs/grpo/checkpoint-200") == "vllm/runs/grpo"
    assert run_from_name("hf/org/qwen-step1500") == "hf/org/qwen"
    assert run_from_name("openai/gpt-4o") == "openai/gpt-4o"


def test_metadata_file_wins_over_the_name(tmp_path: Path) -> None:
    folder = tmp_path / "checkpoint-300"
    folder.mkdir()
    meta = {"base_model": "Qwen/Qwen2.5-0.5B", "step": 320, "pack": "p", "reward": 0.4, "run": "r1"}
    (folder / METADATA_FILE).write_text(json.dumps(meta))
    info = checkpoint_info(f"vllm/{folder}")
    assert (info.step, info.run, info.base_model, info.reward) == (
        320,
        "r1",
        "Qwen/Qwen2.5-0.5B",
        0.4,
    )
    via_args = checkpoint_info("vllm/served-name", {"model_path": str(folder)})
    assert via_args.step == 320


def test_broken_metadata_file_falls_back_to_the_name(tmp_path: Path) -> None:
    folder = tmp_path / "step-40"
    folder.mkdir()
    (folder / METADATA_FILE).write_text("{not json")
    info = checkpoint_info(f"hf/{folder}")
    assert info.step == 40 and info.base_model is None
