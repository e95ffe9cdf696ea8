"""Dynamic sampling (DAPO's): a GRPO group whose episodes all earned the same reward is rolled
again on another task.

Such a group has zero advantage everywhere, so it adds nothing to the policy gradient, yet it
costs as much to train on as any other. Worse, on a small policy Adam takes a full-sized step
whatever the batch carries: when one group of five has a spread, that one task's answer moves
every prompt (docs/reproduce.md, "cpu-smollm2: the fourth whole run"). Refilling flat groups, in
their own modality first, gives each update more tasks that pull in different directions.

A refill round costs its episodes (generation and the AutoML runs they start), not more
training: in cpu-smollm2's screen (docs/reproduce.md) 28 groups refilled over 6 steps made the
steps 26% longer in all. It does not stop one contrast from moving every prompt: there the
first step's refills left four of five groups with a spread, yet `series` went from 6 of 60
calls to 23 of 44 in the next step, on every modality. One group paid a medal for `series`
over `text`; the other three paid a call over a broken one, or `table` over `text`.
The tasks that stay flat after the last round are kept as they are: zero advantage, as
without refills.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sandmle.training.policy_api import EpisodeResult

RunEpisodes = Callable[[list[str], int], list[EpisodeResult]]
"""Runs one episode per task id (repeats allowed) in refill round ``n`` (1, 2, ...)."""
Rewards = Callable[[list[EpisodeResult]], list[float | None]]
"""The total reward TRL will give each episode (``None``: dropped, left out of its group)."""


@dataclass
class Refilled:
    """What the refills did in one rollout call."""

    results: list[EpisodeResult]
    refilled: int = 0
    """Groups rolled again on another task."""
    flat: int = 0
    """Groups still without a reward spread after the last round."""


def groups(prompts: Sequence[str], size: int) -> list[range] | None:
    """The index ranges of each group (``size`` consecutive copies of one task), or ``None``
    when this process's prompts do not cut into whole groups (a group split over processes)."""
    if size < 2 or len(prompts) % size:
        return None
    spans = [range(i, i + size) for i in range(0, len(prompts), size)]
    if any(len({prompts[i] for i in span}) != 1 for span in spans):
        return None
    return spans


def is_flat(rewards: Sequence[float | None]) -> bool:
    """No spread: fewer than two scored episodes, or every scored episode alike."""
    scored = [r for r in rewards if r is not None]
    return len(scored) < 2 or max(scored) - min(scored) < 1e-9


def refill_flat_groups(
    prompts: list[str],
    results: list[EpisodeResult],
    *,
    group_size: int,
    rounds: int,
    modalities: dict[str, str | None],
    rewards: Rewards,
    run: RunEpisodes,
    seed: str,
) -> Refilled:
    """Up to ``rounds`` times, roll every flat group again on a task not yet in this call (the
    group's own modality first, then any), chosen at random from ``seed``."""
    spans = groups(prompts, group_size)
    out = Refilled(list(results))
    if spans is None or rounds < 1:
        out.flat = len(_flat(out.results, spans or [], rewards))
        return out
    rng = random.Random(seed)
    used = set(prompts)
    task_of = {span.start: prompts[span.start] for span in spans}
    for n in range(1, rounds + 1):
        flat = _flat(out.results, spans, rewards)
        picked = [(span, _pick(task_of[span.start], modalities, used, rng)) for span in flat]
        swaps = [(span, task) for span, task in picked if task is not None]
        if not swaps:
            break
        ran = run([task for _, task in swaps for _ in range(group_size)], n)
        for k, (span, task) in enumerate(swaps):
            task_of[span.start] = task
            out.results[span.start : span.stop] = ran[k * group_size : (k + 1) * group_size]
        out.refilled += len(swaps)
    out.flat = len(_flat(out.results, spans, rewards))
    return out


def _flat(results: list[EpisodeResult], spans: list[range], rewards: Rewards) -> list[range]:
    values = rewards(results)
    return [span for span in spans if is_flat([values[i] for i in span])]


def _pick(
    task: str, modalities: dict[str, str | None], used: set[str], rng: random.Random
) -> str | None:
    """A task not used yet in this call, of ``task``'s modality when one is left; marked used."""
    unused = sorted(t for t in modalities if t not in used)
    same = [t for t in unused if modalities[t] == modalities.get(task)]
    pool = same or unused
    if not pool:
        return None
    choice = rng.choice(pool)
    used.add(choice)
    return choice
