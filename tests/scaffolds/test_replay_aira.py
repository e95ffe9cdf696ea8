"""AIRA's greedy, MCTS and evolutionary searches replay aira-dojo's own runs, node for node.

``fixtures/replay/airadojo_search.json.gz`` was recorded by ``record_airadojo.py`` there: it
runs aira-dojo's unmodified ``Greedy``, ``MCTS`` and ``Evolutionary`` solvers
(facebookresearch/aira-dojo @ c795d86) under the search values of its released
``configs/solver/mlebench/*.yaml`` with a scripted model whose analysis of the k-th node
evaluated returns the k-th scheduled verdict (``schedule``, the same here), the global
``random`` and ``numpy.random`` seeded with the run's seed. Each run goes to the reference's
own end: the step limit (499 greedy nodes, 10000 MCTS nodes), MCTS's idling once its steps
are spent, evo's 100 generations, or evo's error when no island can give two parents.

Here the same verdicts go through sandmle's engine (``Search.expand``/``debug_chain``, with
the model and the sandbox replaced by the scheduled verdict) under the shipped
``preset=reference`` values, not the fixture's; every node must have the reference's
operator and parents (for MCTS up to the first tie between unvisited siblings, which
aira-dojo breaks arbitrarily: ``Node.children`` is a set). Both references also draw from their RNG in every operator prompt
(a shuffle of the 11 package names, ``core/solvers/operators/draft.py:32-33`` and the
improve, debug and crossover twins), so the replay makes the same draws.
"""

from __future__ import annotations

import asyncio
import gzip
import importlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from random import Random

import pytest
from numpy.random import RandomState

from sandmle.harness.search_tree import SearchNode
from sandmle.scaffolds import aira_presets
from sandmle.scaffolds.aide import greedy_search
from sandmle.scaffolds.aira import BLANK_ROOT
from sandmle.scaffolds.aira_evo import evo_search
from sandmle.scaffolds.aira_mcts import mcts_search
from sandmle.scaffolds.search import Budget, Journal, Search, engine

aira_mcts = importlib.import_module("sandmle.scaffolds.aira_mcts")  # the package exports the solver
FIXTURE = Path(__file__).parent / "fixtures" / "replay" / "airadojo_search.json.gz"
PACKAGES = 11
"""Length of the package list aira-dojo shuffles in each operator prompt."""
LETTER = {"draft": "D", "improve": "I", "debug": "B", "crossover": "C"}


def schedule(seed: int, p_bug: float, length: int) -> list[tuple[bool, float | None]]:
    """The recorder's verdicts (``record_airadojo.schedule``)."""
    rng = Random(2000 + seed)
    return [
        (True, None) if rng.random() < p_bug else (False, round(rng.uniform(0.5, 0.9), 4))
        for _ in range(length)
    ]


@dataclass
class ReplaySearch(Search):
    """The engine with the k-th node's model calls, run and review replaced by verdict k."""

    verdicts: list[tuple[bool, float | None]] = field(default_factory=list)
    prompt_rng: Random = field(default_factory=Random)

    async def _develop(self, node: SearchNode, parents: list[SearchNode]) -> None:
        self.prompt_rng.shuffle(list(range(PACKAGES)))
        node.is_bug, node.metric = self.verdicts[len(self.journal)]
        node.exec_time_s = 0.1  # the recorder's run time
        node.plan, node.code = "A plan in a few words.", "print('metric', 0.5)"

    def record(self, node: SearchNode | None = None) -> None:
        pass  # the store and the transcript are not under test


def fixture_runs() -> list[dict]:
    return json.loads(gzip.decompress(FIXTURE.read_bytes()))["runs"]


RUNS = fixture_runs()


TIES: list[int] = []
"""Nodes made before each MCTS selection that met two or more unvisited siblings."""


def select_noting_ties(journal: Journal, stats: aira_mcts.MctsStats) -> list[int]:
    path = SELECT(journal, stats)
    for node_id in path[:-1]:
        siblings = aira_mcts.tree_children(journal, node_id)
        if len(siblings) > 1 and all(stats.visits.get(c, 0) == 0 for c in siblings):
            TIES.append(len(journal))
            break
    return path


SELECT = aira_mcts.select_path


async def replay(run: dict, preset: str) -> list[SearchNode]:
    rng, solver = Random(run["seed"]), run["solver"]
    TIES.clear()
    settings = {"greedy": aira_presets.GREEDY, "mcts": aira_presets.MCTS,
                "evo": aira_presets.EVO}[solver][preset]  # fmt: skip
    search = ReplaySearch(
        task="A task.",
        journal=Journal(lower_is_better=False, blank_root=BLANK_ROOT),  # as the solvers make it
        prompter=lambda *args: "",
        budget=Budget(settings.steps, settings.time_limit),  # no run: no run limit
        scaffold=f"aira_{solver}",
        verdicts=schedule(run["seed"], run["p_bug"], 12000),
        prompt_rng=rng,
    )
    if isinstance(settings, aira_presets.GreedySettings):
        await greedy_search(search, rng, settings)
    elif isinstance(settings, aira_presets.MctsSettings):
        await mcts_search(search, settings)
    else:
        await evo_search(search, rng, RandomState(run["seed"]), settings)
    return search.journal.nodes


def decisions(nodes: list[SearchNode]) -> tuple[str, list[list[int]]]:
    return "".join(LETTER[n.operator] for n in nodes), [list(n.parents) for n in nodes]


@pytest.fixture(autouse=True)
def no_sandbox(monkeypatch):
    async def publish(node_id: int | None) -> None:
        pass

    monkeypatch.setattr(engine, "publish", publish)
    monkeypatch.setattr(aira_mcts, "select_path", select_noting_ties)


@pytest.mark.parametrize("preset", list(aira_presets.GREEDY))
@pytest.mark.parametrize(
    "run", RUNS, ids=lambda r: f"{r['solver']}-seed{r['seed']}-bug{r['p_bug']}"
)
def test_aira_search_replays_an_aira_dojo_run(run: dict, preset: str):
    operators, parents = decisions(asyncio.run(replay(run, preset)))
    recorded = run["operators"]
    if run["end"].startswith("raised"):
        # aira-dojo raises when no island has two parents for a crossover; sandmle improves
        assert operators[: len(recorded)] == recorded
        assert parents[: len(recorded)] == run["parents"]
        assert operators[len(recorded)] == "I"
        return
    # aira-dojo breaks a tie between unvisited siblings by the order of a set of nodes
    # hashed by random ids (``Node.children``, journal.py:53): from there on its choice is
    # arbitrary, sandmle's the first made; the runs must agree up to it and end alike
    same = TIES[0] if TIES else len(recorded)
    assert operators[:same] == recorded[:same]
    assert parents[:same] == run["parents"][:same]
    assert len(operators) == len(recorded)


def runs_of(solver: str) -> list[dict]:
    return [r for r in RUNS if r["solver"] == solver]


def depths(nodes: list[SearchNode]) -> list[int]:
    journal = Journal(lower_is_better=False, blank_root=True)
    for n in nodes:
        journal.add(n)
    return [journal.debug_depth(n) for n in nodes]


def test_the_runs_reach_every_limit():
    """What the fixture must exercise for the replay to pin every preset value."""
    greedy, mcts, evo = (aira_presets.GREEDY["reference"], aira_presets.MCTS["reference"],
                         aira_presets.EVO["reference"])  # fmt: skip
    # greedy: the step limit (the root takes one), the drafts, and a chain cut at the depth
    assert {len(r["operators"]) for r in runs_of("greedy")} == {greedy.steps - 1}
    assert all(r["operators"].count("D") == greedy.num_drafts for r in runs_of("greedy"))
    deepest = asyncio.run(replay(runs_of("greedy")[-1], "reference"))
    assert max(depths(deepest)) == greedy.max_debug_depth + 1  # made, then never debugged
    # MCTS: the step limit (reached by an overrun, and the idle end), full expansions, and
    # debug chains cut at the depth limit, which a draft's chain reaches one try early
    assert {len(r["operators"]) for r in runs_of("mcts")} == {mcts.steps, mcts.steps - 1}
    assert {r["end"] for r in runs_of("mcts")} == {"limit", "idle until the time limit"}
    tree = asyncio.run(replay(runs_of("mcts")[1], "reference"))
    assert not TIES  # compared node for node to the end
    assert max(depths(tree)) == mcts.max_debug_depth
    children: dict[int, int] = {}
    for n in tree:
        if n.operator == "improve":
            children[n.parent or 0] = children.get(n.parent or 0, 0) + 1
    assert max(children.values()) == mcts.num_children
    # evo: every generation, crossover from its first generation on, and full debug cycles
    full = asyncio.run(replay(runs_of("evo")[1], "reference"))
    generations = [n.extra.get("generation") for n in full if "generation" in n.extra]
    assert max(generations) == evo.num_generations - 1
    first_crossover = min(n.extra["generation"] for n in full
                          if n.operator == "crossover" and "generation" in n.extra)  # fmt: skip
    assert first_crossover == evo.num_generations_till_crossover
    assert "B" * evo.max_debug_depth in decisions(full)[0]
    assert "B" * (evo.max_debug_depth + 1) not in decisions(full)[0]
    assert any(r["end"].startswith("raised") for r in runs_of("evo"))
