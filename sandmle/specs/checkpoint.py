"""A checkpoint's training step, read from its model name or its metadata file.

Two sources, the first that answers wins:

1. ``sandmle_checkpoint.json`` inside a local model folder (the path after the provider in
   the model name, e.g. ``vllm/runs/grpo-a/checkpoint-200``, or ``model_args["model_path"]``).
   Training writes it next to the weights::

       {"base_model": "Qwen/Qwen2.5-0.5B", "step": 200, "pack": "builtin", "reward": 0.41,
        "run": "grpo-a", "kind": "grpo", "reward_mode": "dense"}

   An SFT checkpoint says ``"kind": "sft"`` and names its ``data`` (the logs it learned from).

   Every field is optional. ``run`` names the training run (the curve a point belongs to);
   when absent the run is the model name with its step part removed.
2. The model name itself: ``checkpoint-200``, ``checkpoint_200``, ``step200``, ``step-200``,
   ``ckpt200`` or ``global_step200`` as one path segment or a ``-``/``_``-separated part of one.

Logs read on another machine keep their step through the name, since the file is not there.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

METADATA_FILE = "sandmle_checkpoint.json"

_STEP_RE = re.compile(r"(?:^|[/_\-.])(?:global_step|checkpoint|ckpt|step)[-_]?(\d+)(?=$|[/_\-.])")


class CheckpointInfo(BaseModel):
    """What a ``sandmle_checkpoint.json`` file may say about a checkpoint."""

    base_model: str | None = None
    """The model training started from."""
    step: int | None = None
    """Optimizer steps taken when the checkpoint was saved."""
    pack: str | None = None
    """The task pack it was trained on."""
    reward: float | None = None
    """Mean training reward at that step."""
    run: str | None = None
    """Name of the training run; checkpoints of one run form one training curve."""
    kind: Literal["sft", "grpo"] | None = None
    """How it was trained."""
    data: str | None = None
    """What it was trained on: the pack (GRPO) or the logs (SFT)."""
    reward_mode: str | None = None
    """GRPO's reward (``dense`` or ``sparse``)."""


def checkpoint_label(info: CheckpointInfo) -> str:
    """``base``, ``SFT step 50``, ``GRPO step 200`` or ``GRPO-sparse step 200``: how the
    leaderboard names a model's kind.

    >>> checkpoint_label(CheckpointInfo(kind="grpo", step=200))
    'GRPO step 200'
    >>> checkpoint_label(CheckpointInfo(kind="sft")), checkpoint_label(CheckpointInfo())
    ('SFT', 'base')
    >>> checkpoint_label(CheckpointInfo(kind="grpo", step=200, reward_mode="sparse"))
    'GRPO-sparse step 200'
    >>> checkpoint_label(CheckpointInfo(step=40))  # a step in the name, no metadata file
    'step 40'
    """
    kind = {"sft": "SFT", "grpo": "GRPO"}.get(info.kind or "")
    if kind == "GRPO" and info.reward_mode == "sparse":  # the ablation, told apart from dense
        kind = "GRPO-sparse"
    step = f"step {info.step}" if info.step is not None else ""
    if kind is None:
        return step or "base"
    return f"{kind} {step}".strip()


def step_from_name(name: str) -> int | None:
    """The training step a model name carries, if any.

    >>> step_from_name("vllm/runs/grpo/checkpoint-200")
    200
    >>> step_from_name("hf/org/qwen-step1500-dpo")
    1500
    >>> step_from_name("openai/gpt-4o") is None
    True
    """
    matches = _STEP_RE.findall(name)
    return int(matches[-1]) if matches else None


def run_from_name(name: str) -> str:
    """The model name without its step part: checkpoints of one run share it.

    >>> run_from_name("vllm/runs/grpo/checkpoint-200")
    'vllm/runs/grpo'
    """
    match = list(_STEP_RE.finditer(name))
    if not match:
        return name
    last = match[-1]
    return (name[: last.start()] + name[last.end() :]).strip("/-_.") or name


def local_model_dir(model: str, model_args: dict[str, Any] | None = None) -> Path | None:
    """The local folder a model was loaded from, when there is one on this machine."""
    candidates = [str((model_args or {}).get("model_path") or "")]
    if "/" in model:
        candidates.append(model.split("/", 1)[1])
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


def read_checkpoint_file(folder: Path) -> CheckpointInfo | None:
    """The folder's ``sandmle_checkpoint.json``; None when missing or unreadable."""
    path = folder / METADATA_FILE
    try:
        return CheckpointInfo.model_validate(json.loads(path.read_text()))
    except (OSError, ValueError, ValidationError):
        return None


def checkpoint_info(model: str, model_args: dict[str, Any] | None = None) -> CheckpointInfo:
    """Step and run of a model: its metadata file first, then its name."""
    folder = local_model_dir(model, model_args)
    info = (read_checkpoint_file(folder) if folder else None) or CheckpointInfo()
    updates: dict[str, Any] = {}
    if info.step is None:
        updates["step"] = step_from_name(model)
    if info.run is None:
        updates["run"] = run_from_name(model)
    return info.model_copy(update=updates)


TRAINER_STATE = "trainer_state.json"  # the last file Trainer's save writes


def step_of(folder: Path) -> int:
    """The step of a Trainer checkpoint folder, ``checkpoint-<step>``."""
    return int(folder.name.rsplit("-", 1)[-1])


def saved_checkpoints(output_dir: str | Path, complete: bool = False) -> list[Path]:
    """An output folder's ``checkpoint-<step>`` folders by step; ``complete``: only those whose
    save finished (a folder without ``trainer_state.json`` is a save cut short)."""
    found = [
        path
        for path in Path(output_dir).glob("checkpoint-*")
        if path.name.rsplit("-", 1)[-1].isdigit()
        and (not complete or (path / TRAINER_STATE).is_file())
    ]
    return sorted(found, key=step_of)


def last_complete_checkpoint(output_dir: str | Path) -> Path | None:
    """The newest checkpoint a resume can start from."""
    found = saved_checkpoints(output_dir, complete=True)
    return found[-1] if found else None
