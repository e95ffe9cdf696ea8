"""Reading model replies the way aideml and aira-dojo do, and checking what they claim.

Code: every fenced block that compiles, joined in order; with no fenced block, the whole reply
when it compiles (aideml ``aide/utils/response.py`` ``extract_code``; aira-dojo
``src/dojo/core/solvers/utils/response.py``). Reviews: the ``submit_review`` call, else a JSON
object written as text, with missing fields filled as aira-dojo's ``Greedy.parse_eval_result``
fills them. The metric a review reports is then checked against the run's output.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ModelOutput
from inspect_ai.tool import ToolInfo, ToolParam, ToolParams

from sandmle.harness.search_tree import compile_error
from sandmle.scaffolds.prompt_format import REVIEW_TOOL, parse_metric

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_JSON_OBJECT = re.compile(r"\{.*?\}", re.DOTALL)
NOT_CODE = ("bash", "sh", "shell", "console", "text", "json", "yaml", "markdown", "md", "csv")


@dataclass(frozen=True)
class Proposal:
    """What an operator reply amounts to."""

    plan: str
    """The text before the first code block (the model's idea, in its words)."""
    code: str
    """The script; empty when no code could be extracted."""
    problem: str = ""
    """Why no code was taken, for the repair message and the node ("" when code was found)."""


def compiles(code: str) -> bool:
    return compile_error(code) is None


def parse_proposal(text: str) -> Proposal:
    """Split a reply into its plan and its code (valid fenced blocks joined, else the whole reply).

    >>> parse_proposal("Fit a tree.\\n```python\\nprint(1)\\n```").code
    'print(1)'
    """
    text = text or ""
    blocks = [(m.group(1).lower(), m.group(2).strip(), m.start()) for m in _FENCE.finditer(text)]
    first = blocks[0][2] if blocks else len(text)
    blocks = [b for b in blocks if b[0] not in NOT_CODE and b[1]]
    if not blocks:
        if text.strip() and compiles(text):
            return Proposal(plan="", code=text.strip())
        problem = "the reply was empty" if not text.strip() else "the reply had no code block"
        return Proposal(plan=text.strip(), code="", problem=problem)
    plan = text[:first].strip()
    valid = [code for _, code, _ in blocks if compiles(code)]
    if not valid:
        error = _syntax_error(blocks[0][1])
        return Proposal(plan=plan, code="", problem=f"the code does not compile ({error})")
    return Proposal(plan=plan, code="\n\n".join(valid))


def _syntax_error(code: str) -> str:
    exc = compile_error(code)
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    return "no error" if exc is None else str(exc)


@dataclass(frozen=True)
class Review:
    """The analyze step's verdict on one run (the ``submit_review`` arguments, filled in)."""

    is_bug: bool
    summary: str = ""
    metric: float | None = None
    lower_is_better: bool | None = None
    filled: tuple[str, ...] = ()
    """Fields the reply left out (filled with aira-dojo's defaults)."""
    source: str = "tool"
    """``tool`` (a review call) or ``text`` (JSON written in the reply)."""


def review_tool() -> ToolInfo:
    """The schema of the review function offered to the analyze step."""
    return ToolInfo(
        name=REVIEW_TOOL,
        description="Submit a review evaluating the output of the training script.",
        parameters=ToolParams(
            properties={
                "is_bug": ToolParam(
                    type="boolean",
                    description="true if the output shows that the run failed or has a bug.",
                ),
                "summary": ToolParam(
                    type="string",
                    description="If there is a bug, propose a fix; else 2-3 sentences on the "
                    "empirical findings.",
                ),
                "metric": ToolParam(
                    type=["number", "null"],
                    description="The validation metric the run printed; null if none.",
                ),
                "lower_is_better": ToolParam(
                    type="boolean", description="true if a lower metric is better."
                ),
            },
            required=["is_bug", "summary", "metric", "lower_is_better"],
        ),
    )


def _json_objects(text: str) -> list[dict[str, Any]]:
    """JSON objects in a text (flat ones, as aideml's ``extract_jsons``), the whole text first."""
    candidates = [text.strip()] + _JSON_OBJECT.findall(text)
    if not text.rstrip().endswith("}"):
        candidates += _JSON_OBJECT.findall(text + "}")
    found = []
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def _arguments(output: ModelOutput) -> tuple[dict[str, Any] | None, str, str]:
    """The review's raw fields, where they came from, and why none were found."""
    for call in output.message.tool_calls or []:
        if call.function != REVIEW_TOOL:
            continue
        if call.parse_error:
            return None, "tool", f"{REVIEW_TOOL} arguments are not valid JSON: {call.parse_error}"
        if isinstance(call.arguments, dict) and call.arguments:
            return dict(call.arguments), "tool", ""
    review_keys = {"is_bug", "metric", "summary", "lower_is_better"}
    for obj in _json_objects(output.completion or ""):
        if review_keys & set(obj):
            return obj, "text", ""
    if output.message.tool_calls:
        return None, "tool", f"the reply did not call {REVIEW_TOOL} with any arguments"
    return None, "text", f"the reply neither called {REVIEW_TOOL} nor wrote a JSON review"


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def _as_metric(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def parse_review(output: ModelOutput) -> tuple[Review | None, str]:
    """The review in a reply (tool call or JSON text, missing fields filled), or None and why."""
    raw, source, why = _arguments(output)
    if raw is None:
        return None, why
    filled = tuple(k for k in ("is_bug", "summary", "metric", "lower_is_better") if k not in raw)
    metric = _as_metric(raw.get("metric"))
    is_bug = _as_bool(raw.get("is_bug"))
    if is_bug is None:  # aira-dojo: a missing verdict means "buggy unless a metric was given"
        is_bug = metric is None
    review = Review(
        is_bug=is_bug,
        summary=str(raw.get("summary") or ""),
        metric=metric,
        lower_is_better=_as_bool(raw.get("lower_is_better")),
        filled=filled,
        source=source,
    )
    return review, ""


def printed_metric(output: str, claimed: float | None) -> tuple[float | None, str]:
    """The metric to trust for a run, and why a claimed one was refused ("" if it was not).

    The script's own ``Validation metric:`` line wins; otherwise the review's number must
    appear among the numbers the run printed (at the precision printed).
    """
    line = parse_metric(output)
    if line is not None:
        return line, ""
    if claimed is None:
        return None, ""
    for token in _NUMBER.findall(output or ""):
        if _same_number(token, claimed):
            return claimed, ""
    return None, f"the review's metric {claimed:.6g} does not appear in the run's output"


def _same_number(token: str, claimed: float) -> bool:
    try:
        value = float(token)
    except ValueError:
        return False
    decimals = len(token.split(".", 1)[1]) if "." in token and "e" not in token.lower() else 6
    return math.isclose(value, claimed, rel_tol=1e-6, abs_tol=0.51 * 10 ** -max(decimals, 0))
