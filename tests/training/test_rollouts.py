"""Episodes run through Inspect: the token record matches the conversation the scorer saw."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from sandmle.env.chat import chat_dicts, render, tool_schema
from sandmle.env.rewards import total_reward
from sandmle.specs.training import RewardSettings, RolloutSettings
from sandmle.training.policy_api import PolicySession
from sandmle.training.rollouts import run_episodes, trl_batch
from tests.training.conftest import SCRIPT, ScriptedGenerator, model_conversation


def spans(ids: list[int], mask: list[int], value: int) -> list[list[int]]:
    """Maximal runs of ``ids`` whose mask equals ``value``."""
    runs: list[list[int]] = []
    for token, m in zip(ids, mask, strict=True):
        if m != value:
            if runs and runs[-1]:
                runs.append([])
            continue
        if not runs:
            runs.append([])
        runs[-1].append(token)
    return [r for r in runs if r]


@pytest.fixture
def tokenizer(tiny_model: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model)


@pytest.fixture
def scripted_episode(tokenizer, pack_dir: Path, tmp_path: Path):
    generator = ScriptedGenerator(tokenizer, SCRIPT)
    session = PolicySession(generator, tokenizer, max_turn_tokens=256, max_episode_tokens=8192)
    settings = RolloutSettings(
        pack=str(pack_dir), max_turns=5, limits={"command_timeout": 30, "time_limit": 120}
    )
    (result,) = run_episodes(["plant-watering"], session, settings, tmp_path / "logs")
    (log_file,) = (tmp_path / "logs").glob("*.eval")
    return generator, result, read_eval_log(str(log_file), resolve_attachments=True).samples[0]


def test_policy_tokens_are_exactly_what_was_sampled(scripted_episode) -> None:
    generator, result, _ = scripted_episode
    episode = result.episode
    assert spans(episode.completion_ids, episode.env_mask, 1) == [generator.ids(t) for t in SCRIPT]
    assert [lp for lp, m in zip(episode.logprobs, episode.env_mask, strict=True) if m] == [
        -1.0
    ] * sum(episode.env_mask)
    assert episode.assistant_turns == SCRIPT


def test_environment_tokens_are_the_tool_outputs(scripted_episode, tokenizer) -> None:
    _, result, _ = scripted_episode
    env = [
        tokenizer.decode(s)
        for s in spans(result.episode.completion_ids, result.episode.env_mask, 0)
    ]
    assert len(env) == 2  # after the two bash calls; submit ends the episode
    assert env[0].startswith("\n<|im_start|>user\n<tool_response>\nSANDBOX-SAYS-HI")
    assert all(e.endswith("</tool_response><|im_end|>\n<|im_start|>assistant\n") for e in env)
    assert not any("<think>" in e for e in env)


def test_trained_sequence_is_the_conversation_the_scorer_saw(scripted_episode, tokenizer) -> None:
    _, result, sample = scripted_episode
    episode = result.episode
    messages, tools = model_conversation(sample)
    conversation = chat_dicts(messages)
    expected = render(tokenizer, conversation, [tool_schema(t) for t in tools], False)
    assert tokenizer.decode(episode.prompt_ids + episode.completion_ids) + "\n" == expected


def test_reward_comes_from_the_sandbox_grade(scripted_episode, tokenizer) -> None:
    _, result, sample = scripted_episode
    assert result.medal == sample.scores["medal_scorer"].value
    assert result.medal["valid_submission"] == 1.0  # the copied sample submission
    assert result.env_steps == 3
    batch = trl_batch([result], tokenizer)
    reward = total_reward(
        RewardSettings(), ["…"], medal=batch["medal"], assistant_turns=batch["assistant_turns"]
    )
    tier = 0.1 if result.medal["above_median"] else 0.0
    assert reward == [pytest.approx(0.2 + tier + 0.1)]


def test_episodes_run_in_the_evaluation_react_scaffold(scripted_episode) -> None:
    from sandmle.scaffolds.react import INSTRUCTIONS, SUBMIT_DESCRIPTION

    _, _, sample = scripted_episode
    first = next(e for e in sample.events if e.event == "model")
    assert INSTRUCTIONS in first.input[0].text  # react's prompt, not basic_agent's
    submit = next(t for t in first.tools if t.name == "submit")
    assert submit.description == SUBMIT_DESCRIPTION


def test_solver_and_its_arguments_come_from_the_settings(pack_dir: Path) -> None:
    from sandmle.env.task import episode_agent
    from sandmle.errors import SandmleError

    episode_agent(RolloutSettings(solver="sandmle/react", solver_args={"attempts": 2}))
    with pytest.raises(SandmleError, match="tree scaffold"):
        episode_agent(RolloutSettings(solver="aide"))
    with pytest.raises(SandmleError, match="unknown"):
        episode_agent(RolloutSettings(solver="basic"))
    with pytest.raises(SandmleError, match="takes no max_steps"):
        episode_agent(RolloutSettings(solver_args={"max_steps": 3}))


def test_a_text_only_turn_gets_reacts_continue_message(tokenizer, pack_dir, tmp_path) -> None:
    from sandmle.scaffolds.react import CONTINUE_PROMPT
    from tests.training.conftest import SUBMIT

    generator = ScriptedGenerator(tokenizer, ["<think>hm</think>I will look.", *SCRIPT[1:]])
    session = PolicySession(generator, tokenizer, max_turn_tokens=256, max_episode_tokens=8192)
    settings = RolloutSettings(
        pack=str(pack_dir), max_turns=5, limits={"command_timeout": 30, "time_limit": 120}
    )
    (result,) = run_episodes(["plant-watering"], session, settings, tmp_path / "logs")
    assert result.error is None and result.episode.assistant_turns[-1] == SUBMIT
    env = tokenizer.decode(spans(result.episode.completion_ids, result.episode.env_mask, 0)[0])
    assert CONTINUE_PROMPT in env
