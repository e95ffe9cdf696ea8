"""Qwen3's real chat template (a fixture): the token record of an episode equals the
re-tokenised conversation, once the template is swapped for TRL's prefix-preserving one, and the
tokens it trains are exactly the ones the policy sampled."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from sandmle.env.chat import (
    chat_dicts,
    history_rewrites,
    inserted_opening,
    render,
    tool_schema,
    turn_opening,
    use_training_template,
)
from sandmle.errors import SandmleError
from sandmle.specs.training import RolloutSettings
from sandmle.training.policy_api import PolicySession
from sandmle.training.rollouts import run_episodes
from tests.training.conftest import ScriptedGenerator, model_conversation


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
    # a turn without any reasoning block: the template gives it an empty one
    "no-reasoning": [
        qwen3_turn("bash", {"command": "ls"}),
        qwen3_turn("bash", {"command": COPY}, thought=None),
        SUBMIT,
    ],
    # a turn the token cap cuts inside its reasoning: the environment closes the block
    "cut-reasoning": [
        qwen3_turn(None, thought="I weigh the data and the metric. " * 80),
        qwen3_turn("bash", {"command": COPY}),
        SUBMIT,
    ],
}
OPENING = "<think>\n\n</think>\n\n"
TURN_TOKENS = 256


@pytest.fixture
def qwen3_tokenizer(tiny_model: Path):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    tokenizer.chat_template = qwen3_template()
    return tokenizer


def episode(tokenizer, turns: list[str], pack: Path, logs: Path):
    session = PolicySession(ScriptedGenerator(tokenizer, turns), tokenizer, TURN_TOKENS, 8192)
    settings = RolloutSettings(
        pack=str(pack), max_turns=6, limits={"command_timeout": 30, "time_limit": 120}
    )
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
    messages, offered = model_conversation(sample)
    tools = [tool_schema(t) for t in offered]
    text = render(qwen3_tokenizer, chat_dicts(messages), tools, False)
    record = result.episode.prompt_ids + result.episode.completion_ids
    assert qwen3_tokenizer.decode(record) + "\n" == text
    assert qwen3_tokenizer(text, add_special_tokens=False)["input_ids"] == [
        *record,
        *qwen3_tokenizer("\n", add_special_tokens=False)["input_ids"],
    ]
    assert text.count("<|im_start|>assistant") == len(SCENARIOS[scenario])
    assert result.episode.rerendered_at is None


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_trained_tokens_are_the_sampled_ones_and_inserted_ones_are_masked(
    scenario: str, qwen3_tokenizer, pack_dir: Path, tmp_path: Path
) -> None:
    use_training_template(qwen3_tokenizer)
    turns = SCENARIOS[scenario]
    result, _ = episode(qwen3_tokenizer, turns, pack_dir, tmp_path / "logs")
    ep = result.episode
    sampled = ScriptedGenerator(qwen3_tokenizer, turns)
    trained = [t for t, m in zip(ep.completion_ids, ep.env_mask, strict=True) if m]
    assert trained == [i for turn in turns for i in sampled.ids(turn)[:TURN_TOKENS]]
    assert all(lp == (-1.0 if m else 0.0) for lp, m in zip(ep.logprobs, ep.env_mask, strict=True))
    inserted = [i for i, turn in enumerate(turns) if "<think>" not in turn]
    assert ep.inserted_openings == len(inserted)
    headers = _environment_before_turns(ep)
    assert len(headers) == len(turns)
    for i, environment in enumerate(headers):
        header = qwen3_tokenizer.decode(environment)  # the inserted block sits, masked, in it
        assert header.endswith(f"<|im_start|>assistant\n{OPENING if i in inserted else ''}")
    cut = [i for i, turn in enumerate(turns) if len(sampled.ids(turn)) > TURN_TOKENS]
    assert cut == ([0] if scenario == "cut-reasoning" else [])
    for i in cut:  # the environment closed the open block, then the turn
        assert qwen3_tokenizer.decode(headers[i + 1]).startswith("\n</think>\n\n<|im_end|>")


def _environment_before_turns(ep) -> list[list[int]]:
    """For each policy turn, the environment tokens right before it (the prompt included)."""
    before, env, policy = [], list(ep.prompt_ids), False
    for token, mask in zip(ep.completion_ids, ep.env_mask, strict=True):
        if mask and not policy:
            before.append(env)
            env = []
        if not mask:
            env.append(token)
        policy = bool(mask)
    return before


def test_qwen3_training_template_opens_every_turn_with_a_reasoning_block(
    qwen3_tokenizer, tiny_model: Path
) -> None:
    from transformers import AutoTokenizer

    use_training_template(qwen3_tokenizer)
    assert turn_opening(qwen3_tokenizer) == OPENING
    assert turn_opening(AutoTokenizer.from_pretrained(tiny_model)) == ""  # renders as written


def test_only_the_templates_own_opening_is_inserted() -> None:
    head, call = "<|im_start|>assistant\n", "<tool_call>x</tool_call><|im_end|>"
    assert inserted_opening(head, f"{head}{OPENING}{call}\n", call, OPENING) == OPENING
    assert inserted_opening(head, f"{head}{call}\n", call, OPENING) == ""  # as sampled
    as_json = call.replace("x", "{}")  # rewritten otherwise: no insertion makes it equal
    assert inserted_opening(head, f"{head}{OPENING}{as_json}\n", call, OPENING) == ""
    assert inserted_opening("<|im_start|>user\n", f"{head}{OPENING}{call}", call, OPENING) == ""


def test_a_turn_no_insertion_makes_equal_is_counted_loudly(
    qwen3_tokenizer, pack_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    use_training_template(qwen3_tokenizer)
    compact = f'<think>\nlook\n</think>\n\n<tool_call>\n{{"name":"bash","arguments":{{"command":"{COPY}"}}}}\n</tool_call>'
    turns = [qwen3_turn("bash", {"command": "ls"}), compact, SUBMIT]
    with caplog.at_level(logging.WARNING, logger="sandmle.training.policy_api"):
        result, sample = episode(qwen3_tokenizer, turns, pack_dir, tmp_path / "logs")
    # the template writes the call's JSON with spaces: the record keeps the sampled tokens
    assert result.episode.rerendered_at == 1 and result.episode.inserted_openings == 0
    assert "policy turn 1 renders differently" in caplog.text
    tools = [tool_schema(t) for t in next(e.tools for e in sample.events if e.event == "model")]
    text = render(qwen3_tokenizer, chat_dicts(sample.messages), tools, False)
    record = result.episode.prompt_ids + result.episode.completion_ids
    assert not text.startswith(qwen3_tokenizer.decode(record))
