"""``sandmle/aide``: AIDE's greedy solution-tree search as an Inspect solver.

The search policy is aideml's ``Agent.search_policy`` (WecoAI/aideml @ 9643875,
``aide/agent.py``): draft until there are ``num_drafts`` root nodes; otherwise, with
probability ``debug_prob``, debug a random buggy leaf whose debug depth is at most
``max_debug_depth``; otherwise improve the best good node, or draft when there is none.

Presets: ``reference`` (the default) is aideml's ``aide/utils/config.yaml`` at that commit
(``agent.steps`` 20, ``search.num_drafts`` 5, ``debug_prob`` 0.5, ``max_debug_depth`` 3,
code and feedback ``temp`` 0.5, no time limit); ``mle-bench`` is MLE-bench's AIDE run
(openai/mle-bench main, ``agents/aide/config.yaml:2-3,14-16`` as of a0e3b23: ``agent.steps``
500, ``time_limit`` 86400, ``search.max_debug_depth`` 20, ``search.debug_prob`` 1) with its
fork's behaviour (``mle_bench_fork``: the time, steps and hardware in every prompt; a run
without ``submission.csv`` is buggy). Explicit arguments win over the preset.

A script run gets the task's seconds per command (``-T command_timeout`` or its profile's),
cut to the time left, in every preset: the task states the clock. aideml's ``exec.timeout``
is 3600 and MLE-bench's 32400 (``config.yaml:17``), the ``mle-bench`` profile's; ``-S
exec_timeout`` sets another.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from random import Random
from typing import Any, Literal, Protocol

from inspect_ai.model import GenerateConfig
from inspect_ai.solver import Generate, Solver, TaskState, solver

from sandmle.harness.search_tree import Operator, SearchNode
from sandmle.harness.solvers import guard
from sandmle.harness.tools import command_timeout
from sandmle.scaffolds.aide_prompts import AidePrompter
from sandmle.scaffolds.search import Budget, Journal, ModelSettings, Search, start_search
from sandmle.scaffolds.search.engine import DEFAULT_MEMORY_TOKENS
from sandmle.scaffolds.search.model_io import DEFAULT_RETRIES

Preset = Literal["reference", "mle-bench"]


@dataclass(frozen=True)
class AideSettings:
    """AIDE's search settings (aideml defaults)."""

    steps: int = 20
    num_drafts: int = 5
    debug_prob: float = 0.5
    max_debug_depth: int = 3
    exec_timeout: int | None = None
    """Seconds per script run; None: the task's ``command_timeout``."""
    time_limit: float | None = None
    temperature: float = 0.5
    mle_bench_fork: bool = False
    """MLE-bench's AIDE fork: time/steps/hardware in every prompt, no submission = buggy."""


PRESETS: dict[Preset, AideSettings] = {
    "reference": AideSettings(),
    "mle-bench": AideSettings(
        steps=500,
        debug_prob=1.0,
        max_debug_depth=20,
        time_limit=86400,
        mle_bench_fork=True,
    ),
}


def resolve_settings(preset: Preset = "reference", **overrides: float | int | None) -> AideSettings:
    """The preset's settings with every non-None override applied."""
    if preset not in PRESETS:
        raise ValueError(f"unknown AIDE preset {preset!r}: use one of {', '.join(PRESETS)}")
    known = {f.name for f in fields(AideSettings)}
    unknown = set(overrides) - known
    if unknown:
        raise ValueError(f"unknown AIDE settings: {', '.join(sorted(unknown))}")
    # names checked above; each value has its field's type (aide() passes them one by one)
    changes: dict[str, Any] = {k: v for k, v in overrides.items() if v is not None}
    return replace(PRESETS[preset], **changes)


def aide_choice(
    journal: Journal,
    rng: Random,
    *,
    num_drafts: int,
    debug_prob: float,
    max_debug_depth: int,
) -> tuple[Operator, SearchNode | None]:
    """AIDE's search policy: the next operator and the node it applies to (None: draft)."""
    if len(journal.drafts) < num_drafts:
        return "draft", None
    if rng.random() < debug_prob:
        debuggable = [
            n
            for n in journal.buggy_nodes
            if journal.is_leaf(n) and journal.debug_depth(n) <= max_debug_depth
        ]
        if debuggable:
            return "debug", rng.choice(debuggable)
    best = journal.best_node()
    if best is None:
        return "draft", None
    return "improve", best


class GreedyRule(Protocol):
    """The settings AIDE's rule reads (AIDE's and AIRA greedy's settings both have them)."""

    @property
    def num_drafts(self) -> int: ...
    @property
    def debug_prob(self) -> float: ...
    @property
    def max_debug_depth(self) -> int: ...


async def greedy_search(search: Search, rng: Random, rule: GreedyRule) -> None:
    """Grow the tree by AIDE's rule until the budget is spent (AIDE and AIRA greedy)."""
    while not search.exhausted:
        operator, parent = aide_choice(
            search.journal,
            rng,
            num_drafts=rule.num_drafts,
            debug_prob=rule.debug_prob,
            max_debug_depth=rule.max_debug_depth,
        )
        await search.expand(operator, [parent] if parent else [])
    await search.finish()


def sample_rng(seed: int, state: TaskState) -> Random:
    """A private RNG per sample and epoch, so runs repeat and samples differ."""
    return Random(f"{seed}:{state.sample_id}:{state.epoch}")


@solver
def aide(
    steps: int | None = None,
    num_drafts: int | None = None,
    debug_prob: float | None = None,
    max_debug_depth: int | None = None,
    exec_timeout: int | None = None,
    time_limit: float | None = None,
    temperature: float | None = None,
    preset: Preset = "reference",
    validate: bool = True,
    seed: int = 0,
    retries: int = DEFAULT_RETRIES,
    memory_tokens: int = DEFAULT_MEMORY_TOKENS,
    submit_fallback: bool = False,
) -> Solver:
    """AIDE's greedy tree search over whole-script solutions.

    Args:
        steps: Nodes to create (reference 20; mle-bench 500).
        num_drafts: Root drafts before improving (5).
        debug_prob: Chance of debugging a buggy leaf each step (reference 0.5; mle-bench 1).
        max_debug_depth: Deepest debug chain still debugged (reference 3; mle-bench 20).
        exec_timeout: Seconds per script run (None: the task's ``command_timeout``).
        time_limit: Seconds of wall time for the search (reference: the sample's limit;
            mle-bench 86400).
        temperature: Sampling temperature of the operator and review calls (0.5).
        preset: ``reference`` (aideml's defaults) or ``mle-bench`` (MLE-bench's AIDE run).
        validate: Check each submission's format with the grader (never its score).
        seed: Seed of the policy's RNG.
        retries: Tries per model call before the node is recorded as failed (aideml: 3).
        memory_tokens: Budget of the memory section (halved after a reply cut for length).
        submit_fallback: With no good node, hand in the latest usable submission (off: as
            aideml, hand in nothing).
    """
    settings = resolve_settings(
        preset,
        steps=steps,
        num_drafts=num_drafts,
        debug_prob=debug_prob,
        max_debug_depth=max_debug_depth,
        exec_timeout=exec_timeout,
        time_limit=time_limit,
        temperature=temperature,
    )

    config = GenerateConfig(temperature=settings.temperature)
    # aideml retries a reply without a plan (aide/agent.py:167-171 @ 9643875)
    model = ModelSettings(
        config, config, {}, retries, memory_tokens, submit_fallback, require_plan=True
    )

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        search = await start_search(
            state,
            scaffold="aide",
            prompter=lambda parts: AidePrompter(parts, settings.mle_bench_fork),
            budget=Budget(
                settings.steps, settings.time_limit, command_timeout(settings.exec_timeout)
            ),
            model=model,
            validate=validate,
            require_submission=settings.mle_bench_fork,
        )
        await greedy_search(search, sample_rng(seed, state), settings)
        return state

    return guard(solve)
