"""``sandmle/aira_greedy``, ``aira_mcts``, ``aira_evo``: AIRA-dojo's operators under three policies.

Sources (facebookresearch/aira-dojo and its forks): ``src/dojo/solvers/{greedy,mcts,evo}/*.py``
for the rules; ``src/dojo/configs/solver/mlebench/{greedy,mcts}.yaml`` for the MLE-bench
settings (greedy: ``num_drafts`` 5, ``debug_prob`` 1.0, ``max_debug_depth`` 20; MCTS:
``num_children`` 5, ``uct_c`` 0.25, ``max_debug_depth`` 20); ``configs/solver/evo.yaml``
(``max_debug_depth`` 5, ``execution_timeout`` 14400); the evolutionary MLE-bench values
(one island of up to 500, 5 individuals per generation, 100 generations, ``crossover_prob``
0.5 from generation 2, migration off, temperature 1.0 throughout) are from the AIRA paper as
quoted by two independent re-implementations. Operators sample at temperature 0.6 and
top-p 0.95, the analysis at 0.5. AIRA ran ``step_limit`` 500 (greedy) or 2500 (MCTS) in 24 h;
sandmle's default budget is 20 steps (``-S steps=...``), cut short by the sample's time limit.
"""

from __future__ import annotations

from inspect_ai.model import GenerateConfig
from inspect_ai.solver import Generate, Solver, TaskState, solver

from sandmle.harness.search_tree import SearchNode
from sandmle.harness.solvers import guard
from sandmle.scaffolds.aide import aide_choice, sample_rng
from sandmle.scaffolds.aira_evo import Population, temperature_at
from sandmle.scaffolds.aira_mcts import MctsStats, debug_chain, mcts_step
from sandmle.scaffolds.aira_prompts import AiraPrompter
from sandmle.scaffolds.search import Budget, Search, start_search

DEFAULT_STEPS = 20
DEFAULT_EXEC_TIMEOUT = 14400
OPERATOR_CONFIG = GenerateConfig(temperature=0.6, top_p=0.95)
REVIEW_CONFIG = GenerateConfig(temperature=0.5)


async def _start(
    state: TaskState,
    scaffold: str,
    steps: int,
    exec_timeout: int,
    time_limit: float | None,
    use_complexity: bool,
    validate: bool,
) -> Search:
    return await start_search(
        state,
        scaffold=scaffold,
        prompter=lambda task, overview: AiraPrompter(task, overview, exec_timeout, use_complexity),
        budget=Budget(steps, time_limit, exec_timeout),
        validate=validate,
        code_config=OPERATOR_CONFIG,
        review_config=REVIEW_CONFIG,
    )


@solver
def aira_greedy(
    steps: int = DEFAULT_STEPS,
    num_drafts: int = 5,
    debug_prob: float = 1.0,
    max_debug_depth: int = 20,
    exec_timeout: int = DEFAULT_EXEC_TIMEOUT,
    time_limit: float | None = None,
    use_complexity: bool = True,
    validate: bool = True,
    seed: int = 0,
) -> Solver:
    """AIRA's greedy search: AIDE's policy with AIRA's operators.

    Args:
        steps: Nodes to create.
        num_drafts: Root drafts before improving.
        debug_prob: Chance of debugging a buggy leaf each step.
        max_debug_depth: Deepest debug chain still debugged.
        exec_timeout: Seconds per script run.
        time_limit: Seconds of wall time for the search (default: the sample's limit).
        use_complexity: Ask for simple-to-complex ideas as a node gains children.
        validate: Check each submission's format with the grader (never its score).
        seed: Seed of the policy's RNG.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        search = await _start(
            state, "aira_greedy", steps, exec_timeout, time_limit, use_complexity, validate
        )
        rng = sample_rng(seed, state)
        while not search.exhausted:
            operator, parent = aide_choice(
                search.journal,
                rng,
                num_drafts=num_drafts,
                debug_prob=debug_prob,
                max_debug_depth=max_debug_depth,
            )
            await search.expand(operator, [parent] if parent else [])
        await search.finish()
        return state

    return guard(solve)


@solver
def aira_mcts(
    steps: int = DEFAULT_STEPS,
    num_children: int = 5,
    uct_c: float = 0.25,
    max_debug_depth: int = 20,
    exec_timeout: int = DEFAULT_EXEC_TIMEOUT,
    time_limit: float | None = None,
    use_complexity: bool = True,
    validate: bool = True,
) -> Solver:
    """AIRA's Monte Carlo tree search (UCT over normalised values; see ``aira_mcts``).

    Args:
        steps: Nodes to create.
        num_children: Children made each time a leaf is expanded.
        uct_c: UCT exploration constant.
        max_debug_depth: Longest debug chain for a buggy child.
        exec_timeout: Seconds per script run.
        time_limit: Seconds of wall time for the search (default: the sample's limit).
        use_complexity: Ask for simple-to-complex ideas as a node gains children.
        validate: Check each submission's format with the grader (never its score).
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        search = await _start(
            state, "aira_mcts", steps, exec_timeout, time_limit, use_complexity, validate
        )
        stats = MctsStats(lower_is_better=search.journal.direction(), uct_c=uct_c)
        while not search.exhausted:
            await mcts_step(search, stats, num_children, max_debug_depth)
        await search.finish()
        return state

    return guard(solve)


@solver
def aira_evo(
    steps: int = DEFAULT_STEPS,
    individuals_per_generation: int = 5,
    num_generations: int = 100,
    num_islands: int = 1,
    max_island_size: int = 500,
    crossover_prob: float = 0.5,
    num_generations_till_crossover: int = 2,
    migration_prob: float = 0.0,
    num_generations_till_migration: int = 2,
    initial_temp: float = 1.0,
    final_temp: float = 1.0,
    max_debug_depth: int = 5,
    exec_timeout: int = DEFAULT_EXEC_TIMEOUT,
    time_limit: float | None = None,
    use_complexity: bool = True,
    validate: bool = True,
    seed: int = 0,
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
        initial_temp: Sampling temperature at generation 0.
        final_temp: Sampling temperature at the last generation.
        max_debug_depth: Longest debug chain for a buggy child.
        exec_timeout: Seconds per script run.
        time_limit: Seconds of wall time for the search (default: the sample's limit).
        use_complexity: Ask for simple-to-complex ideas as a node gains children.
        validate: Check each submission's format with the grader (never its score).
        seed: Seed of the policy's RNG.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        search = await _start(
            state, "aira_evo", steps, exec_timeout, time_limit, use_complexity, validate
        )
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
                if generation == 0:
                    operator, parents, island = "draft", [], rng.randrange(num_islands)
                else:
                    operator, parents, island = population.sample(rng, temperature, crossover)
                child = await search.expand(operator, parents)
                if child.is_bug:
                    chain, fixed = await debug_chain(search, child, max_debug_depth)
                    child = search.journal.get(chain[-1]) if fixed is not None else None
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
