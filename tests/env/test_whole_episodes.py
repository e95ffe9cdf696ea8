"""Whole episodes as a service (``POST /episodes``): a search scaffold runs its own loop against
the caller's OpenAI-compatible endpoint; the reply is every model call with its tokens, ids
and logprobs, the grade, the reward and its components, and the Inspect log's path. A caller
that hangs up frees its sandbox; a wrong scaffold or setting is one line, and nothing runs."""

from __future__ import annotations

import http.client
import json
import math
import shutil
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log

from sandmle.env.rewards import total_reward
from sandmle.specs.training import RewardSettings
from tests.conftest import copy_pack

pytest.importorskip("openenv.core", reason="needs the env extra: pip install -e '.[env]'")
from tests.env.openai_endpoint import Endpoint, serving  # noqa: E402
from tests.env.serving import Server, start_server  # noqa: E402
from tests.env.test_server import _alive  # noqa: E402

FREED_S = 30


@pytest.fixture(scope="module")
def setup() -> Iterator[tuple[Server, str, Endpoint]]:
    root = Path(tempfile.mkdtemp(prefix="whole-env-"))
    copy_pack(root / "pack")
    server = start_server(root)
    try:
        with serving() as (base_url, endpoint):
            yield server, base_url, endpoint
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


def post(server: Server, body: dict[str, Any], timeout: float = 600) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"{server.url}/episodes",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_search_scaffold_runs_whole_against_the_callers_endpoint(setup) -> None:
    server, base_url, endpoint = setup
    before = len(endpoint.requests)
    model = {"base_url": base_url, "name": "heuristic", "token_ids": True}
    status, reply = post(
        server,
        {
            "task": "plant-watering",
            "scaffold": "aide",
            "scaffold_args": {"steps": 2},
            "model": model,
        },
    )
    assert status == 200, reply
    assert reply["error"] is None and reply["scaffold"] == "aide"
    asked = endpoint.requests[before:]
    calls = reply["calls"]
    # every call the scaffold made reached the endpoint and comes back, with its tokens
    assert len(calls) == len(asked) >= 2
    for call, request in zip(calls, asked, strict=True):
        assert [m["content"] for m in call["messages"]] == [
            m["content"] for m in request["messages"]
        ]
        assert request["logprobs"] is True and request["return_tokens_as_token_ids"] is True
        assert len(call["token_ids"]) == len(call["logprobs"]) == len(call["tokens"]) > 0
        assert all(-0.8 <= lp <= -0.1 for lp in call["logprobs"])
    # graded on the host as inspect eval grades it; the reward is the training reward
    log = read_eval_log(reply["log"])
    (sample,) = log.samples or []
    value = sample.scores["medal_scorer"].value
    grade = {k: math.nan if v is None else v for k, v in reply["grade"].items()}
    assert grade.keys() == value.keys()
    assert all(
        grade[k] == value[k] or (math.isnan(grade[k]) and math.isnan(value[k])) for k in grade
    )
    assert grade["valid_submission"] == 1.0
    turns = [[c["reply"]["content"] for c in calls]]
    expected = total_reward(RewardSettings(), [""], medal=[grade], assistant_turns=turns)
    assert reply["reward"] == pytest.approx(expected[0])
    assert reply["components"]["valid_reward"] == 1.0  # unweighted, as the step-wise reply
    assert sum(1 for e in sample.events if e.event == "model") == len(calls)


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ({"scaffold": "nonesuch"}, "scaffold 'nonesuch': unknown"),
        ({"scaffold": "aide", "scaffold_args": {"bogus": 1}}, "aide takes no bogus"),
        ({"task": "no-such-task"}, "unknown task 'no-such-task'"),
        ({"model": {"base_url": "file:///etc/passwd", "name": "x"}}, None),
    ],
)
def test_a_wrong_request_is_one_line_and_runs_nothing(setup, body, why) -> None:
    server, base_url, endpoint = setup
    full = {"model": {"base_url": base_url, "name": "heuristic"}, **body}
    before = len(endpoint.requests)
    status, reply = post(server, full, timeout=60)
    assert status in (400, 422), reply
    if why is not None:
        assert status == 400 and why in reply["detail"] and "\n" not in reply["detail"]
    assert len(endpoint.requests) == before
    assert not server.recorded_pids()


def test_a_caller_that_hangs_up_frees_its_sandbox(setup) -> None:
    server, base_url, endpoint = setup
    before = len(endpoint.requests)
    body = {
        "task": "bike-rentals",
        "scaffold": "aide",
        "model": {"base_url": base_url, "name": "slow"},
    }
    host, port = server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=600)
    connection.request("POST", "/episodes", json.dumps(body), {"Content-Type": "application/json"})
    deadline = time.monotonic() + 120
    while len(endpoint.requests) == before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(endpoint.requests) > before, "the episode never called the endpoint"
    pids = server.recorded_pids()
    assert pids and all(_alive(p) for p in pids)
    connection.close()  # hang up mid-episode, the scaffold waiting on its model
    deadline = time.monotonic() + FREED_S
    while (server.recorded_pids() or any(_alive(p) for p in pids)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not server.recorded_pids() and not any(_alive(p) for p in pids)
