"""``sandmle/aira_greedy``, ``aira_mcts``, ``aira_evo``: AIRA-dojo's operators under three policies.

Defaults (``preset=reference``) are aira-dojo's released MLE-bench configs, value for value
(facebookresearch/aira-dojo @ c795d86, ``src/dojo/configs/solver/``), in
``sandmle.scaffolds.aira_presets`` with the file and line of each; an argument left at None
takes its preset's value. As in aira-dojo a blank buggy root node takes step 0 and sits
above the drafts (``Journal(blank_root=True)``): ``step_limit`` 500 makes 499 solutions, and
a draft's debug depth is 1.

A script run gets the task's seconds per command (``-T command_timeout`` or its profile's),
cut to the time left: the task states the clock (aira-dojo's ``execution_timeout`` is 14400);
``-S exec_timeout`` sets another.
"""

from __future__ import annotations

from random import Random

import numpy as np
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import Generate, Solver, TaskState, solver

from sandmle.harness.solvers import guard
from sandmle.harness.tools import command_timeout
from sandmle.scaffolds.aide import greedy_search, sample_rng
from sandmle.scaffolds.aira_evo import evo_search
from sandmle.scaffolds.aira_mcts import mcts_search
from sandmle.scaffolds.aira_presets import (
    EVO,
    GREEDY,
    MCTS,
    EvoSettings,
    GreedySettings,
    MctsSettings,
    Preset,
    Sampling,
    resolve,
)
from sandmle.scaffolds.aira_prompts import AiraPrompter
from sandmle.scaffolds.search import Budget, ModelSettings, Search, start_search
from sandmle.scaffolds.search.engine import DEFAULT_MEMORY_TOKENS

BLANK_ROOT = True
"""Every AIRA scaffold counts aira-dojo's blank root (see ``Journal``)."""


def model_settings(
    sampling: Sampling, retries: int, memory_tokens: int, submit_fallback: bool
) -> ModelSettings:
    """The calls' sampling (None: the client's default, as aira's ``generation_kwargs: {}``)."""
    code = GenerateConfig(temperature=sampling.temperature, top_p=sampling.top_p)
    review = GenerateConfig(temperature=sampling.analyze_temperature)
    per_operator = {}
    if sampling.crossover_temperature is not None:
        per_operator["crossover"] = GenerateConfig(temperature=sampling.crossover_temperature)
    return ModelSettings(code, review, per_operator, retries, memory_tokens, submit_fallback)


async def _start(
    state: TaskState,
    scaffold: str,
    budget: Budget,
    use_complexity: bool,
    validate: bool,
    model: ModelSettings,
) -> Search:
    return await start_search(
        state,
        scaffold=scaffold,
        prompter=lambda parts: AiraPrompter(parts, use_complexity),
        budget=budget,
        model=model,
        validate=validate,
        blank_root=BLANK_ROOT,
    )


def search_budget(settings: GreedySettings | MctsSettings | EvoSettings) -> Budget:
    """The sample's budget; a run's limit is the task's clock unless ``exec_timeout`` is set."""
    timeout_s = command_timeout(settings.exec_timeout)
    return Budget(settings.steps, settings.time_limit, timeout_s)


def numpy_rng(rng: Random) -> np.random.RandomState:
    """numpy's legacy RNG (aira-dojo draws evo's parents from it), seeded from ``rng``."""
    return np.random.RandomState(rng.getrandbits(32))


@solver
def aira_greedy(
    steps: int | None = None,
    num_drafts: int | None = None,
    debug_prob: float | None = None,
    max_debug_depth: int | None = None,
    exec_timeout: int | None = None,
    time_limit: float | None = None,
    use_complexity: bool | None = None,
    validate: bool = True,
    seed: int = 0,
    retries: int | None = None,
    memory_tokens: int = DEFAULT_MEMORY_TOKENS,
    submit_fallback: bool = False,
    preset: Preset = "reference",
) -> Solver:
    """AIRA's greedy search: AIDE's policy with AIRA's operators.

    Args:
        steps: aira's ``step_limit``; the blank root takes one (500).
        num_drafts: Root drafts before improving (5).
        debug_prob: Chance of debugging a buggy leaf each step (1.0).
        max_debug_depth: Deepest debug chain still debugged, the root counted (20).
        exec_timeout: Seconds per script run (None: the task's ``command_timeout``).
        time_limit: Seconds of wall time for the search, cut by the sample's limit (86400).
        use_complexity: Ask for simple-to-complex ideas as a node gains children (off).
        validate: Check each submission's format with the grader (never its score).
        seed: Seed of the policy's RNG.
        retries: Tries per model call before the node is recorded as failed (3).
        memory_tokens: Budget of the memory section (halved after a reply cut for length).
        submit_fallback: With no good node, hand in the latest usable submission.
        preset: ``reference`` (aira-dojo's released MLE-bench config; the only one).
    """
    settings = resolve(
        GREEDY,
        preset,
        steps=steps,
        num_drafts=num_drafts,
        debug_prob=debug_prob,
        max_debug_depth=max_debug_depth,
        exec_timeout=exec_timeout,
        time_limit=time_limit,
        use_complexity=use_complexity,
        retries=retries,
    )
    model = model_settings(settings.sampling, settings.retries, memory_tokens, submit_fallback)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        budget = search_budget(settings)
        search = await _start(
            state, "aira_greedy", budget, settings.use_complexity, validate, model
        )
        await greedy_search(search, sample_rng(seed, state), settings)
        return state

    return guard(solve)


@solver
def aira_mcts(
    steps: int | None = None,
    num_children: int | None = None,
    uct_c: float | None = None,
    max_debug_depth: int | None = None,
    max_debug_time: float | None = None,
    exec_timeout: int | None = None,
    time_limit: float | None = None,
    use_complexity: bool | None = None,
    validate: bool = True,
    retries: int | None = None,
    memory_tokens: int = DEFAULT_MEMORY_TOKENS,
    submit_fallback: bool = False,
    preset: Preset = "reference",
) -> Solver:
    """AIRA's Monte Carlo tree search (UCT over normalised values; see ``aira_mcts``).

    Args:
        steps: aira's ``step_limit``; the blank root takes one (10000).
        num_children: Children made each time a leaf is expanded (5).
        uct_c: UCT exploration constant (0.25).
        max_debug_depth: Longest debug chain for a buggy child, the root counted (20).
        max_debug_time: Seconds of run time a debug chain may spend (1e9: off).
        exec_timeout: Seconds per script run (None: the task's ``command_timeout``).
        time_limit: Seconds of wall time for the search, cut by the sample's limit (86400).
        use_complexity: Ask for simple-to-complex ideas as a node gains children (off).
        validate: Check each submission's format with the grader (never its score).
        retries: Tries per model call before the node is recorded as failed (3).
        memory_tokens: Budget of the memory section (halved after a reply cut for length).
        submit_fallback: With no good node, hand in the latest usable submission.
        preset: ``reference`` (aira-dojo's released MLE-bench config; the only one).
    """
    settings = resolve(
        MCTS,
        preset,
        steps=steps,
        num_children=num_children,
        uct_c=uct_c,
        max_debug_depth=max_debug_depth,
        max_debug_time=max_debug_time,
        exec_timeout=exec_timeout,
        time_limit=time_limit,
        use_complexity=use_complexity,
        retries=retries,
    )
    model = model_settings(settings.sampling, settings.retries, memory_tokens, submit_fallback)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        budget = search_budget(settings)
        search = await _start(state, "aira_mcts", budget, settings.use_complexity, validate, model)
        await mcts_search(search, settings)
        return state

    return guard(solve)


@solver
def aira_evo(
    steps: int | None = None,
    individuals_per_generation: int | None = None,
    num_generations: int | None = None,
    num_islands: int | None = None,
    max_island_size: int | None = None,
    crossover_prob: float | None = None,
    num_generations_till_crossover: int | None = None,
    migration_prob: float | None = None,
    num_generations_till_migration: int | None = None,
    initial_temp: float | None = None,
    final_temp: float | None = None,
    max_debug_depth: int | None = None,
    max_debug_time: float | None = None,
    exec_timeout: int | None = None,
    time_limit: float | None = None,
    use_complexity: bool | None = None,
    validate: bool = True,
    seed: int = 0,
    retries: int | None = None,
    memory_tokens: int = DEFAULT_MEMORY_TOKENS,
    submit_fallback: bool = False,
    preset: Preset = "reference",
) -> Solver:
    """AIRA's evolutionary search over islands (see ``aira_evo`` for the rules).

    Args:
        steps: aira's ``step_limit``, checked after each generation (10000).
        individuals_per_generation: Children made per generation (5).
        num_generations: Generations at most (100).
        num_islands: Sub-populations (1).
        max_island_size: Individuals an island keeps (500).
        crossover_prob: Chance of crossover instead of improve, once allowed (0.5).
        num_generations_till_crossover: First generation that may use crossover (2).
        migration_prob: Chance per generation of refreshing the weaker islands (0).
        num_generations_till_migration: First generation that may migrate (999).
        initial_temp: Selection temperature at generation 0 (1.0).
        final_temp: Selection temperature at the last generation (1.0).
        max_debug_depth: Longest debug chain for a buggy child (10).
        max_debug_time: Seconds of run time a debug chain may spend (21600).
        exec_timeout: Seconds per script run (None: the task's ``command_timeout``).
        time_limit: Seconds of wall time for the search, cut by the sample's limit (86400).
        use_complexity: Ask for simple-to-complex ideas as a node gains children (off).
        validate: Check each submission's format with the grader (never its score).
        seed: Seed of the policy's RNGs.
        retries: Tries per model call before the node is recorded as failed (3).
        memory_tokens: Budget of the memory section (halved after a reply cut for length).
        submit_fallback: With no good node, hand in the latest usable submission.
        preset: ``reference`` (aira-dojo's released MLE-bench config; the only one).
    """
    settings = resolve(
        EVO,
        preset,
        steps=steps,
        individuals_per_generation=individuals_per_generation,
        num_generations=num_generations,
        num_islands=num_islands,
        max_island_size=max_island_size,
        crossover_prob=crossover_prob,
        num_generations_till_crossover=num_generations_till_crossover,
        migration_prob=migration_prob,
        num_generations_till_migration=num_generations_till_migration,
        initial_temp=initial_temp,
        final_temp=final_temp,
        max_debug_depth=max_debug_depth,
        max_debug_time=max_debug_time,
        exec_timeout=exec_timeout,
        time_limit=time_limit,
        use_complexity=use_complexity,
        retries=retries,
    )
    model = model_settings(settings.sampling, settings.retries, memory_tokens, submit_fallback)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        budget = search_budget(settings)
        search = await _start(state, "aira_evo", budget, settings.use_complexity, validate, model)
        rng = sample_rng(seed, state)
        await evo_search(search, rng, numpy_rng(rng), settings)
        return state

    return guard(solve)
