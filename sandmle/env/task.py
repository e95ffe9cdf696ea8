"""The task an episode runs: ``inspect eval sandmle/synthetic -T <limits> --solver <scaffold>``.

GRPO's rollouts, the Seed-SFT teacher and the environment server build their Inspect task here,
from one ``EpisodeSpec``, so an episode is the same sample under each of them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

from inspect_ai import Task, task_with
from inspect_ai.dataset import MemoryDataset
from inspect_ai.solver import Solver

from sandmle.benchmarks.mle_dojo.solver import dojo
from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.errors import SandmleError
from sandmle.scaffolds import aide, aira_evo, aira_greedy, aira_mcts, react
from sandmle.specs.episode import EpisodeSpec

SCORER = "medal_scorer"
"""The scorer whose value is the episode's grade."""
STEPWISE_SOLVERS: dict[str, Callable[..., Solver]] = {"react": react}
"""Scaffolds whose episode is one conversation: what ``sandmle/<name>`` runs in evaluation. One
conversation is what trajectory-wise GRPO trains and what a step-wise environment serves."""
TREE_SOLVERS = ("aide", "aira_greedy", "aira_mcts", "aira_evo")
"""Scaffolds whose episode is many independent model calls (a search tree): their control loop
cannot be inverted into steps, nor trained as one token sequence."""
WHOLE_SOLVERS: dict[str, Callable[..., Solver]] = {
    "react": react, "aide": aide, "aira_greedy": aira_greedy, "aira_mcts": aira_mcts,
    "aira_evo": aira_evo, "dojo": dojo,
}  # fmt: skip
"""Scaffolds a whole episode runs (``POST /episodes``): the scaffold keeps its control loop and
calls the caller's model endpoint."""


def episode_agent(episode: EpisodeSpec, whole: bool = False) -> Solver:
    """The evaluation scaffold ``episode.solver`` with its arguments (``-S`` in ``inspect eval``).

    Step-wise (``whole`` false), tree scaffolds are refused: their model calls are independent
    conversations (drafts, debugs, improvements of different nodes), so there is no one token
    sequence per episode for trajectory-wise GRPO, and no one conversation to step through;
    train in ``react`` and evaluate transfer to them, or run them as whole episodes.
    """
    name = episode.scaffold
    if name in TREE_SOLVERS and not whole:
        raise SandmleError(
            f"solver {name}: a tree scaffold makes many independent model calls per episode, "
            f"which one conversation cannot hold; train in react and evaluate in {name}, or "
            "run it as a whole episode (POST /episodes)"
        )
    solvers = WHOLE_SOLVERS if whole else STEPWISE_SOLVERS
    factory = solvers.get(name)
    if factory is None:
        kind = "whole episodes" if whole else "step-wise"
        raise SandmleError(f"solver {episode.solver!r}: unknown ({kind}: {', '.join(solvers)})")
    unknown = sorted(set(episode.solver_args) - set(inspect.signature(factory).parameters))
    if unknown:
        raise SandmleError(f"solver_args: {name} takes no {', '.join(unknown)}")
    return factory(**episode.solver_args)


def episode_task(
    episode: EpisodeSpec,
    pack: str | None,
    task_ids: list[str],
    setup: Sequence[Solver] = (),
    name: str = "synthetic-episodes",
    whole: bool = False,
) -> Task:
    """The synthetic task with one sample per entry of ``task_ids`` (``<task>#<index>``),
    built from the episode's ``-T`` arguments as ``inspect eval`` builds it; ``setup`` runs
    after the task's own setup."""
    base = synthetic(pack=pack, tasks=sorted(set(task_ids)), **episode.task_args())
    by_id = {str(s.id): s for s in base.dataset}
    samples = [by_id[t].model_copy(update={"id": f"{t}#{i}"}) for i, t in enumerate(task_ids)]
    return task_with(
        base,
        dataset=MemoryDataset(samples, name=name),
        setup=[*_solvers(base.setup), *setup],
        solver=episode_agent(episode, whole),
    )


def _solvers(setup: Solver | Sequence[Solver] | None) -> list[Solver]:
    """A task's setup as a list (Inspect takes one solver or several)."""
    if setup is None:
        return []
    return list(setup) if isinstance(setup, Sequence) else [setup]
