"""``sandmle.env.trl`` against a real ``sandmle env serve``: the tools TRL renders from the class
are the server's, each tool call is a step of the server's episode, and TRL's own
``GRPOTrainer(environment_factory=...)`` trains on the server's episodes and rewards.

The server runs one example competition (plant-watering) in real sandboxes. The training
test's policy is the tiny model, warm-started to answer the task's first prompt (rendered as
TRL renders it) with one of two bash calls: copy the sample submission (a valid file: the
server's ``valid_reward`` 1) or list the data (no file: 0), about half and half. So a group's
rewards differ only when the server grades the sandboxes differently.
"""

from __future__ import annotations

import inspect
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from sandmle.env.trl import EpisodeOver, SandmleToolEnv, _check_tools, environment_factory
from sandmle.errors import SandmleError
from tests.conftest import FIXTURES
from tests.env.serving import start_server

TASK = "plant-watering"
STEPS = 4

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Path]]:
    """``sandmle env serve`` on a free port, as the docs run it: its URL and log folder."""
    root = Path(tempfile.mkdtemp(prefix="trl-env-"))
    shutil.copytree(FIXTURES / TASK, root / "pack" / TASK)
    running = start_server(root)
    try:
        yield running.url, root / "logs"
    finally:
        running.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def first_episode(server: tuple[str, Path]) -> tuple[str, list[dict[str, Any]], str]:
    """One reset's prompt, the tools the server offered with it, and the first prompt's
    system and user texts as the server sent them."""
    env = SandmleToolEnv(server[0])
    try:
        prompt = env.reset(task=TASK, prompt=[{"role": "user", "content": ""}])
        observation = env.observation
        # Ended by submitting: a killed episode leaves its sandbox's tmpfs mounted (sandmle.env).
        env.get_reward()
    finally:
        env._close()
    assert not observation.done, observation.error
    texts = "\n\n".join(m["content"] for m in observation.messages)
    assert [m["role"] for m in observation.messages] == ["system", "user"]
    return prompt, observation.tools, texts


def tool_methods(env: SandmleToolEnv) -> list[Callable[..., Any]]:
    """The methods TRL exposes as tools: the public functions but ``reset`` and ``get_reward``."""
    return [
        getattr(env, name)
        for name, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]


def test_tool_schemas_are_the_servers_and_reset_returns_its_prompt(first_episode) -> None:
    """The schemas transformers renders from the methods (TRL's tools) are the server's tools:
    names, descriptions, parameters and which are required."""
    pytest.importorskip("transformers", reason="needs the train extra: pip install -e '.[train]'")
    from transformers.utils import get_json_schema

    prompt, offered, texts = first_episode
    ours = {
        s["function"]["name"]: s["function"]
        for s in map(get_json_schema, tool_methods(SandmleToolEnv("http://unused")))
    }
    theirs = {t["function"]["name"]: t["function"] for t in offered}
    assert sorted(ours) == sorted(theirs) == ["bash", "python", "submit", "validate_submission"]
    for name, schema in theirs.items():
        assert ours[name]["description"] == schema["description"], name
        mine, server = ours[name]["parameters"], schema["parameters"]
        assert mine["properties"] == server["properties"], name
        assert mine.get("required", []) == server["required"], name
    assert prompt == texts
    assert "/home/data" in prompt and "validate_submission" in prompt


def test_tools_other_than_the_servers_are_refused(first_episode) -> None:
    """Reset's check: a server whose episodes offer other tools (another scaffold, a toolkit)
    is a one-line error, not a policy shown tools the episode lacks."""
    offered = first_episode[1]
    _check_tools(SandmleToolEnv, offered)  # the server's own tools pass
    fewer = [t for t in offered if t["function"]["name"] != "python"]
    with pytest.raises(SandmleError, match="offer the tools bash, submit, validate_submission;"):
        _check_tools(SandmleToolEnv, fewer)
    more = [*offered, {"type": "function", "function": {"name": "score", "parameters": {}}}]
    with pytest.raises(SandmleError, match="serve the react scaffold"):
        _check_tools(SandmleToolEnv, more)


def test_tool_calls_step_the_episode_and_get_reward_submits_it(server) -> None:
    env = environment_factory(server[0])()
    try:
        env.reset(task=TASK)
        listing = env.bash(command="ls /home/data")
        assert "sample_submission.csv" in listing.split(), listing
        assert "no submission file" in env.validate_submission()
        env.bash(command="cp /home/data/sample_submission.csv /home/submission/submission.csv")
        assert env.python(code="print(6 * 7)").strip() == "42"
        assert not env.observation.done
        reward = env.get_reward()  # the episode is open: get_reward submits it
        assert env.observation.done and reward == env.observation.reward
        assert env.observation.components["valid_reward"] == 1.0  # the copied file was graded
        assert reward is not None and reward > 0
        with pytest.raises(EpisodeOver):
            env.bash(command="ls")
        assert env.get_reward() == reward

        env.reset(task=TASK)  # the same connection, a fresh sandbox: nothing submitted yet
        assert "no submission file" in env.validate_submission()
        assert env.submit(answer="nothing") == "nothing"
        assert env.observation.done and env.observation.components["valid_reward"] == 0.0
        assert env.get_reward() == env.observation.reward < reward
    finally:
        env._close()


def warm_tiny_model(folder: Path, prompt: str) -> Path:
    """The tiny model, its vocabulary learned from the prompt as TRL renders it (Qwen2.5's chat
    template, which TRL parses tool calls of), warm-started to write a copying or a listing
    bash call after it, about half and half."""
    from transformers import AutoTokenizer
    from trl.chat_template_utils import qwen2_5_chat_template

    from sandmle.training.tiny import build_tiny_model, build_tokenizer, warm_start

    conversation = [{"role": "user", "content": prompt}]  # TRL appends reset's text to ""
    tools = tool_methods(SandmleToolEnv("http://unused"))

    def render(tokenizer: Any, tokenize: bool) -> Any:
        tokenizer.chat_template = qwen2_5_chat_template
        return tokenizer.apply_chat_template(
            conversation,
            tools=tools,
            add_generation_prompt=True,
            tokenize=tokenize,
            return_dict=False,
        )

    build_tiny_model(folder, corpus=[render(build_tokenizer(), False)], vocab_size=2048)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    ids = render(tokenizer, True)
    tokenizer.save_pretrained(folder)  # with Qwen2.5's template
    warm_start(folder, ids, share=0.5)
    return folder


@pytest.mark.slow  # ~15 min on 2 busy cores: the warm start (~4 min), 8 episodes, 4 steps
def test_trl_grpo_trains_on_the_servers_episodes(server, first_episode, tmp_path: Path) -> None:
    """TRL's own GRPOTrainer, the environment factory its only reward: every rollout is a real
    episode on the server (one Inspect log each), and some step's group has rewards that
    differ (the server graded one sandbox's copied file valid and another's missing file not)."""
    pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    url, logs = server
    model = warm_tiny_model(tmp_path / "model", first_episode[0])
    rows = {"prompt": [[{"role": "user", "content": ""}]] * STEPS, "task": [TASK] * STEPS}
    args = GRPOConfig(
        output_dir=str(tmp_path / "out"),
        max_steps=STEPS,
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=96,
        max_tool_calling_iterations=2,
        learning_rate=1e-3,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        seed=0,
    )
    tokenizer = AutoTokenizer.from_pretrained(model, padding_side="left")
    trainer = GRPOTrainer(
        model=str(model),
        args=args,
        train_dataset=Dataset.from_dict(rows),
        processing_class=tokenizer,
        environment_factory=environment_factory(url),
    )
    before = len(list(logs.glob("*.eval")))
    trainer.train()

    steps = [h for h in trainer.state.log_history if "reward_std" in h]
    print("per-step reward, std:", [(h["reward"], h["reward_std"]) for h in steps])
    assert len(steps) == STEPS
    assert any(h["reward_std"] > 0 for h in steps), steps
    assert all(h["tools/call_frequency"] > 0 for h in steps), steps  # calls reached the server
    assert len(list(logs.glob("*.eval"))) - before == 2 * STEPS  # one episode per rollout
