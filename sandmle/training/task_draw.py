"""Which tasks each GRPO generation batch draws.

TRL's sampler shuffles the task list and cuts it into batches, so a step of four tasks can be
four tabular ones. On a small policy one such update moves the call every prompt makes (the
family word acts as a prior shared by all prompts: docs/reproduce.md, "GRPO on its own pack").
``by_modality`` orders the rows so that every batch spans as many modalities as it can, least
drawn first; the groups of one update then pull towards different answers and what they share
cancels, while each modality's own signal stays.
"""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict

UNKNOWN = "unknown"


def modality_batches(
    tasks: dict[str, str | None], per_batch: int, batches: int, seed: int
) -> list[str]:
    """``batches`` runs of ``per_batch`` distinct task ids, concatenated.

    Each run takes the least-drawn modalities first (then the least recently drawn, then at
    random), one task each, then goes round again while it is short; within a modality the
    tasks come in a shuffled cycle, so every task is drawn before any is drawn twice.
    """
    by_modality: dict[str, list[str]] = defaultdict(list)
    for task, modality in sorted(tasks.items()):
        by_modality[modality or UNKNOWN].append(task)
    if per_batch > len(tasks):
        raise ValueError(
            f"a batch of {per_batch} distinct tasks needs that many; {len(tasks)} given"
        )
    rng = random.Random(seed)
    queues: dict[str, list[str]] = {m: [] for m in by_modality}
    drawn: Counter[str] = Counter()
    last: dict[str, int] = {}  # when each modality was last drawn
    rows: list[str] = []
    for _ in range(batches):
        batch: list[str] = []
        while len(batch) < per_batch:
            open_ = [m for m in by_modality if any(t not in batch for t in by_modality[m])]
            order = sorted(open_, key=lambda m: (drawn[m], last.get(m, -1), rng.random()))
            for modality in order[: per_batch - len(batch)]:
                batch.append(_next_task(modality, by_modality, queues, batch, rng))
                drawn[modality] += 1
                last[modality] = len(rows) + len(batch)
        rows.extend(batch)
    return rows


def _next_task(
    modality: str,
    by_modality: dict[str, list[str]],
    queues: dict[str, list[str]],
    batch: list[str],
    rng: random.Random,
) -> str:
    """The modality's next task not already in ``batch`` (the caller knows there is one)."""
    free = [t for t in by_modality[modality] if t not in batch]
    queue = queues[modality]
    if not any(t in free for t in queue):
        queue[:] = rng.sample(by_modality[modality], len(by_modality[modality]))
    task = next(t for t in queue if t in free)
    queue.remove(task)
    return task


def batches_needed(tasks: int, per_batch: int, max_steps: int, per_step: int) -> int:
    """Generation batches enough for the run: ``max_steps`` optimizer steps of up to
    ``per_step`` batches each, or one pass over the tasks when the run counts epochs."""
    one_pass = math.ceil(tasks / per_batch)
    return max(one_pass, max_steps * per_step) if max_steps > 0 else one_pass
