"""Scripted models and a tiny pack for the scaffold tests."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.solver import Solver
from inspect_ai.tool import ToolChoice, ToolFunction, ToolInfo

from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.scaffolds.prompt_format import REVIEW_TOOL, operator_of, section

GOOD_SCRIPT = """\
import pandas as pd
from sklearn.linear_model import Ridge

train = pd.read_csv("/home/data/train.csv")
test = pd.read_csv("/home/data/test.csv")
sub = pd.read_csv("/home/data/sample_submission.csv")
target = [c for c in sub.columns if c != "id"][0]
features = [c for c in test.columns if c != "id"]
model = Ridge(alpha={alpha}).fit(train[features], train[target])
low, high = train[target].min(), train[target].max()
sub[target] = model.predict(test[features]).clip(low, high)
sub.to_csv("/home/submission/submission.csv", index=False)
print("validation metric: {metric}")
"""
BROKEN_SCRIPT = 'import pandas as pd\nraise ValueError("column soil_moisture not found")\n'
LOOP_SCRIPT = "import time\nwhile True:\n    time.sleep(0.1)\n"


def good(metric: float = 0.8, alpha: float = 1.0) -> str:
    """A reply with a plan and a working script that prints ``metric``."""
    code = GOOD_SCRIPT.format(alpha=alpha, metric=metric)
    return f"Fit a ridge model on all features.\n\n```python\n{code}```\n"


def reply(code: str, plan: str = "A plan.") -> str:
    return f"{plan}\n\n```python\n{code}```\n"


def honest_review(prompt: str) -> dict[str, Any]:
    """Review a run from its output as a careful model would."""
    output = section(prompt, "# Execution output") or ""
    found = re.search(r"validation metric: ([0-9.]+)", output)
    failed = "Error" in output or "exited with status" in output or "not a valid" in output
    return {
        "is_bug": failed or found is None,
        "summary": "The run failed." if failed else "The run finished.",
        "metric": None if failed or found is None else float(found.group(1)),
        "lower_is_better": False,
    }


class ScriptedModel:
    """A mockllm callable: operator prompts get replies from a script, reviews are honest.

    ``replies`` maps an operator to its replies in order (the last one repeats); a missing
    operator falls back to ``default``. ``reviews`` (when given) replaces the honest
    review for the first analyze calls, in order, with raw ``ModelOutput``s (None: honest);
    the first ``cutoffs`` operator replies stop at the length limit.
    """

    def __init__(
        self,
        replies: dict[str, Sequence[str]] | None = None,
        default: str | None = None,
        reviews: Sequence[ModelOutput | None] = (),
        cutoffs: int = 0,
        reject_forced_tools: bool = False,
    ) -> None:
        self.replies = {k: list(v) for k, v in (replies or {}).items()}
        self.default = default or good()
        self.reviews = list(reviews)
        self.cutoffs = cutoffs
        self.reject_forced_tools = reject_forced_tools
        """Fail forced tool choice as some providers do; then review in JSON text."""
        """Operator replies still to cut at the length limit (``model_length``)."""
        self.prompts: list[str] = []
        self.operators: list[str | None] = []
        self.roles: list[str] = []
        """The role each call's prompt came in (both references: system)."""

    def __call__(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        prompt = input[0].text  # a repair request follows the operator prompt
        operator = operator_of(prompt)
        self.prompts.append(prompt)
        self.operators.append(operator)
        self.roles.append(input[0].role)
        if operator == "analyze" and self.reject_forced_tools:
            if isinstance(tool_choice, ToolFunction):
                raise RuntimeError("forced tool choice is not supported by this provider")
            output = ModelOutput.from_content("mockllm/model", json.dumps(honest_review(prompt)))
        else:
            output = self._answer(operator, prompt)
        # usage given, so mockllm does not count tokens with tiktoken (a download)
        output.usage = ModelUsage(
            input_tokens=len(prompt) // 4, output_tokens=10, total_tokens=len(prompt) // 4 + 10
        )
        return output

    def _answer(self, operator: str | None, prompt: str) -> ModelOutput:
        if operator == "analyze":
            scripted = self.reviews.pop(0) if self.reviews else None
            if scripted is not None:
                return scripted
            return ModelOutput.for_tool_call("mockllm/model", REVIEW_TOOL, honest_review(prompt))
        if self.cutoffs > 0:
            self.cutoffs -= 1
            output = ModelOutput.from_content("mockllm/model", "Plan.\n```python\nimport pan")
            output.choices[0].stop_reason = "model_length"
            return output
        queue = self.replies.get(operator or "", [])
        text = (queue.pop(0) if len(queue) > 1 else queue[0]) if queue else self.default
        return ModelOutput.from_content("mockllm/model", text)

    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self)


RunEval = Callable[..., EvalLog]


@pytest.fixture
def run_eval(tmp_path: Path) -> RunEval:
    """Run a solver on a pack with a scripted model; returns the eval log."""

    def _run(
        solver: Solver, model: ScriptedModel, pack: Path, tasks: str | None = None, **task_args: Any
    ) -> EvalLog:
        [log] = inspect_eval(
            synthetic(pack=str(pack), tasks=tasks, **task_args),
            model=model.model(),
            solver=solver,
            display="none",
            log_dir=str(tmp_path / "logs"),
            max_samples=1,
        )
        return log

    return _run
