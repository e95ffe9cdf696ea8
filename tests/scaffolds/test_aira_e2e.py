"""AIRA's three policies finish offline on the tiny pack and hand in valid submissions."""

import pytest

from sandmle.harness.search_tree import STORE_KEY
from sandmle.scaffolds.aira import aira_evo, aira_greedy, aira_mcts
from tests.scaffolds.conftest import BROKEN_SCRIPT, ScriptedModel, good, reply


def _valid(log) -> list[float]:
    return [s.scores["medal_scorer"].value["valid_submission"] for s in log.samples]


@pytest.mark.parametrize(
    "solver",
    [
        aira_greedy(steps=3, num_drafts=2),
        aira_mcts(steps=4, num_children=2),
        aira_evo(steps=5, individuals_per_generation=2, num_generations_till_crossover=1),
    ],
    ids=["greedy", "mcts", "evo"],
)
def test_aira_policy_hands_in_valid_submissions(solver, pack_dir, run_eval):
    model = ScriptedModel(default=good(0.8))
    log = run_eval(solver, model, pack_dir)
    assert log.status == "success"
    assert _valid(log) == [1.0, 1.0]
    for sample in log.samples:
        nodes = sample.store[STORE_KEY]
        assert nodes and not all(n["is_bug"] for n in nodes)


def test_aira_mcts_backpropagates_a_fixed_debug_chain(pack_dir, run_eval):
    model = ScriptedModel(replies={"draft": [reply(BROKEN_SCRIPT), good(0.8)]})
    log = run_eval(aira_mcts(steps=4, num_children=2), model, pack_dir, tasks="bike-rentals")
    [sample] = log.samples
    nodes = sample.store[STORE_KEY]
    assert [n["operator"] for n in nodes[:2]] == ["draft", "debug"]
    assert nodes[0]["is_bug"] and not nodes[1]["is_bug"]
    # the fix's metric went back through the buggy draft and the fix itself
    assert nodes[0]["extra"]["visits"] >= 1 and nodes[1]["extra"]["visits"] >= 1
    assert _valid(log) == [1.0]


def test_aira_evo_uses_crossover_with_two_parents(pack_dir, run_eval):
    solver = aira_evo(
        steps=6, individuals_per_generation=2, num_generations_till_crossover=1, crossover_prob=1.0
    )
    log = run_eval(solver, ScriptedModel(default=good(0.8)), pack_dir, tasks="plant-watering")
    [sample] = log.samples
    crossovers = [n for n in sample.store[STORE_KEY] if n["operator"] == "crossover"]
    assert crossovers and all(len(n["parents"]) == 2 for n in crossovers)
    assert all("island" in n["extra"] for n in crossovers if not n["is_bug"])
