"""The step-wise environment is the ``inspect eval`` sample: one fixed action list replayed
through both gives the same observations, grade and reward; and its bounds hold (deadline,
slots, bad actions) without a server in between."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import resolve_sample_attachments
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.env.chat import chat_dicts
from sandmle.env.environment import Busy, Environment, PackTasks, Slots
from sandmle.env.rewards import reward_functions
from sandmle.errors import SandmleError
from sandmle.scaffolds import react
from sandmle.specs.environment import EnvSettings
from sandmle.specs.episode import EpisodeSpec, message_limit
from sandmle.specs.training import RewardSettings

TASK = "plant-watering"
COPY = "cp /home/data/sample_submission.csv /home/submission/submission.csv && echo copied"
ACTIONS: list[tuple[str, dict[str, Any]]] = [
    ("bash", {"command": "ls /home/data && head -c 120 /home/data/train.csv"}),
    ("python", {"code": "print(sum(range(10)))"}),
    ("bash", {"command": COPY}),
    ("validate_submission", {}),
    ("submit", {"answer": "the sample submission"}),
]
TURNS = 8


def _settings(pack: Path, logs: Path, **extra: Any) -> EnvSettings:
    return EnvSettings(
        pack=str(pack), log_dir=str(logs), episode=EpisodeSpec(max_turns=TURNS), **extra
    )


def _inspect_eval(pack: Path, logs: Path) -> Any:
    """The actions as ``inspect eval sandmle/synthetic --solver sandmle/react`` runs them."""
    outputs = [ModelOutput.for_tool_call("mockllm/model", n, a) for n, a in ACTIONS]
    for output in outputs:  # usage given, so mockllm does not count tokens with tiktoken
        output.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
    (log,) = inspect_eval(
        synthetic(pack=str(pack), tasks=TASK, message_limit=message_limit(TURNS)),
        solver=react(),
        model=get_model("mockllm/model", custom_outputs=outputs),
        log_dir=str(logs),
        display="none",
    )
    assert log.status == "success", log.error
    return resolve_sample_attachments(log.samples[0])


def _reply(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The turn as an assistant chat dict, worded as mockllm words its tool calls."""
    call = {"type": "function", "function": {"name": name, "arguments": arguments}}
    return {"role": "assistant", "content": f"tool call for tool {name}", "tool_calls": [call]}


async def _replay(env: Environment) -> tuple[list[Any], dict[str, Any]]:
    """Reset, then one action per turn: every observation, and the final state."""
    observations = [await env.reset(task=TASK)]
    for name, arguments in ACTIONS:
        observations.append(await env.step({"message": _reply(name, arguments)}))
    return observations, env.state()


def test_a_fixed_action_list_replays_as_inspect_eval_runs_it(
    pack_dir: Path, tmp_path: Path
) -> None:
    sample = _inspect_eval(pack_dir, tmp_path / "eval")
    settings = _settings(pack_dir, tmp_path / "env")
    env = Environment(settings, PackTasks(settings), Slots(1, 0, 1))
    observations, state = asyncio.run(_replay(env))

    # before each turn the policy has seen exactly what Inspect's model saw before that call
    inputs = [chat_dicts(e.input) for e in sample.events if e.event == "model"]
    assert len(inputs) == len(ACTIONS)
    conversation = observations[0].messages
    for turn, (name, arguments) in enumerate(ACTIONS):
        assert conversation == inputs[turn], f"turn {turn}"
        conversation = [*conversation, _reply(name, arguments), *observations[turn + 1].messages]
    assert conversation == state["messages"] == chat_dicts(sample.messages)
    assert [t["function"]["name"] for t in observations[0].tools] == [
        "bash", "python", "validate_submission", "submit"
    ]  # fmt: skip
    assert observations[3].messages[0]["content"].strip() == "copied"

    # the same grade, and the training reward's components computed from it
    last = observations[-1]
    assert last.done and last.error is None and state["step_count"] == len(ACTIONS)
    medal = sample.scores["medal_scorer"].value
    assert last.grade == {k: None if math.isnan(v) else v for k, v in medal.items()}
    assert last.grade["valid_submission"] == 1.0
    funcs, _ = reward_functions(RewardSettings())
    turns = [[_reply(n, a)["content"] for n, a in ACTIONS]]
    expected = {f.__name__: f([""], medal=[medal], assistant_turns=turns)[0] for f in funcs}
    assert last.components == expected
    assert last.reward == pytest.approx(0.2)  # valid; a constant guess is below the median
    assert Path(last.log).is_file()


def _workers() -> list[int]:
    """Pids of running environment workers (their command line names the module)."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if b"sandmle.env.worker" in cmdline:
            pids.append(int(proc.name))
    return pids


def _episode_mounts() -> set[str]:
    """Mount points of episode workers' sandbox quotas (other jobs' included)."""
    lines = Path("/proc/self/mounts").read_text().splitlines()
    return {line.split()[1] for line in lines if "sandmle-env-" in line}


def test_an_episode_past_its_deadline_is_killed_with_its_sandbox(
    pack_dir: Path, tmp_path: Path
) -> None:
    before, mounted = set(_workers()), _episode_mounts()
    settings = _settings(pack_dir, tmp_path / "env", deadline_s=1.0)
    env = Environment(settings, PackTasks(settings), Slots(1, 0, 1))
    with pytest.raises(SandmleError, match=r"passed its deadline of 1 s \(worker killed\)"):
        asyncio.run(env.reset(task=TASK))  # a sandbox set up slower than the clock allows
    assert set(_workers()) <= before
    assert _episode_mounts() <= mounted  # no sandbox quota of this episode left mounted
    state = Path(settings.log_dir) / ".state" / "episodes"
    assert not list(state.glob("*.json"))  # nothing left for a restarted server to reap


def test_slots_bound_running_episodes_and_answer_busy() -> None:
    async def scenario() -> list[str]:
        slots = Slots(running=1, waiting=1, timeout_s=0.2)
        await slots.acquire()
        waiter = asyncio.create_task(slots.acquire())  # queued: the one waiting place
        await asyncio.sleep(0.01)
        out = []
        with pytest.raises(Busy) as full:
            await slots.acquire()
        out.append(str(full.value))
        with pytest.raises(Busy) as late:
            await waiter
        out.append(str(late.value))
        slots.release()
        await asyncio.wait_for(slots.acquire(), 1)  # a released slot is had at once
        return out

    full, late = asyncio.run(scenario())
    assert full == "server busy: 1 episodes running, 1 waiting"
    assert late == "server busy: no episode slot came free in 0.2 s (1 running)"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            {"task": "no-such-task"},
            "unknown task 'no-such-task': this server has bike-rentals, plant-watering",
        ),
        ({"index": 7}, "task index 7 out of range 0..1"),
        ({"episode_id": "../../etc"}, "episode_id '../../etc': use 1-64 of A-Z a-z 0-9 . _ -"),
    ],
)
def test_a_bad_reset_is_one_line_and_starts_nothing(
    pack_dir: Path, tmp_path: Path, call: dict, message: str
) -> None:
    settings = _settings(pack_dir, tmp_path / "env")
    env = Environment(settings, PackTasks(settings), Slots(1, 0, 1))
    with pytest.raises(SandmleError) as error:
        asyncio.run(env.reset(**call))
    assert str(error.value) == message
    assert env.process is None


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ({"text": "x" * 2_000_000}, "action of 2000012 bytes: the limit is 1000000"),
        (
            {"text": "a", "message": {}},
            "an action is one of message (a chat dict), text (raw output) or limit (the policy's context is spent)",
        ),
        (
            {},
            "an action is one of message (a chat dict), text (raw output) or limit (the policy's context is spent)",
        ),
        ({"text": "fine"}, "no running episode: reset first"),
    ],
)
def test_a_bad_action_is_one_line(
    pack_dir: Path, tmp_path: Path, action: dict, message: str
) -> None:
    settings = _settings(pack_dir, tmp_path / "env")
    env = Environment(settings, PackTasks(settings), Slots(1, 0, 1))
    with pytest.raises(SandmleError) as error:
        asyncio.run(env.step(action))
    assert str(error.value) == message


def test_an_idle_episode_is_closed_and_says_so(pack_dir: Path, tmp_path: Path) -> None:
    settings = _settings(pack_dir, tmp_path / "env", idle_timeout_s=1.0)
    env = Environment(settings, PackTasks(settings), Slots(1, 0, 1))

    async def scenario() -> str:
        await env.reset(task=TASK)
        pids = [env.process.proc.pid] if env.process and env.process.proc else []
        await asyncio.sleep(2.5)
        assert pids and env.process is None and not any(p in _workers() for p in pids)
        with pytest.raises(SandmleError) as error:
            await env.step({"text": "too late"})
        return str(error.value)

    assert asyncio.run(scenario()) == (
        "the episode was closed after 1 s without a step (idle_timeout_s): reset to start another"
    )
