"""Trajectory-wise GRPO with TRL's ``GRPOTrainer``: config, YAML loader and trainer wiring.

Each dataset row is a task id; TRL repeats it ``num_generations`` times and hands the slice to
``rollout_func``, which runs every rollout as a full Inspect episode (see ``rollouts``). The
reward is the medal scorer's verdict (see ``rewards``); advantages are per trajectory and
only the policy's tokens carry loss (``env_mask``).
"""

from __future__ import annotations

import math
import os
import sys
import time
import warnings
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from transformers import PreTrainedTokenizerBase
from trl import GRPOConfig, GRPOTrainer
from trl.trainer.grpo_trainer import RewardFunc

from sandmle.env.chat import use_training_template
from sandmle.env.rewards import reward_functions, total_reward
from sandmle.errors import SandmleError
from sandmle.harness import toolkit_memo
from sandmle.specs.checkpoint import step_of
from sandmle.specs.files import load_file
from sandmle.specs.training import (
    TINY_MODEL,
    GenerationServer,
    GRPORunFile,
    RewardSettings,
    RolloutSettings,
)
from sandmle.training.checkpoints import (
    CheckpointMetadata,
    checkpoint_dir,
    output_folder,
    resume_point,
    save_checkpoint,
)
from sandmle.training.dynamic_sampling import refill_flat_groups
from sandmle.training.generators import (
    BatchingGenerator,
    ColocateEngine,
    EngineClock,
    ServerRounds,
    TransformersEngine,
    vllm_awake,
)
from sandmle.training.lm_head import compact_on_cpu
from sandmle.training.policy_api import Generator, PolicySession
from sandmle.training.rollouts import (
    EpisodeResult,
    failed_episodes,
    run_episodes,
    trl_batch,
)
from sandmle.training.shared_prefix import PrefixSharingGRPOTrainer
from sandmle.training.smollm2 import local_model
from sandmle.training.task_draw import batches_needed, modality_batches
from sandmle.training.weight_sync import refuse_cpu_vllm, server_generation


@dataclass
class SandmleGRPOConfig(GRPOConfig):
    """TRL's ``GRPOConfig`` plus what sandmle needs: the model, the episodes and the reward."""

    model_name_or_path: str = field(
        default=TINY_MODEL,
        metadata={"help": "Model id or local folder; 'tiny' builds a tiny local Qwen2 model."},
    )
    rollout: RolloutSettings = field(
        default_factory=RolloutSettings, metadata={"help": "How episodes run."}
    )
    reward: RewardSettings = field(
        default_factory=RewardSettings, metadata={"help": "Dense or sparse reward, weights, tiers."}
    )
    generation_server: GenerationServer | None = field(
        default=None, metadata={"help": "Sample from a running vLLM server, weights synced by API."}
    )
    share_prompt_prefix: bool = field(
        default=False,
        metadata={
            "help": "Run each micro-batch's shared prompt once, its completions on its cache "
            "(sandmle/training/shared_prefix.py); micro-batches then hold whole groups."
        },
    )
    warm_start: str | None = field(
        default=None,
        metadata={"help": "An SFT run file: GRPO starts from its model, trained first if missing."},
    )

    def __post_init__(self) -> None:
        if isinstance(self.rollout, dict):
            self.rollout = RolloutSettings.model_validate(self.rollout)
        if isinstance(self.reward, dict):
            self.reward = RewardSettings.model_validate(self.reward)
        if isinstance(self.generation_server, dict):
            self.generation_server = GenerationServer.model_validate(self.generation_server)
        self.reward_weights = reward_functions(self.reward)[1]
        self.bf16 = resolve_bf16(self.bf16, on_cpu=self.use_cpu or not _cuda(), fp16=self.fp16)
        if self.bf16 and not self.use_cpu and not _cuda():
            # transformers refuses bf16 without a GPU unless told use_cpu; there is none, so
            # the run is on the CPU either way, and autocast runs bf16 there (see resolve_bf16)
            self.use_cpu = True
        if self.rollout.task_draw == "by_modality":
            self.shuffle_dataset = False  # training_rows orders the batches
        super().__post_init__()
        if self.use_vllm and self.vllm_mode == "colocate" and self.vllm_tensor_parallel_size > 1:
            raise ValueError(
                "vllm_tensor_parallel_size > 1 with vllm_mode='colocate' is not supported: each "
                "process batches its own episodes' turns; use vllm_mode='server' "
                "(trl vllm-serve --tensor-parallel-size N) for tensor parallelism."
            )
        self._check_prefix_sharing()
        one_update = self.num_iterations == 1
        clip_high = (self.epsilon_high or self.epsilon) > self.epsilon
        if clip_high and one_update and not self._several_steps():
            raise ValueError(
                f"epsilon_high ({self.epsilon_high}) has no effect with one optimizer step per "
                "generation batch (the policy ratio is 1); set steps_per_generation to a multiple "
                "of gradient_accumulation_steps above it (or num_iterations > 1), or drop epsilon_high."
            )

    def _check_prefix_sharing(self) -> None:
        groups = self.num_generations or 1
        if self.share_prompt_prefix and self.per_device_train_batch_size % groups:
            raise ValueError(
                f"share_prompt_prefix runs a group's prompt once per micro-batch: "
                f"per_device_train_batch_size ({self.per_device_train_batch_size}) must hold "
                f"whole groups of num_generations ({groups})."
            )

    def _several_steps(self) -> bool:
        """Whether a generation batch feeds more than one optimizer step."""
        assert self.steps_per_generation is not None  # GRPOConfig.__post_init__ sets it
        return self.steps_per_generation > self.gradient_accumulation_steps

    def to_dict(self) -> dict[str, Any]:  # logged by reporters as JSON
        data = super().to_dict()
        data["rollout"] = self.rollout.model_dump()
        data["reward"] = self.reward.model_dump()
        server = self.generation_server
        data["generation_server"] = server.model_dump() if server else None
        return data


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def native_bf16(on_cpu: bool) -> bool:
    """Whether bf16 is computed natively where the run trains: a CUDA GPU that has it, or a CPU
    with AVX512-BF16 or AMX. Elsewhere autocast emulates it, far slower than float32."""
    import torch

    if not on_cpu:
        return bool(torch.cuda.is_bf16_supported())
    return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())


def resolve_bf16(value: object, on_cpu: bool, fp16: bool = False) -> bool | None:
    """``bf16: auto``: bf16 where it is native, else float32, said on stderr; ``true`` where it
    is emulated warns (GRPO's forward and backward took 16x float32's time on an AVX2-only CPU,
    docs/performance.md); unset stays TRL's to decide (bf16 unless fp16), with the same warning."""
    if value is None:
        if not fp16 and on_cpu and not native_bf16(on_cpu):
            warnings.warn(BF16_EMULATED, stacklevel=2)
        return None
    if value == "auto":
        native = native_bf16(on_cpu)
        where = "the CPU" if on_cpu else "the GPU"
        print(f"bf16: auto: {'bf16' if native else 'float32'} ({where} "
              f"{'computes' if native else 'only emulates'} bf16)", file=sys.stderr, flush=True)  # fmt: skip
        return native
    if not isinstance(value, bool):
        raise ValueError(f"bf16: {value!r}: true, false or auto")
    if value and on_cpu and not native_bf16(on_cpu):
        warnings.warn(BF16_EMULATED, stacklevel=2)
    return value


BF16_EMULATED = (
    "bf16: true on a CPU without AVX512-BF16 or AMX: autocast emulates it, many times slower "
    "than float32 (16x for GRPO's forward and backward on an AVX2 CPU); bf16: auto picks float32 here"
)


def load_grpo_config(path: str | Path, **overrides: Any) -> SandmleGRPOConfig:
    """Read a YAML run file; ``overrides`` replace ``training`` fields (e.g. output_dir)."""
    run = load_file(GRPORunFile, path)
    training = {**run.training, **overrides}
    warm = str((Path(path).parent / run.warm_start).resolve()) if run.warm_start else None
    try:
        return SandmleGRPOConfig(
            model_name_or_path=run.model,
            rollout=run.rollout,
            reward=run.reward,
            generation_server=run.generation_server,
            warm_start=warm,
            temperature=run.rollout.temperature,  # the episode's: what eval samples with
            **training,
        )
    except TypeError as exc:  # an unknown GRPOConfig field
        raise SandmleError(f"{path}: training: {exc}") from None
    except ValueError as exc:
        raise SandmleError(f"{path}: {exc}") from None


def resolve_model(config: SandmleGRPOConfig) -> str:
    """The model to load: the ``warm_start`` SFT run's; else 'tiny' is built once into
    ``<output_dir>/tiny-model``, 'smollm2' converted once into ``<output_dir>/smollm2-model``."""
    if config.warm_start is not None:
        return warm_started(config.warm_start, output_folder(config) / "warm-start")
    return local_model(config.model_name_or_path, output_folder(config))


def warm_started(sft_run: str, out: Path) -> str:
    """The Seed-SFT model in ``out/final``, trained first from ``sft_run`` when missing (on one
    process: several would each train it)."""
    from sandmle.training.sft import load_sft_run, train_sft

    if (out / "final" / "config.json").is_file():
        return str(out / "final")
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise SandmleError(
            f"warm_start: train it first: sandmle train sft --config {sft_run} --output-dir {out}"
        )
    return str(train_sft(load_sft_run(sft_run), output_dir=str(out)))


def task_ids(settings: RolloutSettings) -> list[str]:
    """The tasks to train on: the configured ones, else every task of the pack."""
    return list(task_modalities(settings))


def task_modalities(settings: RolloutSettings) -> dict[str, str | None]:
    """The tasks to train on, each with the modality the pack's manifest gives it."""
    from sandmle.benchmarks.synthetic.builtin import builtin_pack_dir
    from sandmle.harness.pack import load_pack

    pack = load_pack(settings.pack or builtin_pack_dir(), settings.tasks)
    listed = {t.id: t.modality for t in pack.manifest.tasks}
    return {c.id: listed.get(c.id) for c in pack.competitions}


def enough_tasks(config: SandmleGRPOConfig, tasks: list[str] | None = None) -> list[str]:
    """The task ids (``tasks``, else the run's), refused when a generation batch needs more
    distinct tasks than there are: TRL's sampler drops an incomplete batch, so training would
    stop at step 0 and save the untouched model as if it were trained."""
    tasks = task_ids(config.rollout) if tasks is None else tasks
    batch, per_task = config.generation_batch_size, config.num_generations
    assert batch is not None and per_task is not None  # GRPOConfig.__post_init__ sets both
    needed = batch // per_task
    if len(tasks) < needed:
        raise SandmleError(
            f"{len(tasks)} task(s) to train on, but each generation batch of "
            f"{batch} episodes ({per_task} per task, all "
            f"processes together) needs {needed} distinct tasks: add tasks or lower "
            "per_device_train_batch_size / steps_per_generation"
        )
    return tasks


def training_rows(config: SandmleGRPOConfig) -> list[str]:
    """The dataset's rows (task ids) in the order TRL's sampler takes them: as listed when
    ``task_draw`` is ``shuffled`` (the sampler shuffles), else batches spread over modalities
    (the sampler keeps their order: ``__post_init__`` turned its shuffle off)."""
    if config.rollout.task_draw == "shuffled":
        return enough_tasks(config)
    modalities = task_modalities(config.rollout)
    tasks = enough_tasks(config, list(modalities))
    if not any(modalities.values()):
        where = config.rollout.pack or "the built-in pack"
        raise SandmleError(
            f"task_draw: by_modality, but {where}'s pack.yaml names no task's modality: "
            "add them, or use task_draw: shuffled"
        )
    assert config.generation_batch_size and config.num_generations and config.steps_per_generation
    per_batch = config.generation_batch_size // config.num_generations
    per_step = math.ceil(config.gradient_accumulation_steps / config.steps_per_generation)
    batches = batches_needed(len(tasks), per_batch, config.max_steps, per_step)
    return modality_batches(modalities, per_batch, batches, config.seed)


RolloutFunction = Callable[[list[Any], GRPOTrainer], dict[str, list]]


def rollout_function(
    settings: RolloutSettings,
    log_root: Path,
    reward: RewardSettings | None = None,
    modalities: dict[str, str | None] | None = None,
) -> RolloutFunction:
    """TRL's ``rollout_func``: one Inspect episode per prompt (a task id); with
    ``refill_flat_groups``, groups without a reward spread are rolled again on other tasks of
    ``modalities`` (every task to train on), scored with ``reward`` as TRL will score them."""

    def rollout(prompts: list[Any], trainer: GRPOTrainer) -> dict[str, list]:
        tokenizer = _tokenizer(trainer)
        generator, clock, running = _generation(trainer, settings.generation_threads)
        step, rank = trainer.state.global_step, trainer.accelerator.process_index
        seed = f"seed-{trainer.args.seed}/step-{step}/rank-{rank}"  # the request keys' root
        log_dir = log_root / f"step-{step:06d}" / f"rank-{rank}"
        failed = 0

        def run(task_ids: list[str], round_: int) -> list[EpisodeResult]:
            nonlocal failed
            key = seed if round_ == 0 else f"{seed}/refill-{round_}"  # new keys, new episodes
            session = PolicySession(
                generator,
                tokenizer,
                settings.max_turn_tokens,
                settings.max_episode_tokens,
                seed=key,
            )
            where = log_dir if round_ == 0 else log_dir / f"refill-{round_}"
            ran = run_episodes(task_ids, session, settings, where)
            failed += failed_episodes(ran, settings)  # before a refill could hide a failure
            return ran

        memo = toolkit_memo.MEMO.stats  # this process's shared toolkit runs (-T toolkit_memo)
        memo_before = (memo.runs, memo.shared)
        start = time.perf_counter()
        with running:
            tasks = [str(p) for p in prompts]
            results, refill = run(tasks, 0), None
            if settings.refill_flat_groups:
                refill = refill_flat_groups(
                    tasks, results, group_size=cast(int, trainer.num_generations),
                    rounds=settings.refill_flat_groups, modalities=modalities or {},
                    rewards=episode_rewards(reward or RewardSettings(), tokenizer), run=run,
                    seed=f"{seed}/refill",
                )  # fmt: skip
                results = refill.results
        if isinstance(generator, BatchingGenerator):
            generator.close()  # no cancelled generation may run on into the optimizer step
        _log_metrics(trainer, results, time.perf_counter() - start, clock, failed)
        metrics = trainer._metrics["train"]
        if refill is not None:
            metrics["rollout/refilled_groups"].append(refill.refilled)
            metrics["rollout/flat_groups"].append(refill.flat)
        if settings.backend == "in-process":  # elsewhere the memo is the workers'
            metrics["rollout/toolkit_runs"].append(memo.runs - memo_before[0])
            metrics["rollout/toolkit_shared"].append(memo.shared - memo_before[1])
        return trl_batch(results, tokenizer)

    return rollout


def episode_rewards(
    reward: RewardSettings, tokenizer: PreTrainedTokenizerBase
) -> Callable[[list[EpisodeResult]], list[float | None]]:
    """Each episode's total reward as TRL computes it, from the fields the rollout hands TRL."""

    def rewards(results: list[EpisodeResult]) -> list[float | None]:
        batch = trl_batch(results, tokenizer)
        fields = {k: batch[k] for k in ("medal", "assistant_turns", "dropped")}
        return total_reward(reward, batch["completion_ids"], **fields)

    return rewards


def _generation(
    trainer: GRPOTrainer, threads: int | None = 1
) -> tuple[Generator, EngineClock, AbstractContextManager]:
    """The sampler for this process, its clock, and what must be held while episodes run."""
    tokenizer = _tokenizer(trainer)
    eos = tokenizer.eos_token_id
    args = cast(GRPOConfig, trainer.args)  # build_trainer's config, typed as Trainer's base class
    server = getattr(args, "generation_server", None)
    if server is not None:  # a vLLM server outside TRL, weights pushed by API
        generator = BatchingGenerator(server_generation(trainer, server))
        return generator, generator.clock, nullcontext()
    if not args.use_vllm:
        model = trainer.accelerator.unwrap_model(trainer.model)
        engine = TransformersEngine(model, tokenizer, args.temperature, args.top_p, threads)
        generator = BatchingGenerator(engine)
        return generator, generator.clock, nullcontext()
    vllm = trainer.vllm_generation
    if vllm.mode == "server":  # the client lives on the main process only
        rounds = ServerRounds(vllm, trainer.accelerator.process_index, eos)
        return rounds, rounds.clock, rounds
    generator = BatchingGenerator(ColocateEngine(vllm, eos))
    return generator, generator.clock, vllm_awake(vllm)


def _tokenizer(trainer: GRPOTrainer) -> PreTrainedTokenizerBase:
    """The trainer's processing class: build_trainer passes a tokenizer (TRL types it wider)."""
    return cast(PreTrainedTokenizerBase, trainer.processing_class)


def _log_metrics(
    trainer: GRPOTrainer,
    results: list[EpisodeResult],
    wall: float,
    clock: EngineClock,
    failed: int,
) -> None:
    """Rollout timings and counts, averaged into TRL's logs like its own metrics.

    ``generation_seconds`` is the engine's busy wall time (its calls never overlap), so it is at
    most ``seconds``; ``environment_share`` is, per episode, the part of its wall time not spent
    waiting for the sampler (sandbox, tools, grading), averaged over episodes.
    """
    n = max(len(results), 1)
    metrics = trainer._metrics["train"]  # TRL's per-step metric buffer
    metrics["rollout/seconds"].append(wall)
    metrics["rollout/generation_seconds"].append(clock.seconds)
    metrics["rollout/engine_calls"].append(clock.calls)
    metrics["rollout/requests_per_call"].append(clock.requests / max(clock.calls, 1))
    metrics["rollout/environment_share"].append(sum(map(environment_share, results)) / n)
    metrics["rollout/env_steps"].append(sum(r.env_steps for r in results) / n)
    metrics["rollout/turns"].append(sum(len(r.episode.assistant_turns) for r in results) / n)
    metrics["rollout/dropped"].append(failed)  # on_backend_error: fail raises before this
    metrics["rollout/truncated"].append(sum(r.episode.truncated for r in results))
    cut = sum(r.episode.cut_while_generating for r in results)  # dropped (or failed), not 0
    metrics["rollout/cut_while_generating"].append(cut)
    rerendered = sum(r.episode.rerendered_at is not None for r in results)
    metrics["rollout/rerendered_episodes"].append(rerendered)
    inserted = sum(r.episode.inserted_openings for r in results)  # the template's, masked
    metrics["rollout/inserted_openings"].append(inserted)


def environment_share(result: EpisodeResult) -> float:
    """The share of an episode's wall time not spent waiting for the sampler."""
    if result.seconds <= 0:
        return 0.0
    return max(result.seconds - result.episode.generation_seconds, 0.0) / result.seconds


def build_trainer(config: SandmleGRPOConfig, callbacks: list | None = None) -> GRPOTrainer:
    """A ``GRPOTrainer`` wired to Inspect episodes, the reward functions and checkpoint metadata."""
    from datasets import Dataset
    from transformers import AutoTokenizer

    refuse_cpu_vllm(config)  # before any model is built
    compact_on_cpu()  # the loss's log-probabilities: the completion's positions only, on CPU
    model = resolve_model(config)
    tokenizer = AutoTokenizer.from_pretrained(model, padding_side="left")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    use_training_template(tokenizer)  # saved with every checkpoint: eval renders as training did
    log_root = rollout_root(config)
    metadata = CheckpointMetadata(
        base_model=config.model_name_or_path,
        pack=config.rollout.pack or "builtin",
        run=config.run_name,
        reward_mode=config.reward.mode,
    )
    reward_funcs: list[RewardFunc] = [*reward_functions(config.reward)[0]]  # TRL's element type
    return PrefixSharingGRPOTrainer(
        model=model,
        reward_funcs=reward_funcs,
        args=config,
        train_dataset=Dataset.from_dict({"prompt": training_rows(config)}),
        processing_class=tokenizer,
        rollout_func=rollout_function(config.rollout, log_root, config.reward, refill_pool(config)),
        callbacks=[metadata, *(callbacks or [])],
    )


def refill_pool(config: SandmleGRPOConfig) -> dict[str, str | None] | None:
    """The tasks a flat group may be refilled with (each with its modality), when it may."""
    return task_modalities(config.rollout) if config.rollout.refill_flat_groups else None


def rollout_root(config: SandmleGRPOConfig) -> Path:
    return Path(config.rollout.log_dir or output_folder(config) / "rollouts")


def train_grpo(config: SandmleGRPOConfig) -> Path:
    """Train (resuming where ``resume_from_checkpoint`` says), then save the final checkpoint;
    returns its folder."""
    resume = resume_point(config)
    if resume is not None and int(os.environ.get("RANK", "0")) == 0:
        # before the trainer: no rank writes rollouts until every rank has built it
        supersede_rollouts(rollout_root(config), step_of(resume))
    trainer = build_trainer(config)
    trainer.train(resume_from_checkpoint=str(resume) if resume else None)
    step = trainer.state.global_step
    metadata = next(
        c for c in trainer.callback_handler.callbacks if isinstance(c, CheckpointMetadata)
    )
    folder = save_checkpoint(
        trainer, checkpoint_dir(output_folder(config), step), metadata.info(step)
    )
    close_processes(trainer.accelerator)
    return folder


def supersede_rollouts(log_root: Path, step: int) -> list[Path]:
    """Move the episode logs of steps from ``step`` on (the work a resume redoes) into
    ``superseded/<time>/``: kept, but out of the per-step folders reports read, so no step
    counts twice."""
    steps = [p for p in log_root.glob("step-*") if p.name.rsplit("-", 1)[-1].isdigit()]
    later = [p for p in steps if step_of(p) >= step]
    if not later:
        return []
    keep = log_root / "superseded" / time.strftime("%Y%m%dT%H%M%S")
    keep.mkdir(parents=True, exist_ok=True)
    return [folder.rename(keep / folder.name) for folder in sorted(later)]


# Process groups closed by close_processes, kept to the end of the process (see there).
_CLOSED_GROUPS: list[Any] = []


def close_processes(accelerator: Any) -> None:
    """Meet every process, then tear the process group down before the interpreter exits
    (left to exit handlers, gloo's threads can abort a rank after its work is done).

    The group object itself is kept for the life of the process: otherwise the DDP reducer,
    freed with the trainer, drops its last reference right after the barrier, and gloo's
    destructor joins its worker thread while holding the GIL, a thread that may still need the
    GIL to free the barrier's tensors (a rank hung there on a loaded 2-core machine)."""
    import torch.distributed as dist

    accelerator.wait_for_everyone()
    if dist.is_available() and dist.is_initialized():
        _CLOSED_GROUPS.append(dist.group.WORLD)
    accelerator.end_training()
