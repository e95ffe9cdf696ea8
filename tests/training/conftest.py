"""Training fixtures: a tiny local model (built once), a two-task pack, a scripted policy."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from sandmle.env.rewards import total_reward
from sandmle.specs.training import RewardSettings

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
TASKS = ("plant-watering", "bike-rentals")


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random two-layer Qwen2 model with its tokenizer and chat template, as an HF folder."""
    pytest.importorskip("torch", reason="needs the train extra: pip install -e '.[train]'")
    pytest.importorskip("transformers", reason="needs the train extra: pip install -e '.[train]'")
    from sandmle.training.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("models") / "tiny")


def model_conversation(sample) -> tuple[list, list]:
    """What the model saw and wrote in its last call (the last model event's input and reply)
    with the tools offered: react rewrites the logged messages after ``submit`` (it drops the
    call), the model events keep the conversation as generated."""
    event = [e for e in sample.events if e.event == "model"][-1]
    return [*event.input, event.output.message], event.tools


class ScriptedGenerator:
    """A policy that samples fixed texts: turn n (counted from the context) gets ``turns[n]``."""

    def __init__(self, tokenizer, turns: list[str]):
        self.tokenizer, self.turns = tokenizer, turns

    def ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"] + [
            self.tokenizer.eos_token_id
        ]

    async def sample(
        self, context: list[int], max_new_tokens: int, key: str = ""
    ) -> tuple[list[int], list[float]]:
        turn = self.tokenizer.decode(context).count("<|im_start|>assistant") - 1
        ids = self.ids(self.turns[min(turn, len(self.turns) - 1)])[:max_new_tokens]
        return ids, [-1.0] * len(ids)


def bash_call(cmd: str, thought: str = "look") -> str:
    """A policy turn as the tiny template renders it: reasoning, then one bash call."""
    return f'<think>{thought}</think><tool_call>{{"name": "bash", "arguments": {{"command": "{cmd}"}}}}</tool_call>'


SUBMIT = (
    '<think>done</think><tool_call>{"name": "submit", "arguments": {"answer": "done"}}</tool_call>'
)
SCRIPT = [
    bash_call("echo SANDBOX-SAYS-HI"),
    bash_call("cp /home/data/sample_submission.csv /home/submission/submission.csv", "copy"),
    SUBMIT,
]


def _same_grade(a: dict[str, float], b: dict[str, float]) -> bool:
    return a.keys() == b.keys() and all(
        (math.isnan(a[k]) and math.isnan(b[k])) or a[k] == b[k] for k in a
    )


def assert_same_rollouts(local: list, remote: list, tasks: list[str]) -> None:
    """Two backends' results of the same episodes: the same tokens, grades and rewards."""
    for mine, theirs in zip(local, remote, strict=True):
        assert mine.error is None and theirs.error is None, (mine.error, theirs.error)
        for name in ("prompt_ids", "completion_ids", "env_mask", "logprobs", "assistant_turns"):
            assert getattr(mine.episode, name) == getattr(theirs.episode, name), name
        assert mine.episode.rerendered_at == theirs.episode.rerendered_at
        assert _same_grade(mine.medal, theirs.medal), (mine.medal, theirs.medal)
        assert mine.env_steps == theirs.env_steps
    for results in (local, remote):
        assert [r.task_id for r in results] == tasks
    extra = {
        "medal": [r.medal for r in local],
        "assistant_turns": [r.episode.assistant_turns for r in local],
    }
    theirs = {
        "medal": [r.medal for r in remote],
        "assistant_turns": [r.episode.assistant_turns for r in remote],
    }
    rewards = RewardSettings()
    assert total_reward(rewards, [""] * len(local), **extra) == total_reward(
        rewards, [""] * len(local), **theirs
    )


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch):
    """Pretend to run under ``n`` processes on bf16-capable GPUs (this machine has none)."""
    import transformers
    import transformers.training_args as training_args

    monkeypatch.setattr(training_args, "is_torch_bf16_gpu_available", lambda: True)

    def set_world(n: int) -> None:
        monkeypatch.setattr(transformers.TrainingArguments, "world_size", property(lambda _: n))

    return set_world
