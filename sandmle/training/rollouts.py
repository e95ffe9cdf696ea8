"""Episodes for GRPO, run through Inspect: the synthetic task's sandbox, tools and medal scorer.

``rollout_func`` gets one prompt (a task id) per rollout, runs all of them as one Inspect
eval with the policy behind ``PolicyAPI``, and hands TRL each episode's tokens: the first
prompt as ``prompt_ids``, every later token as ``completion_ids`` with ``env_mask`` 1 on the
policy's tokens and 0 on the environment's, and the scorer's ``Score.value`` as ``medal`` for
the reward functions. The eval logs stay on disk (one folder per step): they are the
trajectories SFT and the leaderboard read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.model import GenerateConfig, Model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import store

from sandmle.env.task import SCORER, episode_task
from sandmle.specs.training import RolloutSettings
from sandmle.training.policy_api import (
    CUT_WHILE_GENERATING,
    EPISODE_KEY,
    Episode,
    EpisodeResult,
    PolicyAPI,
    PolicySession,
)
from sandmle.training.remote import run_ray_episodes, run_server_episodes


@solver
def episode_setup() -> Solver:
    """Name the episode in the sample's store, so the policy API files its tokens under it."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        store().set(EPISODE_KEY, str(state.sample_id))
        return state

    return solve


def training_task(settings: RolloutSettings, task_ids: list[str]) -> Task:
    """The synthetic task with one sample per rollout (``<task>#<index>``): the episode's task,
    built from its ``-T`` arguments as ``inspect eval`` builds it."""
    return episode_task(
        settings, settings.pack, task_ids, setup=[episode_setup()], name="synthetic-rollouts"
    )


def run_episodes(
    task_ids: list[str], session: PolicySession, settings: RolloutSettings, log_dir: Path
) -> list[EpisodeResult]:
    """Run one episode per entry of ``task_ids`` (repeats allowed), in that order: in this
    process, on the environment server ``settings.server`` (``backend: server``, where the
    server's ``log_dir`` holds the logs) or on the Ray pool ``settings.ray`` (``backend: ray``:
    the logs on the actors' nodes, under ``ray.log_dir``; here, which node ran each episode)."""
    if settings.backend == "server":
        return run_server_episodes(task_ids, session, settings)
    if settings.backend == "ray":
        return run_ray_episodes(task_ids, session, settings, log_dir)
    api = PolicyAPI("policy", session=session)
    model = Model(api, GenerateConfig())
    (log,) = inspect_eval(
        training_task(settings, task_ids),
        model=model,
        log_dir=str(log_dir),
        display="none",
        max_samples=settings.parallel_sandboxes,
        max_sandboxes=settings.parallel_sandboxes,
        fail_on_error=False,
        score_display=False,
    )
    by_sample = {str(s.id): s for s in log.samples or []}
    results = []
    for i, task_id in enumerate(task_ids):
        key = f"{task_id}#{i}"
        sample = by_sample.get(key)
        score = (sample.scores or {}).get(SCORER) if sample else None
        episode = session.episodes.get(key, Episode())
        results.append(
            EpisodeResult(
                task_id=task_id,
                episode=episode,
                medal=dict(score.value) if score and isinstance(score.value, dict) else {},
                env_steps=_tool_calls(sample),
                error=_error(sample, episode),
                seconds=float(sample.total_time or 0.0) if sample else 0.0,
            )
        )
    return results


def _error(sample: Any, episode: Episode) -> str | None:
    """Why the episode is not the agent's result: the sample's error, or a limit that fell while
    the policy was generating (Inspect scores that sample; training must not)."""
    if sample is not None and sample.error:
        return str(sample.error.message)
    if episode.cut_while_generating:
        return CUT_WHILE_GENERATING
    return None


def _tool_calls(sample: Any) -> int:
    """Tool calls run (the events: react drops its ``submit`` call from the messages)."""
    return sum(1 for e in (sample.events if sample else []) if e.event == "tool")


def failed_episodes(results: list[EpisodeResult], settings: RolloutSettings) -> int:
    """How many episodes failed (not the agent's doing); raises when the settings say ``fail``."""
    failed = [r for r in results if r.error is not None]
    if failed and settings.on_backend_error == "fail":
        raise RuntimeError(
            f"{len(failed)} of {len(results)} episodes failed ({failed[0].task_id}: "
            f"{failed[0].error}); set rollout.on_backend_error: drop to train on without them"
        )
    return len(failed)


def trl_batch(results: list[EpisodeResult], tokenizer: Any) -> dict[str, list]:
    """The dict TRL's ``rollout_func`` returns (extra keys go to the reward functions).

    A failed episode is ``dropped``: every token masked out of the loss, and every reward
    function returns ``None`` for it.
    """
    out: dict[str, list] = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask")}
    out |= {"medal": [], "assistant_turns": [], "dropped": []}
    for result in results:
        dropped = result.error is not None
        ep = _nonempty(result.episode, tokenizer, result.task_id)
        out["prompt_ids"].append(ep.prompt_ids)
        out["completion_ids"].append(ep.completion_ids)
        out["logprobs"].append(ep.logprobs)
        out["env_mask"].append([0] * len(ep.env_mask) if dropped else ep.env_mask)
        out["medal"].append(result.medal)
        out["assistant_turns"].append(ep.assistant_turns)
        out["dropped"].append(dropped)
    return out


def _nonempty(episode: Episode, tokenizer: Any, task_id: str) -> Episode:
    """An episode that crashed before (or at) its first turn still needs one token per side;
    the filler is masked, so it teaches nothing."""
    if episode.prompt_ids and episode.completion_ids:
        return episode
    prompt = episode.prompt_ids or tokenizer(task_id, add_special_tokens=False)["input_ids"]
    filler = Episode(prompt_ids=prompt, assistant_turns=episode.assistant_turns)
    filler.add([tokenizer.eos_token_id], [], policy=False)
    return filler
