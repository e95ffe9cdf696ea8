"""``sandmle/aide``: AIDE's greedy solution-tree search as an Inspect solver.

The search policy is aideml's ``Agent.search_policy`` (``aide/agent.py``): draft until there
are ``num_drafts`` root nodes; otherwise, with probability ``debug_prob``, debug a random
buggy leaf whose debug depth is at most ``max_debug_depth``; otherwise improve the best good
node, or draft when there is none. Defaults are aideml's ``aide/utils/config.yaml``
(``agent.steps`` 20, ``search.num_drafts`` 5, ``debug_prob`` 0.5, ``max_debug_depth`` 3,
``exec.timeout`` 3600, code and feedback temperature 0.5). ``preset="mle-bench"`` applies
MLE-bench's run settings (``agents/aide/config.yaml`` in openai/mle-bench: ``agent.steps``
500, ``agent.time_limit`` 7200, ``exec.timeout`` 32400, ``search.max_debug_depth`` 20,
``search.debug_prob`` 1). Explicit arguments win over the preset.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from random import Random
from typing import Literal

from inspect_ai.model import GenerateConfig
from inspect_ai.solver import Generate, Solver, TaskState, solver

from sandmle.harness.search_tree import Operator, SearchNode
from sandmle.harness.solvers import guard
from sandmle.scaffolds.aide_prompts import AidePrompter
from sandmle.scaffolds.search import Budget, Journal, start_search

Preset = Literal["aide", "mle-bench"]


@dataclass(frozen=True)
class AideSettings:
    """AIDE's search settings (aideml defaults)."""

    steps: int = 20
    num_drafts: int = 5
    debug_prob: float = 0.5
    max_debug_depth: int = 3
    exec_timeout: int = 3600
    time_limit: float | None = None
    temperature: float = 0.5


PRESETS: dict[Preset, AideSettings] = {
    "aide": AideSettings(),
    "mle-bench": AideSettings(
        steps=500, debug_prob=1.0, max_debug_depth=20, exec_timeout=32400, time_limit=7200
    ),
}


def resolve_settings(preset: Preset = "aide", **overrides: float | int | None) -> AideSettings:
    """The preset's settings with every non-None override applied."""
    if preset not in PRESETS:
        raise ValueError(f"unknown AIDE preset {preset!r}: use one of {', '.join(PRESETS)}")
    known = {f.name for f in fields(AideSettings)}
    unknown = set(overrides) - known
    if unknown:
        raise ValueError(f"unknown AIDE settings: {', '.join(sorted(unknown))}")
    return replace(PRESETS[preset], **{k: v for k, v in overrides.items() if v is not None})


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
    preset: Preset = "aide",
    validate: bool = True,
    seed: int = 0,
) -> Solver:
    """AIDE's greedy tree search over whole-script solutions.

    Args:
        steps: Nodes to create (default 20; mle-bench 500).
        num_drafts: Root drafts before improving (default 5).
        debug_prob: Chance of debugging a buggy leaf each step (default 0.5; mle-bench 1).
        max_debug_depth: Deepest debug chain still debugged (default 3; mle-bench 20).
        exec_timeout: Seconds per script run (default 3600; mle-bench 32400).
        time_limit: Seconds of wall time for the search (default: the sample's limit;
            mle-bench 7200).
        temperature: Sampling temperature of the operator and review calls (default 0.5).
        preset: ``aide`` (aideml's defaults) or ``mle-bench`` (MLE-bench's AIDE run).
        validate: Check each submission's format with the grader (never its score).
        seed: Seed of the policy's RNG.
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

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        config = GenerateConfig(temperature=settings.temperature)
        search = await start_search(
            state,
            scaffold="aide",
            prompter=lambda task, overview: AidePrompter(task, overview, settings.exec_timeout),
            budget=Budget(settings.steps, settings.time_limit, settings.exec_timeout),
            validate=validate,
            code_config=config,
            review_config=config,
        )
        rng = sample_rng(seed, state)
        while not search.exhausted:
            operator, parent = aide_choice(
                search.journal,
                rng,
                num_drafts=settings.num_drafts,
                debug_prob=settings.debug_prob,
                max_debug_depth=settings.max_debug_depth,
            )
            await search.expand(operator, [parent] if parent else [])
        await search.finish()
        return state

    return guard(solve)
