"""The SFT baseline: trajectories from Inspect logs → chat data → TRL's ``SFTTrainer``.

Episodes of a stronger model or the heuristic policy (or GRPO's own rollout logs) are read
with Inspect's log reader, kept by their medal scorer verdict, and turned into conversational
rows (``messages`` + ``tools``) with the same message conversion the rollouts use.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sandmle.env.chat import chat_dicts, tool_schema
from sandmle.errors import SandmleError
from sandmle.specs.files import load_file
from sandmle.specs.training import Keep, SFTRunFile, Teacher
from sandmle.training.rollouts import SCORER
from sandmle.training.smollm2 import local_model

_KEEP_FLAG = {"valid": "valid_submission", "above_median": "above_median", "medal": "any_medal"}


INSPECT_BOOKKEEPING = frozenset({"logs.json", "eval-set.json"})
"""JSON files Inspect's ``eval_set`` writes beside its logs (a listing, the set's own record)."""


def log_files(paths: Sequence[str | Path]) -> list[Path]:
    """The Inspect logs under ``paths`` (folders searched; eval_set's bookkeeping skipped).

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> for name in ("a.eval", "b.json", "logs.json", "eval-set.json", "notes.txt"):
    ...     _ = (root / name).write_text("")
    >>> [p.name for p in log_files([root])]
    ['a.eval', 'b.json']
    """
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(
                p
                for p in path.rglob("*")
                if p.suffix in (".eval", ".json") and p.name not in INSPECT_BOOKKEEPING
            )
        elif path.is_file():
            found.append(path)
        else:
            raise SandmleError(f"{path}: no such log file or folder")
    return found


def kept(value: Any, keep: Keep) -> bool:
    """Whether a sample's score value passes the filter."""
    if keep == "all":
        return True
    return isinstance(value, dict) and float(value.get(_KEEP_FLAG[keep], 0.0) or 0.0) >= 0.5


def trajectories(
    paths: Sequence[str | Path], keep: Keep = "valid", reasoning_tag: str = "think"
) -> list[dict[str, Any]]:
    """Conversational SFT rows, one per kept sample of every log; the teacher's reasoning stays,
    as the student family's reasoning block."""
    from inspect_ai.log import read_eval_log

    rows = []
    for path in log_files(paths):
        log = read_eval_log(str(path), resolve_attachments=True)
        for sample in log.samples or []:
            score = (sample.scores or {}).get(SCORER)
            if kept(score.value if score else None, keep) and _has_assistant(sample.messages):
                messages = chat_dicts(sample.messages, reasoning_tag)
                rows.append({"messages": _arrow_safe(messages), "tools": _tools(sample)})
    return rows


def _has_assistant(messages: list) -> bool:
    return any(m.role == "assistant" for m in messages)


def _arrow_safe(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool-call arguments as JSON text: Arrow would merge every call's keys into one struct."""
    for message in messages:
        for call in message.get("tool_calls", []):
            call["function"]["arguments"] = json.dumps(call["function"]["arguments"])
    return messages


def _tools(sample: Any) -> str:
    """The tools the agent was offered (JSON text, which TRL parses), from its first model call."""
    for event in sample.events or []:
        if getattr(event, "event", None) == "model" and event.tools:
            return json.dumps([tool_schema(t) for t in event.tools])
    return "[]"


def teacher_logs(teacher: Teacher, folder: Path) -> Path:
    """The teacher's episodes in ``folder``, as ``inspect eval sandmle/synthetic --model <model>
    --solver sandmle/<solver>`` with the episode's ``-T``/``-S`` arguments writes them; run only
    when the folder holds no log yet."""
    from inspect_ai import eval as inspect_eval

    from sandmle.benchmarks.synthetic.task import synthetic
    from sandmle.env.task import episode_agent

    if folder.is_dir() and log_files([folder]):
        return folder
    task = synthetic(pack=teacher.pack, tasks=teacher.tasks, **teacher.episode.task_args())
    logs = inspect_eval(
        task,
        model=teacher.models,
        solver=episode_agent(teacher.episode),
        epochs=teacher.epochs,
        log_dir=str(folder),
    )
    for log in logs:
        if log.status != "success":
            raise SandmleError(f"teacher {log.eval.model}: its eval ended {log.status} ({folder})")
    return folder


def load_sft_run(path: str | Path) -> SFTRunFile:
    return load_file(SFTRunFile, path)


def train_sft(run: SFTRunFile, **overrides: Any) -> Path:
    """One SFT run; returns the saved model folder (``<output_dir>/final``)."""
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    from sandmle.harness.chat_template import with_prelude
    from sandmle.specs.checkpoint import CheckpointInfo
    from sandmle.training.checkpoints import (
        ensure_generation_config,
        output_folder,
        resume_point,
        write_metadata,
    )

    args = SFTConfig(**{**run.training, **overrides})
    logs = run.logs or [str(output_folder(args) / "teacher-logs")]
    if run.teacher is not None:
        teacher_logs(run.teacher, Path(logs[0]))
    rows = trajectories(logs, run.keep, run.reasoning_tag)
    if not rows:
        raise SandmleError(f"no episodes passed keep={run.keep!r} in {', '.join(logs)}")
    model = local_model(run.model, output_folder(args))
    tokenizer = AutoTokenizer.from_pretrained(model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if tokenizer.chat_template:  # saved with the model: hf/ renders Inspect's messages the same
        tokenizer.chat_template = with_prelude(tokenizer.chat_template)
    trainer = SFTTrainer(
        model=model, args=args, train_dataset=Dataset.from_list(rows), processing_class=tokenizer
    )
    resume = resume_point(args)
    trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    out = output_folder(args) / "final"
    trainer.save_model(str(out))
    if trainer.is_world_process_zero():
        ensure_generation_config(out, trainer.accelerator.unwrap_model(trainer.model))
        info = CheckpointInfo(
            base_model=run.model,
            step=trainer.state.global_step,
            run=args.run_name,
            kind="sft",
            data=", ".join(logs),
        )
        write_metadata(out, info)
    return out
