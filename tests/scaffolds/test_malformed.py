"""Malformed model output never crashes a scaffold: the node is buggy and the search goes on."""

from inspect_ai.model import ModelOutput

from sandmle.harness.search_tree import STORE_KEY
from sandmle.harness.solvers import AGENT_ERROR_KEY
from sandmle.scaffolds.aide import aide
from sandmle.scaffolds.aira import aira_mcts
from sandmle.scaffolds.prompt_format import REVIEW_TOOL
from tests.scaffolds.conftest import LOOP_SCRIPT, ScriptedModel, good, reply

CRASH_SCRIPT = "import pandas as pd\npd.read_csv('/home/data/no_such_file.csv')\n"


def invalid_json_review() -> ModelOutput:
    output = ModelOutput.for_tool_call("mockllm/model", REVIEW_TOOL, {})
    output.message.tool_calls[0].parse_error = "Expecting value: line 1 column 1 (char 0)"
    return output


def test_every_kind_of_bad_output_gives_a_buggy_node_and_the_search_goes_on(pack_dir, run_eval):
    drafts = [
        "I would fit a gradient boosting model, but here is no code.",
        reply(LOOP_SCRIPT),
        reply(CRASH_SCRIPT),
        good(0.5),  # reviewed with invalid JSON
        good(0.6),  # reviewed without calling the tool
        good(0.7),
    ]
    reviews = [None, None, invalid_json_review(), ModelOutput.from_content("m", "Looks fine!")]
    model = ScriptedModel(replies={"draft": drafts}, reviews=reviews)
    solver = aide(steps=6, num_drafts=6, exec_timeout=10)
    log = run_eval(solver, model, pack_dir, tasks="plant-watering")
    [sample] = log.samples
    nodes = sample.store[STORE_KEY]
    assert [n["is_bug"] for n in nodes] == [True, True, True, True, True, False]
    assert "no python code block" in nodes[0]["summary"]
    assert "TimeoutError" in nodes[1]["output"] and nodes[1]["exec_time_s"] < 40
    assert "FileNotFoundError" in nodes[2]["output"]
    assert "not valid JSON" in nodes[3]["summary"] and "metric: 0.5" in nodes[3]["output"]
    assert f"did not call {REVIEW_TOOL}" in nodes[4]["summary"]
    assert nodes[5]["metric"] == 0.7
    assert sample.scores["medal_scorer"].value["valid_submission"] == 1.0


def test_a_search_where_every_node_is_buggy_still_ends_and_is_scored(pack_dir, run_eval):
    model = ScriptedModel(default="no code at all")
    log = run_eval(aira_mcts(steps=3, num_children=2), model, pack_dir, tasks="bike-rentals")
    [sample] = log.samples
    assert log.status == "success"
    nodes = sample.store[STORE_KEY]
    assert len(nodes) == 3 and all(n["is_bug"] for n in nodes)
    assert AGENT_ERROR_KEY not in sample.store
    assert sample.scores["medal_scorer"].value["valid_submission"] == 0.0
