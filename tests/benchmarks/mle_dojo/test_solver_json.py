"""``sandmle/dojo``'s default loop: MLE-Dojo's agent, actions as JSON text (MLE-Dojo/MLE-Dojo
@ 667a8fd, ``mledojo/agent/mleagent/agent.py``, ``main.py``), driven by a scripted mockllm."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from inspect_ai.log import EvalSample, resolve_sample_attachments
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser

from sandmle.benchmarks.mle_dojo.solver_json import END_KEY, Action, parse_action
from sandmle.benchmarks.mle_dojo.tools import REWARDS_KEY
from tests.benchmarks.mle_dojo.test_solver import BREAK_SUBMISSION, COPY_SAMPLE, _run

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")


def _json(action: str, **params: str) -> str:
    return json.dumps({"action": action, "params": params})


def test_an_action_is_read_as_mle_dojos_agent_reads_it() -> None:
    """``_extract_and_parse_json`` and ``_validate_response_format`` (agent.py:161-213)."""
    fenced = 'Plan first.\n```json\n{"action": "execute_code", "params": {"code": "print(1)"}}\n```'
    assert parse_action(fenced) == Action("execute_code", {"code": "print(1)"})
    bare = _json("request_info", info_type="overview")
    assert parse_action(bare) == Action("request_info", {"info_type": "overview"})
    for bad in (
        "",  # empty
        "I will train a model.",  # prose
        _json("get_history"),  # an environment action, not the agent's (agent.py:190)
        _json("get_history", code="print(1)"),  # also with a param the agent's actions take
        json.dumps({"action": "execute_code", "params": {"code": "1"}, "why": "x"}),  # extra key
        _json("execute_code", script="1"),  # wrong param
        json.dumps({"action": "validate_code", "params": {"code": 1}}),  # code not a string
        '["execute_code"]',  # not an object
    ):
        with pytest.raises(ValueError):
            parse_action(bad)


def _users(sample: EvalSample) -> list[str]:
    return [m.text for m in sample.messages if isinstance(m, ChatMessageUser)]


def _model_inputs(sample: EvalSample) -> list[list[str]]:
    events = resolve_sample_attachments(sample).events
    return [[m.text for m in e.input] for e in events if e.event == "model"]


@needs_bwrap
def test_a_bad_reply_gets_three_fixes_outside_the_history_and_then_the_run_ends(
    dojo_dir: Path, tmp_path: Path
) -> None:
    """3 fix attempts, each a one-message conversation (agent.py:215-262); then ``act``
    returns "Error" and the runner stops (main.py:175-177)."""
    replies = ["I will train a model.", "still prose", "```json\n{bad}\n```", "no"]
    sample = _run(dojo_dir, tmp_path, [*replies, _json("execute_code", code=COPY_SAMPLE)])
    assert sample.store[END_KEY] == "parse"
    inputs = _model_inputs(sample)
    assert len(inputs) == 4 and all(len(i) == 1 for i in inputs[1:])  # the fixes stand alone
    assert "I will train a model." in inputs[1][0]  # the fix quotes the reply
    assert [m.text for m in sample.messages if isinstance(m, ChatMessageAssistant)] == replies[:1]
    assert sample.store.get(REWARDS_KEY) is None  # no action ran
    assert sample.scores["medal_scorer"].value["valid_submission"] == 0.0


@needs_bwrap
def test_a_fixed_reply_is_acted_on_and_the_budget_follows_each_result(
    dojo_dir: Path, tmp_path: Path
) -> None:
    """A fix that parses is the action (agent.py:243-251); every result is a user message with
    the actions and seconds left (prompt.py:69-92); validate_code deletes the submission and the
    best execute_code one is graded (env.py:384-388); a reward per execute_code (env.py:362-390)."""
    calls = [
        "prose first",
        _json("request_info", info_type="data_path"),  # the fix
        _json("execute_code", code=COPY_SAMPLE),
        _json("validate_code", code=COPY_SAMPLE),
        _json("execute_code", code=BREAK_SUBMISSION),
        _json("validate_code", code="def broken(:\n"),
    ]
    sample = _run(dojo_dir, tmp_path, calls, max_steps=5)
    assert sample.store[END_KEY] == "steps"
    users = _users(sample)
    assert '"action": "execute_code"' in users[0] and "5 actions" in users[0]
    results = users[1:]
    assert len(results) == 5 and '"data": {"data_path": "/home/data"}' in results[0]
    assert all(
        f"You still have {n} actions available." in r
        for n, r in zip((4, 3, 2, 1, 0), results, strict=True)
    )
    assert all("seconds left." in r for r in results)
    assert results[3].startswith("Your last action failed:")  # the broken submission
    assert results[4].startswith("Your last action failed:") and "CodeSyntaxError" in results[4]
    rewards = sample.store[REWARDS_KEY]
    # the sample submission's position score on spooky is 0 (as test_solver shows), not its
    # raw log-loss; the broken submission's reward is 0
    assert rewards == [0.0, 0.0]
    value = sample.scores["medal_scorer"].value
    assert value["valid_submission"] == 1.0  # the first execute_code, not the broken last one
    configs = [e.config for e in sample.events if e.event == "model"]
    assert all(c.temperature == 0.0 and c.top_p == 1.0 for c in configs)
    assert all(not e.tools for e in sample.events if e.event == "model")  # text, not tools


@needs_bwrap
def test_the_run_takes_mle_dojos_ten_actions_by_default(dojo_dir: Path, tmp_path: Path) -> None:
    """``env.max_steps: 10`` (config.yaml:18): the runner's ``for i in range(max_steps)``."""
    sample = _run(dojo_dir, tmp_path, [_json("request_info", info_type="name")] * 12)
    assert sample.store[END_KEY] == "steps"
    assert len(_users(sample)) == 11  # the opening message and 10 results
    assert "You still have 0 actions available." in _users(sample)[-1]


@needs_bwrap
def test_validate_code_never_leaves_a_submission(dojo_dir: Path, tmp_path: Path) -> None:
    """``validate_code`` deletes any submission file (mledojo/gym/interface.py:301-306)."""
    sample = _run(dojo_dir, tmp_path, [_json("validate_code", code=COPY_SAMPLE)], max_steps=1)
    assert '"status": "SUCCESS"' in _users(sample)[1]
    assert sample.scores["medal_scorer"].value["valid_submission"] == 0.0
