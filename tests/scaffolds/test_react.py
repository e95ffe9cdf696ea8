"""The ReAct scaffold finishes offline with a scripted model and hands in a valid submission."""

from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.scaffolds.react import react
from tests.scaffolds.conftest import GOOD_SCRIPT


def scripted(*outputs: ModelOutput) -> list[ModelOutput]:
    for output in outputs:  # usage given, so mockllm does not count tokens with tiktoken
        output.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
    return list(outputs)


def test_react_writes_validates_and_submits(pack_dir, tmp_path):
    code = GOOD_SCRIPT.format(alpha=1.0, metric=0.8)
    outputs = scripted(
        ModelOutput.for_tool_call("m", "python", {"code": code}),
        ModelOutput.for_tool_call("m", "validate_submission", {}),
        ModelOutput.for_tool_call("m", "submit", {"answer": "ridge on all features"}),
    )
    [log] = inspect_eval(
        synthetic(pack=str(pack_dir), tasks="bike-rentals"),
        model=get_model("mockllm/model", custom_outputs=outputs),
        solver=react(),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    [sample] = log.samples
    assert log.status == "success"
    tool_results = [m.text for m in sample.messages if m.role == "tool"]
    assert any("Submission is valid" in t for t in tool_results)
    assert sample.scores["medal_scorer"].value["valid_submission"] == 1.0
    # the call that ended the run stays in the log: SFT data built from it teaches `submit`
    last = [m for m in sample.messages if m.role == "assistant"][-1]
    assert [c.function for c in last.tool_calls or []] == ["submit"]
