"""``sandmle/dojo``'s tool-call variants: MLE-Dojo's five actions on Inspect's react agent
(``variant=mle-dojo-tools`` and ``sandmle``), driven by a scripted mockllm. The default JSON-text
loop is in ``test_solver_json.py``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model

from sandmle.benchmarks.mle_dojo.solver import CONTINUE_PROMPT, dojo
from sandmle.benchmarks.mle_dojo.task import mle_dojo

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")

COPY_SAMPLE = (
    "import shutil\n"
    "shutil.copy('/home/data/sample_submission.csv', '/home/submission/submission.csv')\n"
    "print('copied')\n"
)


def _scripted(calls: list[tuple[str, dict] | str]) -> list[ModelOutput]:
    outputs = [
        ModelOutput.from_content("mockllm/model", c)
        if isinstance(c, str)
        else ModelOutput.for_tool_call("mockllm/model", c[0], c[1])
        for c in calls
    ]
    for output in outputs:  # without usage, Inspect counts tokens with tiktoken (a download)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return outputs


def _tool_results(messages: list) -> list[dict]:
    return [
        json.loads(str(m.text))
        for m in messages
        if isinstance(m, ChatMessageTool) and m.function != "submit"
    ]


def _run(dojo_dir: Path, tmp_path: Path, calls: list, **solver_args) -> EvalSample:
    model = get_model("mockllm/model", custom_outputs=_scripted(calls))
    log = inspect_eval(
        # grader=mle-bench: MLE-Dojo's own spooky metric cannot score any submission
        mle_dojo(
            data_dir=str(dojo_dir), competitions="spooky-author-identification", grader="mle-bench"
        ),
        model=model,
        solver=dojo(**solver_args),
        log_dir=str(tmp_path / "logs"),
        display="none",
    )[0]
    assert log.status == "success", log.error
    assert log.samples is not None
    return log.samples[0]


def test_dojo_takes_all_five_actions_and_hides_scores(dojo_dir: Path, tmp_path: Path) -> None:
    calls = [
        ("request_info", {"info_type": "all"}),
        ("request_info", {"info_type": "bogus"}),
        "I think I should look at the data first.",  # no action: a continue prompt follows
        ("execute_code", {"code": COPY_SAMPLE}),
        ("validate_code", {"code": "open('/home/submission/submission.csv', 'w').write('x')"}),
        ("validate_code", {"code": "def broken(:\n"}),
        ("get_history", {}),
        ("reset", {}),
        ("get_history", {}),
        ("submit", {"answer": "done"}),
    ]
    sample = _run(dojo_dir, tmp_path, calls, max_steps=20, variant="mle-dojo-tools")
    info, bogus, executed, validated, broken, history, reset, cleared = _tool_results(
        sample.messages
    )
    assert any(m.role == "user" and m.text == CONTINUE_PROMPT for m in sample.messages)
    assert info["data"]["data_path"] == "/home/data" and info["data"]["name"] == sample.id
    assert "sample_submission.csv" in info["data"]["data_structure"]
    assert bogus["status"] == "FAILED"
    assert executed["status"] == "SUCCESS" and "copied" in executed["execution"]["output"]
    assert executed["submission"] == {"status": "SUCCESS", "details": "Submission is valid"}
    assert validated["status"] == "SUCCESS"
    assert broken["error"] == "CodeSyntaxError"
    actions = [a["action"] for a in history["data"]["actions"]]
    assert actions == ["request_info", "execute_code", "validate_code", "validate_code"]
    assert "best_raw_score" not in history["data"]
    assert reset["status"] == "SUCCESS" and cleared["data"]["actions"] == []
    value = sample.scores["medal_scorer"].value
    assert isinstance(value, dict)
    # validate_code deleted the file; the best executed submission is what is graded
    assert value["valid_submission"] == 1.0 and value["human_rank"] == 0.0
    assert all("You still have" in r["budget"] for r in _tool_results(sample.messages))


BREAK_SUBMISSION = "open('/home/submission/submission.csv', 'w').write('x')\n"


@pytest.mark.parametrize("variant", ["mle-dojo-tools", "sandmle"])
def test_mle_dojo_grades_the_best_submission_and_the_sandmle_variant_the_last(
    dojo_dir: Path, tmp_path: Path, variant: str
) -> None:
    """MLE-Dojo keeps the best execute_code (mledojo/gym/env.py:384-388 @ 667a8fd), tells the
    actions and seconds left after each action (mleagent/prompt.py:75-76, 87-88), stops after
    its 10 actions (config.yaml:18) and samples at temperature 0 (mleagent/config.yaml:13)."""
    calls = [("execute_code", {"code": COPY_SAMPLE}), ("execute_code", {"code": BREAK_SUBMISSION})]
    calls += [("request_info", {"info_type": "name"})] * 12
    # the sandmle variant's 30 actions outlast the script: it ends by submitting (a script that
    # runs out is a failed model call, which errors the sample)
    calls += [("submit", {"answer": "done"})]
    sample = _run(dojo_dir, tmp_path, calls, variant=variant)
    results = _tool_results(sample.messages)
    value = sample.scores["medal_scorer"].value
    assert isinstance(value, dict)
    if variant == "mle-dojo-tools":
        assert len(results) == 10
        assert results[0]["budget"].startswith("You still have 9 actions available.")
        assert results[-1]["budget"].startswith("You still have 0 actions available.")
        assert "seconds left" in results[0]["budget"]
        assert value["valid_submission"] == 1.0  # the first, valid one
        configs = [e.config for e in sample.events if e.event == "model"]
        assert configs and all(c.temperature == 0.0 and c.top_p == 1.0 for c in configs)
    else:
        assert len(results) == 14 and all("budget" not in r for r in results)
        assert value["valid_submission"] == 0.0  # the last, broken one


def test_dojo_shows_scores_when_asked_and_stops_after_max_steps(dojo_dir, tmp_path) -> None:
    calls = [("execute_code", {"code": COPY_SAMPLE})] * 3 + [("get_history", {})]
    sample = _run(
        dojo_dir, tmp_path, calls, max_steps=2, score_feedback=True, variant="mle-dojo-tools"
    )
    results = _tool_results(sample.messages)
    assert len(results) == 2  # the third action was never taken
    assert results[0]["submission"]["position_score"] == 0.0
    assert "raw_score" in results[0]["submission"]
