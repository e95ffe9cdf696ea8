"""Qwen3's real chat template (a fixture): the token record of an episode equals the
re-tokenised conversation, once the template is swapped for TRL's prefix-preserving one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from sandmle.errors import SandmleError
from sandmle.training.chat import (
    chat_dicts,
    history_rewrites,
    render,
    tool_schema,
    use_training_template,
)
from sandmle.training.policy_api import PolicySession
from sandmle.training.rollouts import RolloutSettings, run_episodes
from tests.training.conftest import ScriptedGenerator


def qwen3_template() -> str:
    """Qwen3's real chat template, as TRL ships it (read from the installed package, not copied)."""
    from trl.chat_template_utils import qwen3_chat_template

    return qwen3_chat_template


COPY = "cp /home/data/sample_submission.csv /home/submission/submission.csv"


def qwen3_turn(
    tool: str | None, arguments: dict | None = None, thought: str | None = "look"
) -> str:
    """A turn as Qwen3 writes it: reasoning block, then text or one tool call."""
    head = "" if thought is None else f"<think>\n{thought}\n</think>\n\n"
    if tool is None:
        return head + "I will copy the sample submission."
    call = json.dumps({"name": tool, "arguments": arguments})
    return f"{head}<tool_call>\n{call}\n</tool_call>"


SUBMIT = qwen3_turn("submit", {"answer": "done"}, "done")
SCENARIOS = {
    "tool-calls": [
        qwen3_turn("bash", {"command": "ls /home/data"}),
        qwen3_turn("bash", {"command": COPY}),
        SUBMIT,
    ],
    # a text-only turn: the agent answers with its continue message (a new user query)
    "continue-message": [
        qwen3_turn(None, thought="plan"),
        qwen3_turn("bash", {"command": COPY}),
        SUBMIT,
    ],
    # a turn with an empty reasoning block (Qwen3's answer when it skips thinking)
    "empty-reasoning": [qwen3_turn("bash", {"command": COPY}, thought=""), SUBMIT],
}


@pytest.fixture
def qwen3_tokenizer(tiny_model: Path):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    tokenizer.chat_template = qwen3_template()
    return tokenizer


def episode(tokenizer, turns: list[str], pack: Path, logs: Path):
    session = PolicySession(ScriptedGenerator(tokenizer, turns), tokenizer, 256, 8192)
    settings = RolloutSettings(pack=str(pack), max_turns=6, command_timeout=30, time_limit=120)
    (result,) = run_episodes(["plant-watering"], session, settings, logs)
    (log_file,) = logs.glob("*.eval")
    return result, read_eval_log(str(log_file), resolve_attachments=True).samples[0]


def test_qwen3_template_rewrites_history_until_swapped(qwen3_tokenizer) -> None:
    assert history_rewrites(qwen3_tokenizer)  # drops <think> from turns before the last query
    assert use_training_template(qwen3_tokenizer)
    assert history_rewrites(qwen3_tokenizer) == []
    assert not use_training_template(qwen3_tokenizer)  # already preserving: left as is


def test_an_unknown_template_that_rewrites_history_is_refused(qwen3_tokenizer) -> None:
    qwen3_tokenizer.chat_template = qwen3_template().replace("# Tools", "# Tools!")
    with pytest.raises(SandmleError, match="prefix-preserving"):
        use_training_template(qwen3_tokenizer)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_token_record_is_the_retokenised_conversation(
    scenario: str, qwen3_tokenizer, pack_dir: Path, tmp_path: Path
) -> None:
    use_training_template(qwen3_tokenizer)
    result, sample = episode(qwen3_tokenizer, SCENARIOS[scenario], pack_dir, tmp_path / "logs")
    assert result.error is None and result.medal["valid_submission"] == 1.0
    tools = [tool_schema(t) for t in next(e.tools for e in sample.events if e.event == "model")]
    last = max(i for i, m in enumerate(sample.messages) if m.role == "assistant")
    text = render(qwen3_tokenizer, chat_dicts(sample.messages[: last + 1]), tools, False)
    record = result.episode.prompt_ids + result.episode.completion_ids
    assert qwen3_tokenizer.decode(record) + "\n" == text
    assert qwen3_tokenizer(text, add_special_tokens=False)["input_ids"] == [
        *record,
        *qwen3_tokenizer("\n", add_special_tokens=False)["input_ids"],
    ]
    assert text.count("<|im_start|>assistant") == len(SCENARIOS[scenario])
    assert result.episode.rerendered_at is None


def test_a_turn_without_reasoning_is_counted_as_rerendered(
    qwen3_tokenizer, pack_dir: Path, tmp_path: Path
) -> None:
    use_training_template(qwen3_tokenizer)
    turns = [
        qwen3_turn("bash", {"command": "ls"}),
        qwen3_turn("bash", {"command": COPY}, None),
        SUBMIT,
    ]
    result, _ = episode(qwen3_tokenizer, turns, pack_dir, tmp_path / "logs")
    # the template gives turn 1 an empty <think> block the policy never sampled: recorded
    assert result.episode.rerendered_at == 1
