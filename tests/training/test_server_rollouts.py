"""GRPO's rollouts on ``sandmle env serve`` (``rollout.backend: server``): on a fixed policy the
same training tokens, grades and rewards as in-process, a token budget that falls mid-episode
included; a server that runs another episode spec or other tasks is refused."""

from __future__ import annotations

import asyncio
import math
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from sandmle.env.protocol import Observation
from sandmle.errors import SandmleError
from sandmle.specs.training import RolloutServer, RolloutSettings
from sandmle.training.policy_api import CUT_WHILE_GENERATING, EpisodeResult, PolicySession
from sandmle.training.remote import _episode
from sandmle.training.rollouts import run_episodes
from tests.conftest import copy_pack
from tests.training.conftest import SCRIPT, ScriptedGenerator, assert_same_rollouts

pytest.importorskip("openenv.core", reason="needs the env extra: pip install -e '.[env]'")
from tests.env.serving import Server, start_server  # noqa: E402

EPISODE = {"max_turns": 5, "limits": {"command_timeout": 30, "time_limit": 120}}
TASKS = ["plant-watering", "bike-rentals"]


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Server, Path]]:
    """A server started by the documented command on the tests' pack and this episode spec."""
    root = Path(tempfile.mkdtemp(prefix="rollout-env-"))
    copy_pack(root / "pack")
    config = root / "env.yaml"
    config.write_text(yaml.safe_dump({"episode": EPISODE}), encoding="utf-8")
    server = start_server(root, extra=("--config", str(config)))
    try:
        yield server, root / "pack"
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def tokenizer(tiny_model: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model)


def _settings(pack: Path, server: Server | None = None) -> RolloutSettings:
    settings = RolloutSettings.model_validate(
        {"pack": str(pack), "parallel_sandboxes": 2, **EPISODE}
    )
    if server is None:
        return settings
    return settings.model_copy(
        update={"backend": "server", "server": RolloutServer(url=server.url)}
    )


def _both(
    served: tuple[Server, Path], tokenizer: Any, tmp_path: Path, budget: int
) -> tuple[list[EpisodeResult], list[EpisodeResult]]:
    """The same episodes in-process and on the server, each with a fresh fixed-seed session."""
    server, pack = served
    results = []
    for settings in (_settings(pack), _settings(pack, server)):
        session = PolicySession(ScriptedGenerator(tokenizer, SCRIPT), tokenizer, 256, budget)
        results.append(run_episodes(TASKS, session, settings, tmp_path / settings.backend))
    return results[0], results[1]


def test_server_rollouts_give_the_in_process_tokens_and_rewards(served, tokenizer, tmp_path):
    local, remote = _both(served, tokenizer, tmp_path, budget=8192)
    assert_same_rollouts(local, remote, TASKS)
    # the script hands in the sample submission: valid, so the dense reward is not 0
    assert all(r.medal["valid_submission"] == 1.0 for r in remote)
    assert sum(r.episode.env_mask.count(1) for r in remote) > 0
    assert not list((tmp_path / "server").glob("**/*.eval"))  # the logs are the server's


def test_a_token_budget_mid_episode_ends_both_alike(served, tokenizer, tmp_path):
    """The budget cuts turn one short and refuses turn two: Inspect's token limit ends the
    sample, graded as it stands, in the trainer's process or in the server's worker."""
    server, pack = served
    probe = PolicySession(ScriptedGenerator(tokenizer, SCRIPT), tokenizer, 256, 8192)
    (first,) = run_episodes(TASKS[:1], probe, _settings(pack), tmp_path / "probe")
    budget = len(first.episode.prompt_ids) + 12
    local, remote = _both(served, tokenizer, tmp_path, budget)
    assert_same_rollouts(local, remote, TASKS)
    for result in remote:
        assert result.episode.truncated and len(result.episode.assistant_turns) == 1
        assert result.medal["valid_submission"] == 0.0  # nothing was handed in


def test_a_server_with_another_episode_spec_or_task_is_refused(served, tokenizer, tmp_path):
    server, pack = served
    session = PolicySession(ScriptedGenerator(tokenizer, SCRIPT), tokenizer, 256, 8192)
    longer = _settings(pack, server).model_copy(update={"max_turns": 6})
    with pytest.raises(SandmleError, match="max_turns 5 .rollout: 6"):
        run_episodes(TASKS, session, longer, tmp_path)
    other = tmp_path / "other-pack"
    shutil.copytree(pack, other)
    (other / TASKS[1] / "description.md").write_text("another task\n", encoding="utf-8")
    with pytest.raises(SandmleError, match=f"serves another task '{TASKS[1]}'"):
        run_episodes(TASKS, session, _settings(other, server), tmp_path)
    assert not session.episodes  # refused before any episode started


class ClockedOut:
    """A server whose episode's time limit fell while the policy generated its first turn."""

    name = "environment server"
    errors: tuple[type[BaseException], ...] = (OSError,)

    def __init__(self) -> None:
        self.actions: list[Any] = []

    async def reset(self, task: str) -> Observation:
        messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
        return Observation(messages=messages)

    async def step(self, action: Any) -> Observation:
        self.actions.append(action)
        grade = {"valid_submission": 0.0, "score": None}
        return Observation(done=True, reward=0.0, grade=grade, cut_waiting=True)

    async def close(self) -> None:
        return None


def test_an_episode_the_clock_ended_mid_turn_is_not_scored(tokenizer) -> None:
    """As in-process: the clock, not the agent, ended it, so it is an error (dropped or fatal
    as ``on_backend_error`` says), never a 0."""
    session = PolicySession(ScriptedGenerator(tokenizer, SCRIPT), tokenizer, 256, 8192)
    server = ClockedOut()
    result = asyncio.run(_episode(server, session, TASKS[0], 0))
    assert result.error == CUT_WHILE_GENERATING
    assert result.episode.cut_while_generating and len(server.actions) == 1
    assert math.isnan(result.medal["score"])
