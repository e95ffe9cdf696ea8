"""Checkpoints are plain Hugging Face model folders plus ``sandmle_checkpoint.json``.

``inspect eval --model hf/<dir>`` or ``vllm/<dir>`` loads one as is (weights, tokenizer with
its chat template, generation config); the leaderboard reads the step, run and reward from the
metadata file (its schema is ``sandmle.specs.checkpoint.CheckpointInfo``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from sandmle.errors import SandmleError
from sandmle.specs.checkpoint import (
    METADATA_FILE,
    TRAINER_STATE,
    CheckpointInfo,
    last_complete_checkpoint,
)

CHECKPOINT_PREFIX = "checkpoint"


def output_folder(args: TrainingArguments) -> Path:
    """``args.output_dir`` as a path (``TrainingArguments.__post_init__`` fills in its default)."""
    assert args.output_dir is not None
    return Path(args.output_dir)


def checkpoint_dir(output_dir: str | Path, step: int) -> Path:
    """Where Trainer saves step ``step`` (and where the leaderboard finds the step in the name)."""
    return Path(output_dir) / f"{CHECKPOINT_PREFIX}-{step}"


def resume_point(args: TrainingArguments) -> Path | None:
    """Where ``args.resume_from_checkpoint`` resumes: a checkpoint folder, or ``true`` for the
    output folder's newest complete one. Unlike Trainer's ``True``, ``true`` with nothing saved
    yet is a fresh start, so a crashed command can simply be run again."""
    wanted = args.resume_from_checkpoint  # typed str; YAML's true arrives as a bool
    if wanted is None or str(wanted).lower() in ("", "false"):
        return None
    if str(wanted).lower() == "true":
        return last_complete_checkpoint(output_folder(args))
    folder = Path(str(wanted))
    if not (folder / TRAINER_STATE).is_file():
        raise SandmleError(
            f"resume_from_checkpoint: {folder} is not a finished checkpoint (no {TRAINER_STATE})"
        )
    return folder


def write_metadata(folder: Path, info: CheckpointInfo) -> Path:
    path = folder / METADATA_FILE
    path.write_text(json.dumps(info.model_dump(exclude_none=True), indent=2) + "\n")
    return path


def ensure_generation_config(folder: Path, model: Any) -> None:
    """Inspect's hf/vllm providers read sampling defaults and stop tokens from it."""
    if (folder / "generation_config.json").is_file():
        return
    generation_config = getattr(model, "generation_config", None)
    if generation_config is not None:
        generation_config.save_pretrained(folder)


def save_checkpoint(trainer: Any, folder: Path, info: CheckpointInfo) -> Path:
    """Save the trainer's model, tokenizer and generation config, then the metadata."""
    trainer.save_model(str(folder))
    if trainer.is_world_process_zero():
        model = trainer.accelerator.unwrap_model(trainer.model)
        ensure_generation_config(folder, model)
        write_metadata(folder, info)
    return folder


class CheckpointMetadata(TrainerCallback):
    """Writes ``sandmle_checkpoint.json`` (and a generation config) into every saved checkpoint."""

    def __init__(
        self, base_model: str, pack: str | None, run: str | None, reward_mode: str | None = None
    ):
        self.base_model, self.pack, self.run = base_model, pack, run
        self.reward_mode = reward_mode
        self.reward: float | None = None

    def info(self, step: int) -> CheckpointInfo:
        return CheckpointInfo(
            base_model=self.base_model,
            step=step,
            pack=self.pack,
            reward=self.reward,
            run=self.run,
            kind="grpo",
            data=self.pack,
            reward_mode=self.reward_mode,
        )

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, float] | None = None,
        **kwargs: Any,
    ) -> None:
        reward = (logs or {}).get("reward")
        if reward is not None and not math.isnan(reward):
            self.reward = float(reward)

    def on_save(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        **kwargs: Any,
    ) -> None:
        if not state.is_world_process_zero:
            return
        folder = checkpoint_dir(output_folder(args), state.global_step)
        if folder.is_dir():
            ensure_generation_config(folder, kwargs.get("model"))
            write_metadata(folder, self.info(state.global_step))
