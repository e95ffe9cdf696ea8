"""``sandmle/dojo``: MLE-Dojo's action loop, driven by a scripted mockllm."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model

from sandmle.benchmarks.mle_dojo.dojo_solver import dojo
from sandmle.benchmarks.mle_dojo.task import mle_dojo

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")

COPY_SAMPLE = (
    "import shutil\n"
    "shutil.copy('/home/data/sample_submission.csv', '/home/submission/submission.csv')\n"
    "print('copied')\n"
)


def _scripted(calls: list[tuple[str, dict]]) -> list[ModelOutput]:
    outputs = [ModelOutput.for_tool_call("mockllm/model", name, args) for name, args in calls]
    outputs.append(ModelOutput.from_content("mockllm/model", "Done."))
    for output in outputs:  # without usage, Inspect counts tokens with tiktoken (a download)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return outputs


def _tool_results(messages: list) -> list[dict]:
    return [json.loads(str(m.text)) for m in messages if isinstance(m, ChatMessageTool)]


def test_dojo_loop_scores_and_reports_position(dojo_dir: Path, tmp_path: Path) -> None:
    calls = [
        ("request_info", {"info_type": "all"}),
        ("request_info", {"info_type": "bogus"}),
        ("execute_code", {"code": COPY_SAMPLE}),
        ("validate_code", {"code": "open('/home/submission/submission.csv', 'w').write('x')"}),
        ("validate_code", {"code": "def broken(:\n"}),
    ]
    model = get_model("mockllm/model", custom_outputs=_scripted(calls))
    log = inspect_eval(
        mle_dojo(data_dir=str(dojo_dir), competitions="spooky-author-identification"),
        model=model,
        solver=dojo(max_steps=10),
        log_dir=str(tmp_path / "logs"),
        display="none",
    )[0]
    assert log.status == "success", log.error
    assert log.samples is not None
    sample = log.samples[0]
    info, bogus, executed, validated, broken = _tool_results(sample.messages)
    assert info["data"]["data_path"] == "/home/data" and info["data"]["name"] == sample.id
    assert "sample_submission.csv" in info["data"]["data_structure"]
    assert bogus["status"] == "FAILED"
    assert executed["status"] == "SUCCESS" and "copied" in executed["execution"]["output"]
    assert executed["submission"]["position_score"] == 0.0
    assert validated["status"] == "SUCCESS"
    assert broken["error"] == "CodeSyntaxError"
    value = sample.scores["medal_scorer"].value
    assert isinstance(value, dict)
    # validate_code discarded its own file and restored the executed submission
    assert value["valid_submission"] == 1.0 and value["human_rank"] == 0.0
