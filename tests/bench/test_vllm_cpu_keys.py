"""The vLLM CPU lane's key handling (bench/vllm_cpu/serve.sh), against a fake server that checks
keys as vLLM's OpenAI server does (tests/bench/fake_vllm_server.py): no vLLM needed.

Issue 53: a stage exported VLLM_API_KEY=none for its clients, the next server inherited it and
answered the lane's key-less probe with 401 until a 900 s timeout."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FAKE = Path(__file__).with_name("fake_vllm_server.py")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def lane(script: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in bash after sourcing the lane's serve functions; the server it starts
    (the fake) is stopped on exit, as the lane does."""
    port = free_port()
    prelude = (
        f"source {ROOT / 'bench' / 'vllm_cpu' / 'serve.sh'}\n"
        "trap stop_server EXIT\n"
        f"URL=http://127.0.0.1:{port}\n"
        f"FAKE=({sys.executable} {FAKE} --port {port})\n"
    )
    return subprocess.run(
        ["bash", "-c", prelude + script],
        env={**os.environ, "PORT": str(port), "PROBE_INTERVAL": "0.2", **env},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,  # the refusal must end the wait long before the lane's 900 s timeout
    )


def test_a_probe_without_the_servers_key_fails_fast_in_one_line(tmp_path: Path) -> None:
    done = lane(
        'launch_server fake secret-key "$PWD/fake.log" "${FAKE[@]}"\n'
        'wait_ready "$URL" "" 900 "$PWD/fake.log"\n'
        "echo unreachable\n",
        tmp_path,
    )
    assert done.returncode == 2, done
    assert "unreachable" not in done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: the server of fake at http://127.0.0.1:")
    assert "(401)" in lines[0] and "key '<none>'" in lines[0] and "'secret-key'" in lines[0]


def test_the_servers_own_key_is_accepted(tmp_path: Path) -> None:
    done = lane(
        'launch_server fake secret-key "$PWD/fake.log" "${FAKE[@]}"\n'
        'wait_ready "$URL" secret-key 60 "$PWD/fake.log"\n'
        'use_key "$SERVER_KEY"\n'
        'echo "ready $(probe_status "$URL" "$VLLM_API_KEY") $(probe_status "$URL" wrong)"\n',
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ready", "200", "401"]


@pytest.mark.parametrize("inherited", ["none", "sandmle-lane-of-an-earlier-server"])
def test_a_server_started_without_a_key_does_not_inherit_the_clients_key(
    tmp_path: Path, inherited: str
) -> None:
    """The issue's trap: VLLM_API_KEY exported for the clients of an earlier server."""
    done = lane(
        'launch_server fake "" "$PWD/fake.log" "${FAKE[@]}"\n'
        'wait_ready "$URL" "" 60 "$PWD/fake.log"\n'
        "echo ready\n",
        tmp_path,
        VLLM_API_KEY=inherited,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ready"]


def test_a_server_that_dies_is_one_line_not_a_wait(tmp_path: Path) -> None:
    done = lane(
        f'launch_server broken "" "$PWD/broken.log" {sys.executable} -c "raise SystemExit(3)"\n'
        'wait_ready "$URL" "" 900 "$PWD/broken.log"\n',
        tmp_path,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: the server of broken exited (see {tmp_path}/broken.log)"
    ]
