"""Malformed model output never crashes a scaffold: replies are repaired by retries, every
failure is recorded on its node with its kind, and the search goes on."""

import warnings

from inspect_ai.model import ModelOutput

from sandmle.harness.search_tree import STORE_KEY
from sandmle.harness.solvers import AGENT_ERROR_KEY
from sandmle.leaderboard.transcript import syntax_error_line
from sandmle.scaffolds.aide import aide
from sandmle.scaffolds.aira import aira_mcts
from sandmle.scaffolds.prompt_format import REVIEW_TOOL
from sandmle.scaffolds.search.responses import compiles, parse_proposal
from tests.scaffolds.conftest import GOOD_SCRIPT, LOOP_SCRIPT, ScriptedModel, good, reply

CRASH_SCRIPT = "import pandas as pd\npd.read_csv('/home/data/no_such_file.csv')\n"


def invalid_json_review() -> ModelOutput:
    output = ModelOutput.for_tool_call("mockllm/model", REVIEW_TOOL, {})
    output.message.tool_calls[0].parse_error = "Expecting value: line 1 column 1 (char 0)"
    return output


def test_every_kind_of_bad_output_is_retried_or_recorded_and_the_search_goes_on(pack_dir, run_eval):
    code = GOOD_SCRIPT.format(alpha=1.0, metric=0.7)
    drafts = [
        "I would fit a gradient boosting model, but here is no code.",  # retried...
        "",
        "Still no code.",  # ...3 tries: node 0 has no code
        code,  # node 1: unfenced code that compiles has no plan: AIDE asks again...
        code,
        code,  # ...and takes the third as it is (aideml aide/agent.py:167-172 @ 9643875)
        reply(LOOP_SCRIPT),  # node 2: killed for time
        reply(CRASH_SCRIPT),  # node 3: crashes
        good(0.5),  # node 4: three unusable reviews
        good(0.6),  # node 5: a review as JSON text, fields missing
        reply(GOOD_SCRIPT.format(alpha=1.0, metric=0.65).replace("validation metric:", "cv")),
        # node 6: no metric line, and the review reports a metric the run never printed
    ]
    reviews = [
        None,  # node 1: honest
        None,
        None,
        invalid_json_review(),
        ModelOutput.from_content("m", "Looks fine!"),
        invalid_json_review(),
        ModelOutput.from_content("m", 'Review: {"metric": 0.6, "summary": "ran"}'),
        ModelOutput.for_tool_call("m", REVIEW_TOOL, {"is_bug": False, "metric": 0.99}),
    ]
    model = ScriptedModel(replies={"draft": drafts}, reviews=reviews)
    solver = aide(steps=7, num_drafts=7, exec_timeout=10)
    log = run_eval(solver, model, pack_dir, tasks="plant-watering")
    [sample] = log.samples
    nodes = sample.store[STORE_KEY]
    kinds = [n["extra"]["failure"] for n in nodes]
    assert kinds == [
        "no_code",
        None,
        "run_timeout",
        "run_error",
        "review_failed",
        None,
        "metric_unverified",
    ]
    assert len(nodes[0]["extra"]["calls"]) == 3 and nodes[0]["extra"]["prompt_hash"]
    assert nodes[1]["metric"] == 0.7 and nodes[1]["plan"] == ""
    assert [c["error"] for c in nodes[1]["extra"]["calls"] if c["purpose"] == "code"] == [
        "the reply had no plan",
        "the reply had no plan",
        None,
    ]
    assert set(model.roles) == {"system"}  # every prompt is the system message
    assert "TimeoutError" in nodes[2]["output"] and nodes[2]["exec_time_s"] < 40
    assert "FileNotFoundError" in nodes[3]["output"]
    assert "not valid JSON" in nodes[4]["summary"] and len(nodes[4]["extra"]["calls"]) == 4
    assert nodes[5]["metric"] == 0.6 and nodes[5]["extra"]["review_source"] == "text"
    assert set(nodes[5]["extra"]["review_filled"]) == {"is_bug", "lower_is_better"}
    assert "does not appear" in nodes[6]["summary"] and nodes[6]["metric"] is None
    assert all(n["extra"]["tokens"]["input"] > 0 for n in nodes)
    assert sample.scores["medal_scorer"].value["valid_submission"] == 1.0


def test_a_reply_cut_for_length_is_retried_with_less_memory(pack_dir, run_eval):
    model = ScriptedModel(cutoffs=1)
    log = run_eval(aide(steps=2, num_drafts=2), model, pack_dir, tasks="plant-watering")
    [sample] = log.samples
    first = sample.store[STORE_KEY][0]
    assert [c["stop_reason"] for c in first["extra"]["calls"] if c["purpose"] == "code"] == [
        "model_length",
        "stop",
    ]
    assert first["extra"]["failure"] is None


def test_a_search_where_every_node_is_buggy_hands_in_nothing_unless_asked(pack_dir, run_eval):
    model = ScriptedModel(default="no code at all")
    log = run_eval(aira_mcts(steps=3, num_children=2), model, pack_dir, tasks="bike-rentals")
    [sample] = log.samples
    assert log.status == "success"
    nodes = sample.store[STORE_KEY]
    assert len(nodes) == 3 and all(n["extra"]["failure"] == "no_code" for n in nodes)
    assert AGENT_ERROR_KEY not in sample.store
    assert sample.scores["medal_scorer"].value["valid_submission"] == 0.0


def test_submit_fallback_hands_in_the_latest_usable_submission(pack_dir, run_eval):
    model = ScriptedModel(default=good(0.8), reviews=[ModelOutput.from_content("m", "?")] * 9)
    solver = aide(steps=1, num_drafts=1, submit_fallback=True, retries=1)
    log = run_eval(solver, model, pack_dir, tasks="bike-rentals")
    [sample] = log.samples
    [node] = sample.store[STORE_KEY]
    assert node["is_bug"] and node["extra"]["usable_submission"]
    assert sample.scores["medal_scorer"].value["valid_submission"] == 1.0


def test_a_provider_that_rejects_forced_tool_use_still_gets_reviews(pack_dir, run_eval):
    model = ScriptedModel(default=good(0.8), reject_forced_tools=True)
    log = run_eval(aide(steps=1, num_drafts=1), model, pack_dir, tasks="bike-rentals")
    [node] = log.samples[0].store[STORE_KEY]
    reviews = [c for c in node["extra"]["calls"] if c["purpose"] == "review"]
    assert "RuntimeError" in reviews[0]["error"] and reviews[1]["error"] is None
    assert node["extra"]["review_source"] == "text" and node["metric"] == 0.8


def test_a_garbled_reply_is_judged_without_syntax_warnings_on_the_hosts_stderr():
    """cpu-micro run 3 (2026-12-03): the tiny model's replies made compile() print "<node>:1:
    SyntaxWarning: invalid decimal literal" into the reproduce report's output."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert compiles("print(1if 1 else 2)")  # compiles, and warns when not silenced
        assert not compiles("x = 1a")
        assert parse_proposal("```python\nx = 1a\n```").problem.startswith(
            "the code does not compile (SyntaxError: invalid decimal literal"
        )
        assert syntax_error_line("ok = 1\nx = 1a") == 2
        assert syntax_error_line("print(1if 1 else 2)") is None
    assert [w for w in caught if issubclass(w.category, SyntaxWarning)] == []
