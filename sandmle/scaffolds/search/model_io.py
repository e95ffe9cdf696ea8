"""Model calls of the tree scaffolds that survive real LLM output.

Every prompt is the system message, with no user message, as both references send it
(aideml ``query(system_message=prompt, user_message=None)``, ``aide/agent.py:157-160`` @
9643875; aira-dojo ``no_user_message=True``, ``core/solvers/operators/draft.py:67`` @ c795d86).
Operator calls retry (default 3 tries, as aideml's ``plan_and_code_query`` and aira-dojo's
``max_llm_call_retries``) with a repair message saying what was wrong; a reply cut for length
makes the next try use half the memory budget; a failed call is caught and retried; with
``require_plan`` (AIDE) a reply with code but no plan is asked again, the same prompt, as
aideml does, and taken as it is at the last try. Review calls accept a tool call or JSON text.
Every call leaves a ``CallRecord`` for the node.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    get_model,
)
from inspect_ai.tool import ToolChoice, ToolFunction
from inspect_ai.util import LimitExceededError

from sandmle.scaffolds.search.responses import (
    Proposal,
    Review,
    parse_proposal,
    parse_review,
    review_tool,
)

logger = logging.getLogger(__name__)

DEFAULT_RETRIES = 3
REPAIR_CODE = (
    "Your reply could not be used: {problem}. Reply again with a brief plan followed by ONE "
    "markdown code block (```python ... ```) holding the complete script, and nothing else."
)
REPAIR_REVIEW = (
    "Your review could not be used: {problem}. Call `submit_review`, or reply with only a JSON "
    'object such as {{"is_bug": false, "summary": "...", "metric": 0.5, "lower_is_better": false}}.'
)


REPLY_CHARS = 100_000
"""A refused reply is kept up to this many characters (a rambling one can be far longer)."""


@dataclass
class CallRecord:
    """One model call of a node: how it ended and what it cost."""

    purpose: str
    """``code`` or ``review``."""
    attempt: int
    prompt_hash: str
    """First 12 hex digits of the prompt's SHA-256 (to match calls across logs)."""
    stop_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    error: str | None = None
    """The exception of a failed call, or why the reply was refused."""
    reply: str | None = None
    """A refused code reply, verbatim up to ``REPLY_CHARS`` (the drill-down shows it)."""

    def dump(self) -> dict:
        return asdict(self)


def prompt_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


async def _generate(
    messages: list[ChatMessage],
    record: CallRecord,
    config: GenerateConfig,
    review: bool,
    forced: bool = True,
) -> ModelOutput | None:
    """One call; None when it raised (recorded), limits still end the sample.

    A review offers the review tool, forced unless ``forced`` is off (after a failed call:
    some providers reject forced tool use; the reply may then be JSON text).
    """
    try:
        if review:
            tool = review_tool()
            choice: ToolChoice = ToolFunction(tool.name) if forced else "auto"
            output = await get_model().generate(
                messages, tools=[tool], tool_choice=choice, config=config
            )
        else:
            output = await get_model().generate(messages, config=config)
    except LimitExceededError:
        raise
    except Exception as exc:  # noqa: BLE001 - a provider error must not end the search
        logger.warning("model call failed: %s", exc)
        record.error = f"{type(exc).__name__}: {str(exc)[:300]}"
        return None
    record.stop_reason = output.stop_reason
    if output.usage is not None:
        record.input_tokens = output.usage.input_tokens
        record.output_tokens = output.usage.output_tokens
    return output


@dataclass
class CodeResult:
    proposal: Proposal
    calls: list[CallRecord]
    failure: str | None
    """None, or ``model_error`` / ``model_length`` / ``no_code`` / ``syntax_error``."""
    memory_tokens: int
    """The memory budget after this call (halved on each length stop)."""


async def propose(
    build_prompt: Callable[[int], str],
    memory_tokens: int,
    config: GenerateConfig,
    retries: int = DEFAULT_RETRIES,
    require_plan: bool = False,
) -> CodeResult:
    """Ask for a plan and code until one compiles or ``retries`` tries are spent."""
    calls: list[CallRecord] = []
    proposal, failure = Proposal(plan="", code="", problem="no call was made"), "model_error"
    repair: list[ChatMessage] = []
    for attempt in range(1, max(retries, 1) + 1):
        prompt = build_prompt(memory_tokens)
        record = CallRecord("code", attempt, prompt_hash(prompt))
        calls.append(record)
        messages = [ChatMessageSystem(content=prompt), *repair]
        output = await _generate(messages, record, config, False)
        if output is None:
            failure, repair = "model_error", []
            continue
        proposal = parse_proposal(output.completion)
        if output.stop_reason == "model_length" and (attempt < retries or not proposal.code):
            # the code of a cut reply is incomplete even when it compiles
            record.error = "the reply was cut at the length limit"
            record.reply = output.completion[:REPLY_CHARS]
            failure, repair, memory_tokens = "model_length", [], memory_tokens // 2
            continue
        if proposal.code and require_plan and not proposal.plan and attempt < retries:
            record.error, record.reply = "the reply had no plan", output.completion[:REPLY_CHARS]
            failure, repair = "no_plan", []  # aideml asks the same prompt again
            continue
        if proposal.code:
            return CodeResult(proposal, calls, None, memory_tokens)
        record.error, record.reply = proposal.problem, output.completion[:REPLY_CHARS]
        failure = "syntax_error" if "compile" in proposal.problem else "no_code"
        repair = [
            ChatMessageAssistant(content=output.completion or "(empty reply)"),
            ChatMessageUser(content=REPAIR_CODE.format(problem=proposal.problem)),
        ]
    return CodeResult(proposal, calls, failure, memory_tokens)


async def review_run(
    prompt: str, config: GenerateConfig, retries: int = DEFAULT_RETRIES
) -> tuple[Review | None, str, list[CallRecord]]:
    """The review of a run (tool call or JSON text), or None, why, and the calls made."""
    calls: list[CallRecord] = []
    why = "no call was made"
    repair: list[ChatMessage] = []
    for attempt in range(1, max(retries, 1) + 1):
        record = CallRecord("review", attempt, prompt_hash(prompt))
        calls.append(record)
        forced = not (calls[:-1] and calls[-2].stop_reason is None)  # the last try raised
        messages = [ChatMessageSystem(content=prompt), *repair]
        output = await _generate(messages, record, config, True, forced)
        if output is None:
            why, repair = f"the review call failed ({record.error})", []
            continue
        review, why = parse_review(output)
        if review is not None:
            return review, "", calls
        record.error = why
        repair = [
            ChatMessageAssistant(content=output.completion or "(empty reply)"),
            ChatMessageUser(content=REPAIR_REVIEW.format(problem=why)),
        ]
    return None, why, calls
