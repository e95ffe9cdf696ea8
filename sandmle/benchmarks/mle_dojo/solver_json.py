"""MLE-Dojo's own agent loop: actions written as JSON text (``sandmle/dojo``'s default).

As MLE-Dojo's ``KaggleAgent`` and its runner (MLE-Dojo/MLE-Dojo @ 667a8fd):
- one user message opens the run, stating the actions and seconds available and the reply
  format (``mledojo/agent/mleagent/agent.py:82-94``); sandmle's task text follows it, where
  MLE-Dojo's agent would fetch the same text with ``request_info``;
- each reply is one JSON object ``{"action": ..., "params": {...}}``, in a ```json fence or
  bare, for exactly one of ``request_info`` (``info_type``), ``validate_code`` and
  ``execute_code`` (``code``) (``agent.py:161-213``; the environment's ``get_history`` and
  ``reset`` are not the agent's actions);
- a reply that does not parse is sent back on its own, with the error and the format, up to 3
  times (``agent.py:215-262``: a fresh one-message conversation each time, the fixes kept out
  of the history); when the third fails the run ends (``main.py:175-177``);
- each action's result comes back as a user message, an error wrapper when it failed, with
  the actions and seconds left (``prompt.py:69-92``, ``agent.py:143-153``);
- the run ends after ``max_steps`` actions (``config.yaml:18``: 10), at the time limit, or when
  the conversation reaches the prompt-token limit (``mleagent/config.yaml:7``: 50000 tokens,
  counted here as characters / 4, not with tiktoken);
- sampling at temperature 0.0, top-p 1.0 (``mleagent/config.yaml:13-14``).
The prompts are sandmle's words for the same facts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageUser, GenerateConfig, Model, get_model
from inspect_ai.solver import TaskState
from inspect_ai.tool import Tool
from inspect_ai.util import store

from sandmle.benchmarks.mle_dojo.tools import (
    INFO_TYPES,
    Budget,
    execute_code,
    request_info,
    sample_time_left,
    validate_code,
)

JSON_ACTIONS = ("request_info", "validate_code", "execute_code")
"""The agent's actions (``agent.py:190``)."""
AGENT_INFO_TYPES = INFO_TYPES[:5]
"""The info types its prompt names (``prompt.py:20``)."""
PARSE_FIXES = 3
"""``_fix_parse_error(max_attempts=3)`` (``agent.py:215``)."""
MAX_PROMPT_TOKENS = 50_000
"""``max_prompt_tokens`` (``mleagent/config.yaml:7``)."""
END_KEY = "sandmle:dojo_end"
"""Why the JSON loop ended: ``steps``, ``parse``, ``tokens`` or ``time``."""

FORMAT = """Reply with one JSON object and nothing else, one of:
{"action": "request_info", "params": {"info_type": "<info_type>"}}
{"action": "validate_code", "params": {"code": "<code>"}}
{"action": "execute_code", "params": {"code": "<code>"}}"""
INSTRUCTION = """You are competing in a Kaggle-style machine-learning competition in MLE-Dojo's \
environment. Aim for the best leaderboard position you can reach with real ML methods \
(a random or rule-free guess does not count) within your actions.

You have {steps} actions and {seconds} seconds in total, code runs included.

Actions (each returns feedback):
1. request_info: one piece of the competition's information; info_type is one of {info_types}.
2. validate_code: run (partial) code to debug or print something; you see whether it ran, its \
output or its error. It never produces a submission: any submission file is deleted.
3. execute_code: run complete code that writes the submission; you see the run, whether the \
submission is valid{feedback}.

Code rules: read the data from the data folder and never change it; write the submission to \
{submission} in the sample submission's format, one row per test item; print what you want \
to see; no plots; every program stands alone (no state carries over). The best valid \
execute_code submission is your result.

{format}"""
RESULT = """Result of your last action:
--- result ---
{observation}
--- end ---
{budget}
Keep improving your model, features or data handling.
{format}"""
FAILED = """Your last action failed:
--- error ---
{observation}
--- end ---
{budget}
{format}"""
FIX = """This reply could not be read as the JSON action asked for. Fix its format only: keep \
its content, and keep any code runnable as it is.
--- reply ---
{response}
--- end ---
--- error ---
{error}
--- end ---
{format}"""


@dataclass(frozen=True)
class Action:
    name: str
    params: dict[str, str]


def parse_action(text: str) -> Action:
    """The action of a reply, as ``agent.py:161-213`` reads it; ValueError says what is wrong."""
    start = text.find("```json")
    if start >= 0:
        end = text.find("```", start + 7)
        if end > start + 7:
            text = text[start + 7 : end]
    if not text.strip():
        raise ValueError("empty reply")
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc}") from exc
    if not isinstance(parsed, dict) or set(parsed) != {"action", "params"}:
        raise ValueError('the reply must be an object with exactly "action" and "params"')
    name, params = parsed["action"], parsed["params"]
    if name not in JSON_ACTIONS:
        raise ValueError(f"unknown action {name!r}: use one of {', '.join(JSON_ACTIONS)}")
    wanted = "info_type" if name == "request_info" else "code"
    if not isinstance(params, dict) or set(params) != {wanted}:
        raise ValueError(f'{name} takes exactly one param, "{wanted}"')
    if not isinstance(params[wanted], str):
        raise ValueError(f'"{wanted}" must be a string')
    return Action(name, {wanted: params[wanted]})


def instruction(steps: int, score_feedback: bool, submission: str) -> str:
    seconds = sample_time_left()
    return INSTRUCTION.format(
        steps=steps,
        seconds="unlimited" if seconds is None else int(seconds),
        info_types=", ".join(AGENT_INFO_TYPES),
        feedback=" and its raw and position scores" if score_feedback else " (no score is shown)",
        submission=submission,
        format=FORMAT,
    )


def _tokens(messages: list[ChatMessage]) -> int:
    return sum(len(m.text) for m in messages) // 4


async def read_action(model: Model, reply: str, config: GenerateConfig) -> Action | None:
    """The reply's action, else up to 3 fixes, each a one-message conversation; None: give up."""
    try:
        return parse_action(reply)
    except ValueError as exc:
        fix = FIX.format(response=reply, error=exc, format=FORMAT)
    for _ in range(PARSE_FIXES):
        output = await model.generate([ChatMessageUser(content=fix)], config=config)
        try:
            return parse_action(output.completion)
        except ValueError:
            continue
    return None


def feedback(result: str) -> str:
    record: dict[str, Any] = json.loads(result)
    budget = record.pop("budget", "")
    template = FAILED if record.get("status") == "FAILED" else RESULT
    return template.format(observation=json.dumps(record), budget=budget, format=FORMAT)


async def json_loop(
    state: TaskState,
    steps: int,
    timeout: int | None,
    score_feedback: bool,
    config: GenerateConfig,
    submission: str,
) -> TaskState:
    """Run MLE-Dojo's agent loop on ``state`` (see the module doc); a code run gets ``timeout``
    seconds (None: the task's ``command_timeout``)."""
    budget = Budget(steps)
    actions: dict[str, Tool] = {
        "request_info": request_info(budget),
        "validate_code": validate_code(timeout=timeout, budget=budget),
        "execute_code": execute_code(timeout=timeout, score_feedback=score_feedback, budget=budget),
    }
    task = "\n\n".join(m.text for m in state.messages if isinstance(m, ChatMessageUser))
    opening = instruction(steps, score_feedback, submission)
    state.messages = [ChatMessageUser(content=f"{opening}\n\n{task}" if task else opening)]
    model = get_model()
    store().set(END_KEY, "steps")
    for _ in range(steps):
        if _tokens(state.messages) >= MAX_PROMPT_TOKENS:
            store().set(END_KEY, "tokens")
            break
        state.output = await model.generate(state.messages, config=config)
        state.messages.append(state.output.message)
        action = await read_action(model, state.output.completion, config)
        if action is None:
            store().set(END_KEY, "parse")
            break
        result = await actions[action.name](**action.params)
        state.messages.append(ChatMessageUser(content=feedback(str(result))))
        left = sample_time_left()
        if left is not None and left <= 0:
            store().set(END_KEY, "time")
            break
    return state
