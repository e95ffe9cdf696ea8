"""AIDE replays aideml's own runs under each shipped preset, node for node, through the engine
(AIRA's: ``test_replay_aira``).

``fixtures/replay/aideml_journal.json`` was recorded by ``record_aideml.py`` there: it runs
aideml's unmodified ``Agent.step`` (WecoAI/aideml @ 9643875) with a scripted model whose review
of the i-th node returns the i-th scheduled outcome (buggy, or good with a metric), under
``random.seed(seed)``, with the search values of each preset: ``reference`` read from aideml's
``aide/utils/config.yaml`` (20 steps, 5 drafts, ``debug_prob`` 0.5, ``max_debug_depth`` 3),
``mle-bench`` MLE-bench's AIDE run (500 steps, ``debug_prob`` 1, ``max_debug_depth`` 20), three
runs each at outcome rates ``p_bug`` 0.5, 0.8 and 0.95.

Here the same outcomes go through sandmle's engine (``Search.expand`` in ``greedy_search``,
the model and the sandbox replaced by the scheduled outcome) under the shipped
``aide.PRESETS`` values, not the fixture's: every node must have aideml's operator and parent.
aideml also draws from the global RNG in every draft prompt (a shuffle of its 11 package
names, ``Agent._prompt_environment``, ``aide/agent.py:95-115``), so the replay makes the same
draws there.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from random import Random

import pytest

from sandmle.harness.search_tree import SearchNode
from sandmle.scaffolds.aide import PRESETS, greedy_search
from sandmle.scaffolds.search import Budget, Journal, engine
from tests.scaffolds.test_replay_aira import PACKAGES, ReplaySearch

FIXTURE = Path(__file__).parent / "fixtures" / "replay" / "aideml_journal.json"
RUNS = json.loads(FIXTURE.read_text())["runs"]


@dataclass
class AideReplay(ReplaySearch):
    """The replay engine with aideml's draws: a package shuffle in draft prompts only."""

    async def _develop(self, node: SearchNode, parents: list[SearchNode]) -> None:
        if node.operator == "draft":
            self.prompt_rng.shuffle(list(range(PACKAGES)))
        node.is_bug, node.metric = self.verdicts[len(self.journal)]
        node.exec_time_s = 0.1


async def replay(run: dict) -> list[SearchNode]:
    settings, rng = PRESETS[run["preset"]], Random(run["seed"])
    search = AideReplay(
        task="A task.",
        journal=Journal(lower_is_better=False),  # as aide() makes it: no blank root
        prompter=lambda *args: "",
        budget=Budget(settings.steps, settings.time_limit),  # no run: no run limit
        scaffold="aide",
        verdicts=[(bool(bug), metric) for bug, metric in run["outcomes"]],
        prompt_rng=rng,
    )
    await greedy_search(search, rng, settings)
    return search.journal.nodes


@pytest.fixture(autouse=True)
def no_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    async def publish(node_id: int | None) -> None:
        pass

    monkeypatch.setattr(engine, "publish", publish)


@pytest.mark.parametrize(
    "run", RUNS, ids=lambda r: f"{r['preset']}-seed{r['seed']}-bug{r['p_bug']}"
)
def test_aide_replays_aideml_under_each_shipped_preset(run: dict) -> None:
    nodes = asyncio.run(replay(run))
    assert [n.operator for n in nodes] == run["operators"]
    assert [n.parent for n in nodes] == run["parents"]


def test_the_aideml_fixture_reaches_every_limit() -> None:
    """Drafts, the step limit, and a debug chain past each preset's depth limit."""
    for preset, settings in PRESETS.items():
        runs = [r for r in RUNS if r["preset"] == preset]
        assert runs and all(len(r["operators"]) == settings.steps for r in runs)
        assert all(
            r["operators"][: settings.num_drafts] == ["draft"] * settings.num_drafts for r in runs
        )
        assert {"improve", "debug"} <= {op for r in runs for op in r["operators"]}
        deepest = max(debug_depth(r, i) for r in runs for i in range(len(r["operators"])))
        assert deepest > settings.max_debug_depth  # made, never debugged further


def debug_depth(run: dict, index: int) -> int:
    depth = 0
    while run["operators"][index] == "debug":
        depth, index = depth + 1, run["parents"][index]
    return depth
