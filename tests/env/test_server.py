"""``sandmle env serve`` under real clients: OpenEnv's own client runs whole episodes; a killed
client, a killed server, a wrong token and a flood of malformed requests end nothing else."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import copy_pack
from tests.env.serving import Server, health, start_server

pytest.importorskip("openenv.core", reason="needs the env extra: pip install -e '.[env]'")
from websockets.exceptions import InvalidStatus  # noqa: E402 - openenv brings websockets
from websockets.sync.client import connect  # noqa: E402

CLIENT = Path(__file__).with_name("outside_client.py")
FREED_S = 30


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("env-server")
    copy_pack(root / "pack")
    running = start_server(root)
    yield running
    running.stop()


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _in_session(sid: int) -> list[int]:
    """Live processes of session ``sid`` (a worker and the sandboxes it started)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            fields = (proc / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if proc.name.isdigit() and fields[3] == str(sid) and fields[0] != "Z":
            found.append(int(proc.name))
    return found


def _wait_freed(pids: list[int], timeout_s: float = FREED_S) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if not any(_alive(p) for p in pids):
            return time.monotonic() - start
        time.sleep(0.2)
    raise AssertionError(f"workers {[p for p in pids if _alive(p)]} alive after {timeout_s} s")


def _left(workdirs: list[Path]) -> list[str]:
    """What is left of episode folders: the folders, and mounts (sandbox quotas) inside."""
    mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    inside = [m for m in mounts if any(m.startswith(f"{w}/") for w in workdirs)]
    return [str(w) for w in workdirs if w.exists()] + inside


def _hold(server: Server) -> tuple[subprocess.Popen, list[int]]:
    """A client process with one episode running; the episode's worker pids."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    client = subprocess.Popen(
        [sys.executable, str(CLIENT), "hold", server.url],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert client.stdout is not None and client.stdout.readline().strip() == "ready"
    pids = server.recorded_pids()
    assert pids and all(_alive(p) for p in pids)
    return client, pids


def test_an_outside_client_runs_four_complete_episodes(server: Server) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # no sandmle on its path
    proc = subprocess.run(
        [sys.executable, str(CLIENT), server.url, "4", "2"],
        capture_output=True, text=True, timeout=1800, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    episodes = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(episodes) == 4 and len({e["episode"] for e in episodes}) == 4
    assert {e["task"] for e in episodes} == {"plant-watering", "bike-rentals"}
    for e in episodes:
        assert e["done"] and e["error"] is None and e["steps"] == 3, e
        assert e["components"]["valid_reward"] == 1.0 and e["reward"] == pytest.approx(0.2), e
    assert not server.recorded_pids()  # every finished episode freed its worker


def test_a_killed_client_frees_its_sandbox_within_30_s(server: Server) -> None:
    client, pids = _hold(server)
    workdirs = server.recorded_workdirs()
    client.kill()
    client.wait()
    taken = _wait_freed(pids)
    assert not _in_session(pids[0])  # the sandbox (bwrap, started by the worker) is gone too
    # the worker dies first; its folder, mounts and record go right after: the same 30 s
    deadline = time.monotonic() + FREED_S - taken
    while (server.recorded_pids() or _left(workdirs)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not server.recorded_pids()
    assert not _left(workdirs)


MALFORMED = [
    "not json",
    json.dumps({"type": "bogus"}),
    json.dumps({"type": "step", "data": {"text": "nothing is running"}}),
    json.dumps({"type": "reset", "data": {"task": "no-such-task"}}),
    json.dumps({"type": "reset", "data": {"episode_id": "../../escape"}}),
    json.dumps({"type": "reset", "data": {"index": 99}}),
    json.dumps({"type": "reset", "data": {"bogus": 1}}),
    json.dumps({"type": "step", "data": {"text": 5}}),
    json.dumps({"type": "step", "data": {"text": "x" * 1_100_000}}),
    json.dumps({"type": "step", "data": {"message": {"tool_calls": "nonsense"}}}),
]


def test_malformed_requests_end_neither_the_server_nor_other_episodes(server: Server) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    good = subprocess.Popen(
        [sys.executable, str(CLIENT), server.url, "1", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    answers = []
    ws_url = server.url.replace("http", "ws") + "/ws"
    with connect(ws_url, max_size=None) as ws:
        for i in range(200):
            ws.send(MALFORMED[i % len(MALFORMED)])
            answers.append(json.loads(ws.recv(timeout=120)))
    assert all(a["type"] == "error" for a in answers), [a for a in answers if a["type"] != "error"]
    messages = {a["data"]["message"] for a in answers}
    assert "unknown task 'no-such-task': this server has bike-rentals, plant-watering" in messages
    assert "action of 1100012 bytes: the limit is 1000000" in messages
    out, err = good.communicate(timeout=1800)
    assert good.returncode == 0, err[-3000:]
    (episode,) = [json.loads(line) for line in out.splitlines()]
    assert episode["done"] and episode["error"] is None and episode["reward"] == pytest.approx(0.2)
    assert health(server) == 200


def test_a_token_server_refuses_others_and_a_killed_one_is_reaped_on_restart(
    tmp_path: Path,
) -> None:
    copy_pack(tmp_path / "pack")
    first = start_server(tmp_path, token="s3cret")
    try:
        assert health(Server(first.url, first.proc, tmp_path)) == 401  # no token
        with pytest.raises(InvalidStatus):
            connect(first.url.replace("http", "ws") + "/ws").close()
        first.token = "s3cret"
        client, pids = _hold_with_token(first)
        first.proc.send_signal(signal.SIGKILL)  # no cleanup: what a crash leaves
        first.proc.wait()
        client.kill()
        _wait_freed(pids)  # workers die with their server (parent-death signal)
        workdirs = first.recorded_workdirs()
        assert _left(workdirs), "a killed server leaves its sandboxes' folders and mounts"
        second = start_server(tmp_path, token="s3cret")
        try:
            assert not list(first.ledger.glob("*.json"))
            assert not _left(workdirs)
        finally:
            second.stop()
    finally:
        first.stop()


def _hold_with_token(server: Server) -> tuple[subprocess.Popen, list[int]]:
    """A client with the token (sandmle's own client) holding one episode."""
    code = (
        "import sys, time\n"
        "from sandmle.env.client import SandmleEnvClient\n"
        "env = SandmleEnvClient(sys.argv[1], token=sys.argv[2]).sync()\n"
        "env.connect(); env.reset(index=0)\n"
        "print('ready', flush=True); time.sleep(3600)\n"
    )
    client = subprocess.Popen(
        [sys.executable, "-c", code, server.url, str(server.token)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert client.stdout is not None and client.stdout.readline().strip() == "ready"
    pids = server.recorded_pids()
    assert pids and all(_alive(p) for p in pids)
    return client, pids


def test_skyrl_gym_runs_four_complete_episodes(server: Server) -> None:
    pytest.importorskip("skyrl_gym", reason="needs the env extra: pip install -e '.[env]'")
    proc = subprocess.run(
        [sys.executable, str(CLIENT.with_name("skyrl_client.py")), server.url, "4", "2"],
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    episodes = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(episodes) == 4
    for e in episodes:
        assert e["tools"] == ["bash", "python", "validate_submission", "submit"]
        assert e["roles"] == ["system", "user"]  # sandmle's first prompt, not the dataset row's
        assert e["done"] and e["error"] is None and e["reward"] == pytest.approx(0.2), e
        assert e["metrics"]["turns"] == 3 and e["components"]["valid_reward"] == 1.0


def test_the_server_log_holds_no_traceback(server: Server) -> None:
    """Run last in this module: every session above ended (normally, killed, malformed) and
    none of them made the server log an error."""
    log = "\n".join(p.read_text(errors="replace") for p in server.root.glob("server-*.log"))
    assert "Traceback" not in log and "Exception in ASGI application" not in log, log[-3000:]
