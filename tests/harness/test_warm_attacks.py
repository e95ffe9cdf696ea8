"""Attacks on the warm Python server from the runs it serves (real bwrap).

Runs and the server share a uid and a PID namespace; each test is one attack the issue
"Sandbox v3" (#30) found working on the warm server before, and what must hold now: the
server's log stays small on the host, its fds and memory stay out of reach, later runs get
true answers, and nothing a run leaves behind outlives it or keeps its exec open.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from sandmle.harness.sandbox import BwrapConfig
from sandmle.harness.sandbox._process import run_limited
from sandmle.harness.sandbox.warm import (
    LOG_NAME,
    MAX_LOG_BYTES,
    SOCKET_NAME,
    WARM_DIR,
    ServerLog,
    WarmPythonConfig,
)
from sandmle.sandbox_scripts.warm_server import request
from tests.harness.test_warm_python import LIMITS, Sample

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")

SERVER_PID = """
import os
def server_pid():
    monitor = os.getppid()
    with open(f"/proc/{monitor}/stat") as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[1])
"""


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sample]:
    base = tmp_path_factory.mktemp("attacks") / "sandboxes"
    warm = WarmPythonConfig(enabled=True, start="sample", cold_trivial=False)
    live = Sample(BwrapConfig(limits=LIMITS, base_dir=base, warm_python=warm))
    try:
        yield live
    finally:
        live.close()
    assert list(base.iterdir()) == []


def warm_run(sample: Sample, code: str, **kwargs: object) -> object:
    """Run `code` through the shim and check the server served it (not a cold run)."""
    before = sample.served()
    result = sample.exec(["python", "-c", code], **kwargs)
    assert sample.served() == before + 1, sample.log()
    return result


def test_a_request_flood_leaves_the_host_log_small(sample: Sample) -> None:
    """Hundreds of requests with a 1 MiB ``PYTHON...`` key each (every one a cold answer that
    quotes the key) grew the log by the key each time; now a line is cut and the log capped."""
    flood = f"""
import marshal, os, resource, socket
key = b"PYTHON" + b"X" * (1024 * 1024)
env = dict(os.environb)
env[key] = b"1"
limits = [resource.getrlimit(getattr(resource, n)) for n in {request.RLIMITS!r}]
body = marshal.dumps(([b"-c", b"pass"], os.getcwdb(), env, 0o22, limits, []))
payload = len(body).to_bytes(4, "big") + body
fds = b"".join(fd.to_bytes(4, "little") for fd in (0, 1, 2))
answers = set()
for _ in range(300):
    conn = socket.socket(socket.AF_UNIX)
    conn.connect("{WARM_DIR}/{SOCKET_NAME}")
    sent = conn.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
    conn.sendall(payload[sent:])
    answers.add(conn.recv(16)[:1])
    conn.close()
print(sorted(answers))
"""
    log = sample.sandbox.dirs.root / LOG_NAME
    size_before = log.stat().st_size
    result = warm_run(sample, flood, timeout=120)
    assert result.stdout == "[b'C']\n", result.stderr  # type: ignore[attr-defined]
    sample.log()  # waits until the log holds all the server wrote
    grown = log.stat().st_size - size_before
    assert 0 < grown < 300 * 1024  # the 300 MiB of keys never reached it
    assert log.read_text().splitlines()[-1].startswith("cold: environment PYTHONXXX")


def test_the_server_log_is_capped_on_the_host(tmp_path: Path) -> None:
    read_fd, write_fd = os.pipe()
    log = ServerLog(read_fd, tmp_path / LOG_NAME)
    copier = threading.Thread(target=log.copy)
    copier.start()
    line = b"cold: " + b"x" * 200 + b"\n"
    with open(write_fd, "wb") as pipe:
        for _ in range(3 * MAX_LOG_BYTES // len(line)):
            pipe.write(line)  # a writer past the cap is drained, never blocked
    copier.join(timeout=30)
    assert not copier.is_alive()
    text = (tmp_path / LOG_NAME).read_bytes()
    assert text.startswith(line)
    assert text.endswith(f"\n[log cut at {MAX_LOG_BYTES} bytes]\n".encode())
    assert len(text) < MAX_LOG_BYTES + 100


def test_a_run_cannot_reach_the_servers_fds_or_memory(sample: Sample) -> None:
    """pidfd_open + pidfd_getfd copied the server's listening socket and /proc/<server>/mem
    took a write; both must fail, so no run can answer (or forge) later runs."""
    probe = (
        SERVER_PID
        + """
import ctypes, json
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
server = server_pid()
found = {"cmdline": open(f"/proc/{server}/cmdline", "rb").read().split(b"\\0")[1].decode()}
for name, number, args in (("pidfd_open", 434, (server, 0)), ("pidfd_getfd", 438, (3, 3, 0))):
    ctypes.set_errno(0)
    found[name] = ctypes.get_errno() if libc.syscall(number, *args) == -1 else "succeeded"
for path, mode in (("mem", "r+b"), ("mem", "rb"), ("environ", "rb")):
    try:
        open(f"/proc/{server}/{path}", mode).close()
        found[path + " " + mode] = "opened"
    except OSError as error:
        found[path + " " + mode] = error.errno
try:
    found["fd"] = os.listdir(f"/proc/{server}/fd")
except OSError as error:
    found["fd"] = error.errno
PR_GET_DUMPABLE = 3
found["dumpable"] = libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)
print(json.dumps(found))
"""
    )
    result = warm_run(sample, probe)
    found = json.loads(result.stdout)  # type: ignore[attr-defined]
    assert found == {
        "cmdline": f"{WARM_DIR}/server.py",  # it is the server we aimed at
        "pidfd_open": 1,  # EPERM: the seccomp filter
        "pidfd_getfd": 1,
        "mem r+b": 13,  # EACCES: the server is not dumpable
        "mem rb": 13,
        "environ rb": 13,
        "fd": 13,
        "dumpable": 0,  # nor is the run
    }


def test_a_run_cannot_read_a_sibling_run(sample: Sample) -> None:
    """Two warm runs at once (one in the background): neither can open the other's memory."""
    write = sample.sandbox.write_file
    sample.loop.run_until_complete(
        write("bg.py", "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(60)\n")
    )
    peek = "p = open('/tmp/bg').read().split()[0]\ntry:\n    open(f'/proc/{p}/mem', 'rb')\n"
    peek += "    print('opened')\nexcept OSError as error:\n    print(error.errno)\n"
    sample.loop.run_until_complete(write("peek.py", peek))
    script = "python bg.py > /tmp/bg & while [ ! -s /tmp/bg ]; do sleep 0.05; done; "
    before = sample.served()
    result = sample.exec(["bash", "-c", script + "python peek.py; kill $!"])
    assert result.stdout == "13\n", result.stderr
    assert sample.served() == before + 2


def test_later_runs_get_true_answers_after_an_attack(sample: Sample) -> None:
    """The forged-server attack's targets: output, a script's output file, the exit status."""
    attack = (
        SERVER_PID
        + """
import ctypes, socket
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall(434, server_pid(), 0)  # denied: no pidfd, no stolen listener
try:
    socket.socket(socket.AF_UNIX).bind("/opt/sandmle-warm/sock")
except OSError as error:
    print(error.errno)
"""
    )
    assert warm_run(sample, attack).stdout == "98\n"  # type: ignore[attr-defined]  # EADDRINUSE
    assert warm_run(sample, "print(6 * 7)").stdout == "42\n"  # type: ignore[attr-defined]
    sample.exec(["bash", "-c", "echo 'print(\"from solution\")' > solution.py"])
    before = sample.served()
    out = sample.exec(["bash", "-c", "python solution.py > output.log; cat output.log"])
    assert (out.stdout, sample.served()) == ("from solution\n", before + 1)
    assert warm_run(sample, "import sys; sys.exit(3)").returncode == 3  # type: ignore[attr-defined]


KILL_MONITOR = """
import os, signal, subprocess
child = subprocess.Popen(["sleep", "120"])  # holds the exec's stdout and stderr
with open("/tmp/orphan", "w") as handle:
    handle.write(str(child.pid))
os.kill(os.getppid(), signal.SIGKILL)  # the run's monitor: its subreaper
child.wait()
"""


def test_an_orphan_dies_with_its_run_and_its_exec_returns(sample: Sample) -> None:
    """A run that kills its own monitor: its exec returns (not at its timeout, though a child
    still held its stdout), and its child, reparented to the server, dies."""
    before = sample.served()
    result = sample.exec(["python", "-c", KILL_MONITOR], timeout=60)  # no TimeoutError
    assert sample.served() == before + 1
    assert result.returncode == 1
    assert "ended without a status" in result.stderr
    orphan = sample.exec(["cat", "/tmp/orphan"]).stdout
    # In the server's PID namespace (a warm run's): poll until it is gone.
    check = (
        f"import os, time\nfor _ in range(200):\n    if not os.path.exists('/proc/{orphan}'): break\n"
        "    time.sleep(0.05)\nprint(os.path.exists('/proc/" + orphan + "'))"
    )
    assert warm_run(sample, check).stdout == "False\n"  # type: ignore[attr-defined]
    assert warm_run(sample, "print(6 * 7)").stdout == "42\n"  # type: ignore[attr-defined]


def test_an_escaped_stdout_holder_does_not_hold_the_exec(tmp_path: Path) -> None:
    """Output reading ends a grace after the exec's processes are gone, not at EOF: a process
    outside the exec's group (here: setsid) keeps the pipes open for 120 s."""
    fake_bwrap = tmp_path / "bwrap"
    fake_bwrap.write_text('#!/bin/sh\nshift 2\nexec "$@"\n')  # drops --info-fd N
    fake_bwrap.chmod(0o755)
    script = "setsid sleep 120 & echo $!"

    async def run() -> object:
        return await run_limited(
            [str(fake_bwrap), "sh", "-c", script], input=None, timeout=60, max_output=4096
        )

    outcome = anyio.run(run)
    holder = int(outcome.stdout)  # type: ignore[attr-defined]
    try:
        assert outcome.returncode == 0  # type: ignore[attr-defined]
        assert subprocess.run(["kill", "-0", str(holder)]).returncode == 0  # it still held them
    finally:
        os.kill(holder, signal.SIGKILL)
