"""``sandmle/aira_greedy``, ``aira_mcts``, ``aira_evo``: AIRA-dojo's operators under three policies.

Defaults (``preset=reference``) are aira-dojo's released MLE-bench configs, value for value
(facebookresearch/aira-dojo @ c795d86, ``src/dojo/configs/solver/``):

- greedy (``mlebench/greedy.yaml`` over ``greedy.yaml``): ``step_limit`` 500, ``num_drafts`` 5,
  ``debug_prob`` 1.0, ``max_debug_depth`` 20, ``execution_timeout`` 14400, ``time_limit_secs``
  86400, ``use_complexity`` false, ``max_llm_call_retries`` 3; operators at the client's
  default sampling (``generation_kwargs: {}``), analyze at temperature 0.5.
- MCTS (``mlebench/mcts.yaml``): ``step_limit`` 10000, ``num_children`` 5, ``uct_c`` 0.25,
  ``max_debug_depth`` 20, ``max_debug_time`` 1e9 (off), ``use_complexity`` false; draft,
  improve and debug at temperature 0.6 / top-p 0.95, analyze at 0.5.
- evolutionary (``mlebench/evo.yaml``): ``step_limit`` 10000, one island of up to 500, 5
  individuals per generation, 100 generations, ``crossover_prob`` 0.5 from generation 2,
  ``migration_prob`` 0 (from generation 999), temperatures 1.0 throughout, ``max_debug_depth``
  10, ``max_debug_time`` 21600, ``use_complexity`` false; operators at 0.6 / 0.95, analyze and
  crossover at 0.5.
"""

from __future__ import annotations

from typing import Literal

from inspect_ai.model import GenerateConfig
from inspect_ai.solver import Generate, Solver, TaskState, solver

from sandmle.harness.search_tree import SearchNode
from sandmle.harness.solvers import guard
from sandmle.scaffolds.aide import greedy_search, sample_rng
from sandmle.scaffolds.aira_evo import EvoOperator, Population, temperature_at
from sandmle.scaffolds.aira_mcts import MctsStats, mcts_step
from sandmle.scaffolds.aira_prompts import AiraPrompter
from sandmle.scaffolds.search import Budget, ModelSettings, Search, start_search
from sandmle.scaffolds.search.engine import DEFAULT_MEMORY_TOKENS
from sandmle.scaffolds.search.model_io import DEFAULT_RETRIES

Preset = Literal["reference"]
EXEC_TIMEOUT = 14400
TIME_LIMIT = 86400
SAMPLED = GenerateConfig(temperature=0.6, top_p=0.95)
ANALYZE = GenerateConfig(temperature=0.5)
CROSSOVER = GenerateConfig(temperature=0.5)


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
    )


@solver
def aira_greedy(
    steps: int = 500,
    num_drafts: int = 5,
    debug_prob: float = 1.0,
    max_debug_depth: int = 20,
    exec_timeout: int = EXEC_TIMEOUT,
    time_limit: float | None = TIME_LIMIT,
    use_complexity: bool = False,
    validate: bool = True,
    seed: int = 0,
    retries: int = DEFAULT_RETRIES,
    memory_tokens: int = DEFAULT_MEMORY_TOKENS,
    submit_fallback: bool = False,
    preset: Preset = "reference",
) -> Solver:
    """AIRA's greedy search: AIDE's policy with AIRA's operators.

    Args:
        steps: Nodes to create.
        num_drafts: Root drafts before improving.
        debug_prob: Chance of debugging a buggy leaf each step.
        max_debug_depth: Deepest debug chain still debugged.
        exec_timeout: Seconds per script run.
        time_limit: Seconds of wall time for the search (cut by the sample's limit).
        use_complexity: Ask for simple-to-complex ideas as a node gains children.
        validate: Check each submission's format with the grader (never its score).
        seed: Seed of the policy's RNG.
        retries: Tries per model call before the node is recorded as failed.
        memory_tokens: Budget of the memory section (halved after a reply cut for length).
        submit_fallback: With no good node, hand in the latest usable submission.
        preset: ``reference`` (aira-dojo's released MLE-bench config; the only one).
    """
    model = ModelSettings(GenerateConfig(), ANALYZE, {}, retries, memory_tokens, submit_fallback)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        budget = Budget(steps, time_limit, exec_timeout)
        search = await _start(state, "aira_greedy", budget, use_complexity, validate, model)
        await greedy_search(
            search,
            sample_rng(seed, state),
            num_drafts=num_drafts,
            debug_prob=debug_prob,
            max_debug_depth=max_debug_depth,
        )
        return state

    return guard(solve)


@solver
def aira_mcts(
    steps: int = 10000,
    num_children: int = 5,
    uct_c: float = 0.25,
    max_debug_depth: int = 20,
    max_debug_time: float | None = None,
    exec_timeout: int = EXEC_TIMEOUT,
    time_limit: float | None = TIME_LIMIT,
    use_complexity: bool = False,
    validate: bool = True,
    retries: int = DEFAULT_RETRIES,
    memory_tokens: int = DEFAULT_MEMORY_TOKENS,
    submit_fallback: bool = False,
    preset: Preset = "reference",
) -> Solver:
    """AIRA's Monte Carlo tree search (UCT over normalised values; see ``aira_mcts``).

    Args:
        steps: Nodes to create.
        num_children: Children made each time a leaf is expanded.
        uct_c: UCT exploration constant.
        max_debug_depth: Longest debug chain for a buggy child.
        max_debug_time: Seconds of run time a debug chain may spend (None: no limit).
        exec_timeout: Seconds per script run.
        time_limit: Seconds of wall time for the search (cut by the sample's limit).
        use_complexity: Ask for simple-to-complex ideas as a node gains children.
        validate: Check each submission's format with the grader (never its score).
        retries: Tries per model call before the node is recorded as failed.
        memory_tokens: Budget of the memory section (halved after a reply cut for length).
        submit_fallback: With no good node, hand in the latest usable submission.
        preset: ``reference`` (aira-dojo's released MLE-bench config; the only one).
    """
    model = ModelSettings(SAMPLED, ANALYZE, {}, retries, memory_tokens, submit_fallback)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        budget = Budget(steps, time_limit, exec_timeout)
        search = await _start(state, "aira_mcts", budget, use_complexity, validate, model)
        stats = MctsStats(lower_is_better=search.journal.direction(), uct_c=uct_c)
        while not search.exhausted:
            await mcts_step(search, stats, num_children, max_debug_depth, max_debug_time)
        await search.finish()
        return state

    return guard(solve)


@solver
def aira_evo(
    steps: int = 10000,
    individuals_per_generation: int = 5,
    num_generations: int = 100,
    num_islands: int = 1,
    max_island_size: int = 500,
    crossover_prob: float = 0.5,
    num_generations_till_crossover: int = 2,
    migration_prob: float = 0.0,
    num_generations_till_migration: int = 999,
    initial_temp: float = 1.0,
    final_temp: float = 1.0,
    max_debug_depth: int = 10,
    max_debug_time: float | None = 21600,
    exec_timeout: int = EXEC_TIMEOUT,
    time_limit: float | None = TIME_LIMIT,
    use_complexity: bool = False,
    validate: bool = True,
    seed: int = 0,
    retries: int = DEFAULT_RETRIES,
    memory_tokens: int = DEFAULT_MEMORY_TOKENS,
    submit_fallback: bool = False,
    preset: Preset = "reference",
) -> Solver:
    """AIRA's evolutionary search over islands (see ``aira_evo`` for the rules).

    Args:
        steps: Nodes to create (the search also stops after ``num_generations``).
        individuals_per_generation: Children made per generation.
        num_generations: Generations at most.
        num_islands: Sub-populations.
        max_island_size: Individuals an island keeps.
        crossover_prob: Chance of crossover instead of improve, once allowed.
        num_generations_till_crossover: First generation that may use crossover.
        migration_prob: Chance per generation of refreshing the weaker islands.
        num_generations_till_migration: First generation that may migrate.
        initial_temp: Selection temperature at generation 0.
        final_temp: Selection temperature at the last generation.
        max_debug_depth: Longest debug chain for a buggy child.
        max_debug_time: Seconds of run time a debug chain may spend (None: no limit).
        exec_timeout: Seconds per script run.
        time_limit: Seconds of wall time for the search (cut by the sample's limit).
        use_complexity: Ask for simple-to-complex ideas as a node gains children.
        validate: Check each submission's format with the grader (never its score).
        seed: Seed of the policy's RNG.
        retries: Tries per model call before the node is recorded as failed.
        memory_tokens: Budget of the memory section (halved after a reply cut for length).
        submit_fallback: With no good node, hand in the latest usable submission.
        preset: ``reference`` (aira-dojo's released MLE-bench config; the only one).
    """
    per_operator = {"crossover": CROSSOVER}
    model = ModelSettings(SAMPLED, ANALYZE, per_operator, retries, memory_tokens, submit_fallback)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        budget = Budget(steps, time_limit, exec_timeout)
        search = await _start(state, "aira_evo", budget, use_complexity, validate, model)
        rng = sample_rng(seed, state)
        population = Population(num_islands, max_island_size, search.journal.direction())
        for generation in range(num_generations):
            if search.exhausted:
                break
            temperature = temperature_at(generation, num_generations, initial_temp, final_temp)
            crossover = crossover_prob if generation >= num_generations_till_crossover else 0.0
            members: list[SearchNode] = []
            islands: list[int] = []
            for _ in range(individuals_per_generation):
                if search.exhausted:
                    break
                operator: EvoOperator
                parents: list[SearchNode]
                if generation == 0:
                    operator, parents, island = "draft", [], rng.randrange(num_islands)
                else:
                    operator, parents, island = population.sample(rng, temperature, crossover)
                child: SearchNode | None = await search.expand(operator, parents)
                if child is not None and child.is_bug:
                    _, child = await search.debug_chain(child, max_debug_depth, max_debug_time)
                if child is not None:
                    child.extra["island"] = island
                    members.append(child)
                    islands.append(island)
            if generation == 0:
                population.seed(members, islands)
            else:
                migrate = migration_prob if generation >= num_generations_till_migration else 0.0
                population.add(members, islands, migrate, rng)
            search.record()
        await search.finish()
        return state

    return guard(solve)
