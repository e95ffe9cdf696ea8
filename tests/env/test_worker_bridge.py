"""The worker's bridge model: a sample limit that falls while it waits for the policy's turn is
recorded (the clock ended the episode, not the agent), and a ``limit`` action ends the sample
as Inspect's token limit does."""

from __future__ import annotations

import threading

import anyio
import pytest
from inspect_ai.model import ChatMessageUser, GenerateConfig
from inspect_ai.util import LimitExceededError

from sandmle.env.protocol import ActionLine, TokenLimit
from sandmle.env.worker import BridgeAPI


class Held:
    """A channel whose client answers once ``answer`` is set (never, unless told)."""

    def __init__(self, answer: str | None = None) -> None:
        self.sent: list[str] = []
        self.answer, self.released = answer, threading.Event()
        if answer is not None:
            self.released.set()

    def send(self, line) -> None:
        self.sent.append(line.model_dump_json())

    def receive(self) -> str:
        self.released.wait(timeout=10)
        return self.answer or ""


def _generate(bridge: BridgeAPI) -> object:
    return bridge.generate([ChatMessageUser(content="go")], [], "auto", GenerateConfig())


def test_a_limit_while_waiting_for_the_policy_is_recorded() -> None:
    channel = Held()
    bridge = BridgeAPI("policy", channel=channel)  # type: ignore[arg-type]

    async def scenario() -> None:
        with anyio.move_on_after(0.2):  # Inspect's time limit is a cancel scope like this one
            await _generate(bridge)  # type: ignore[misc]

    anyio.run(scenario)
    channel.released.set()
    assert bridge.cut_waiting and len(channel.sent) == 1


def test_an_answered_turn_is_not_cut() -> None:
    channel = Held(ActionLine(text="done").model_dump_json())
    bridge = BridgeAPI("policy", channel=channel)  # type: ignore[arg-type]
    output = anyio.run(lambda: _generate(bridge))  # type: ignore[arg-type,return-value]
    assert not bridge.cut_waiting and output.completion == "done"  # type: ignore[attr-defined]


def test_a_limit_action_ends_the_sample_as_a_token_limit() -> None:
    limit = TokenLimit(value=4100, limit=4096, message="context spent")
    channel = Held(ActionLine(limit=limit).model_dump_json())
    bridge = BridgeAPI("policy", channel=channel)  # type: ignore[arg-type]
    with pytest.raises(LimitExceededError) as raised:
        anyio.run(lambda: _generate(bridge))  # type: ignore[arg-type,return-value]
    assert raised.value.type == "token" and raised.value.limit == 4096
    assert raised.value.message == "context spent"
