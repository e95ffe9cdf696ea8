"""Reading model replies: a plan plus one python block, and the analyze step's review call.

Malformed replies never raise: a reply with no code yields ``code=""`` (the node is then
buggy without running), and a missing or unparsable review yields ``None`` (buggy too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from inspect_ai.model import ModelOutput
from inspect_ai.tool import ToolInfo, ToolParam, ToolParams
from pydantic import BaseModel, ValidationError

from sandmle.scaffolds.prompt_format import REVIEW_TOOL

_FENCE = re.compile(r"```[ \t]*(\w*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


@dataclass(frozen=True)
class Proposal:
    """What an operator reply amounts to."""

    plan: str
    """The text outside the code block (the model's idea, in its words)."""
    code: str
    """The script; empty when the reply held no code block."""


def parse_proposal(text: str) -> Proposal:
    """Split a reply into its plan and its code (the first python block, else the longest block).

    >>> parse_proposal("Fit a tree.\\n```python\\nprint(1)\\n```").code
    'print(1)'
    """
    blocks = [(m.group(1).lower(), m.group(2), m.span()) for m in _FENCE.finditer(text)]
    if not blocks:
        return Proposal(plan=text.strip(), code="")
    python = [b for b in blocks if b[0] in ("python", "py")]
    lang, code, (start, end) = python[0] if python else max(blocks, key=lambda b: len(b[1]))
    plan = (text[:start] + text[end:]).strip()
    return Proposal(plan=plan, code=code.strip())


class Review(BaseModel):
    """The analyze step's verdict on one run (the ``submit_review`` arguments)."""

    is_bug: bool
    """The run failed or its output shows a bug."""
    summary: str = ""
    """A short account of what the run found."""
    metric: float | None = None
    """The validation metric the script printed, if any."""
    lower_is_better: bool | None = None
    """Direction of ``metric``."""


def review_tool() -> ToolInfo:
    """The schema of the review function the analyze step must call."""
    return ToolInfo(
        name=REVIEW_TOOL,
        description="Submit your review of the script's execution output.",
        parameters=ToolParams(
            properties={
                "is_bug": ToolParam(
                    type="boolean",
                    description="True if the run failed, raised an error, or has a bug.",
                ),
                "summary": ToolParam(
                    type="string", description="2-3 sentences on what the run found."
                ),
                "metric": ToolParam(
                    type=["number", "null"],
                    description="The validation metric printed by the run; null if none.",
                ),
                "lower_is_better": ToolParam(
                    type="boolean", description="True if a lower metric is better."
                ),
            },
            required=["is_bug", "summary", "metric", "lower_is_better"],
        ),
    )


def parse_review(output: ModelOutput) -> tuple[Review | None, str]:
    """The review in a reply, or None and why not."""
    calls = [c for c in output.message.tool_calls or [] if c.function == REVIEW_TOOL]
    if not calls:
        return None, f"the reply did not call {REVIEW_TOOL}"
    call = calls[0]
    if call.parse_error:
        return None, f"{REVIEW_TOOL} arguments are not valid JSON: {call.parse_error}"
    if not isinstance(call.arguments, dict):
        return None, f"{REVIEW_TOOL} arguments are not an object"
    try:
        return Review.model_validate(call.arguments), ""
    except ValidationError as exc:
        return None, f"{REVIEW_TOOL} arguments are invalid: {exc.errors()[0]['msg']}"
