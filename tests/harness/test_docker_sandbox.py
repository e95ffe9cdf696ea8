"""The docker sandbox run for real: ``sandmle/synthetic -T sandbox=docker`` on built-in tasks.

Needs a Docker engine, compose v2 and the agent image ``sandmle-agent:latest`` (CI's
``.ci/docker_lane.sh`` builds them offline). Skipped where they are missing, unless
``SANDMLE_REQUIRE_DOCKER=1`` (CI), where a missing piece fails the tests.

What must hold (issue "Sandbox v3", #30): the heuristic policy's grades equal the bwrap
sandbox's, sample for sample; the limits of the task are in force inside the container;
no network; the answers are not mounted; the red-team probes fail.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import sandbox

from sandmle.benchmarks.synthetic.builtin import builtin_pack_dir
from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.harness.sandbox import DEFAULT_IMAGE

from .test_red_team import COPY_SAMPLE, _Listener, _script, _tool_outputs

REQUIRE = os.environ.get("SANDMLE_REQUIRE_DOCKER") == "1"
GRADED_TASKS = "library-visits-003,parcel-route-000,sonar-frames-002,support-tickets-006"
"""Built-in tasks the heuristic solves under both sandboxes: tabular, route, audio, text."""


def _missing() -> str | None:
    """Why the docker tests cannot run here, or None."""
    if shutil.which("docker") is None:
        return "no docker CLI"
    checks = {
        "no Docker engine": ["docker", "info"],
        "no compose v2": ["docker", "compose", "version"],
        f"no {DEFAULT_IMAGE} image (run .ci/docker_lane.sh)": [
            "docker", "image", "inspect", DEFAULT_IMAGE,
        ],
    }  # fmt: skip
    for reason, cmd in checks.items():
        if subprocess.run(cmd, capture_output=True).returncode != 0:
            return reason
    return None


@pytest.fixture(scope="module", autouse=True)
def _engine() -> None:
    reason = _missing()
    if reason is not None:
        if REQUIRE:
            pytest.fail(f"SANDMLE_REQUIRE_DOCKER=1 but {reason}")
        pytest.skip(reason)


def _eval(task: Any, model: Any, tmp_path: Path, name: str, **kwargs: Any) -> EvalLog:
    log = inspect_eval(task, model=model, log_dir=str(tmp_path / name), display="none", **kwargs)[0]
    assert log.status == "success", log.error
    return log


def _scores(log: EvalLog) -> dict[str, Any]:
    return {str(s.id): s.scores["medal_scorer"].value for s in log.samples or []}  # type: ignore[index]


def test_heuristic_grades_equal_bwraps(tmp_path: Path) -> None:
    pack = str(builtin_pack_dir())
    grades = {
        box: _scores(
            _eval(
                synthetic(pack=pack, tasks=GRADED_TASKS, sandbox=box),
                "sandmle/heuristic",
                tmp_path,
                box,
                max_samples=2,
            )
        )
        for box in ("bwrap", "docker")
    }
    assert sorted(grades["docker"]) == sorted(GRADED_TASKS.split(","))
    assert grades["docker"] == grades["bwrap"]
    assert all(v["valid_submission"] == 1.0 for v in grades["docker"].values())


LIMITS = {
    "file_size_mb": 64,
    "cpus": 1.5,
    "threads": 3,
    "shm_mb": 32,
    "cpu_time_s": 777,
    "max_processes": 99,
    "memory_mb": 1024,
}
PROBE = r"""
import json, os, resource
def first(*paths):
    for path in paths:
        try:
            return open(path).read().split()[0]
        except OSError:
            continue
found = {
    "fsize": resource.getrlimit(resource.RLIMIT_FSIZE)[0] // 2**20,
    "cpu": resource.getrlimit(resource.RLIMIT_CPU)[0],
    "threads": [os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")],
    "shm": os.statvfs("/dev/shm").f_blocks * os.statvfs("/dev/shm").f_frsize // 2**20,
    "memory": first("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"),
    "pids": first("/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max"),
    "cpu_quota": first("/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpu/cpu.cfs_quota_us",
                       "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us"),
    "uid": os.getuid(),
}
print(json.dumps(found))
"""


FORK_BOMB = """
import os, signal
children = []
try:
    while True:
        pid = os.fork()
        if pid == 0:
            signal.pause()
        children.append(pid)
except OSError as error:
    print("fork failed after", len(children), error.errno)
for pid in children:
    os.kill(pid, signal.SIGKILL)
"""


@solver
def _probe() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        result = await sandbox().exec(["python3", "-c", PROBE])
        state.store.set("probe", result.stdout if result.success else result.stderr)
        return state

    return solve


def test_the_task_limits_are_in_force_in_the_container(tmp_path: Path) -> None:
    task = synthetic(
        pack=str(builtin_pack_dir()), tasks="library-visits-003", sandbox="docker", **LIMITS
    )
    log = _eval(task, "mockllm/model", tmp_path, "limits", solver=_probe())
    (sample,) = log.samples or []
    found = json.loads(sample.store["probe"])
    assert found == {
        "fsize": 64,
        "cpu": 777,
        "threads": ["3", "3", "3"],
        "shm": 32,
        "memory": str(1024 * 2**20),
        "pids": "99",
        "cpu_quota": "150000",  # 1.5 CPUs of a 100 ms period
        "uid": 1000,
    }


def test_red_team_probes_fail_in_the_container(tmp_path: Path) -> None:
    pack = builtin_pack_dir()
    task_id = "library-visits-003"
    answers = pack / task_id / "prepared/private/answers.csv"
    answer_row = answers.read_text().splitlines()[1]
    listener = _Listener()
    attacks = [
        f"cat {answers}",
        "find / -path /proc -prune -o -name '*answers*' -print 2>/dev/null | head",
        "cat /proc/self/mountinfo",
        f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {listener.port}), timeout=3)\"",
        "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)\"",
        f"touch /usr/pwned /etc/pwned /home/data/pwned {pack / task_id}/pwned && echo wrote",
        # a fork bomb that counts: the container's pids cap stops it (leftovers of an
        # unbounded one would live on in the container until the sample ends, unlike bwrap)
        f"python3 -c {shlex.quote(FORK_BOMB)}",
        'python3 -c "x = bytearray(4 * 2**30); print(len(x))"; echo exit=$?',
        "echo still-alive",
        COPY_SAMPLE,
    ]
    model = get_model("mockllm/model", custom_outputs=_script({"": attacks}))
    try:
        task = synthetic(
            pack=str(pack), tasks=task_id, sandbox="docker", command_timeout=30,
            max_processes=64, memory_mb=1024,
        )  # fmt: skip
        log = _eval(task, model, tmp_path, "red-team")
    finally:
        listener.close()
    outputs = _tool_outputs(log, task_id)
    assert len(outputs) == len(attacks) + 1  # every attack ran, then submit
    by_attack = dict(zip(attacks, outputs, strict=False))
    everything = "\n".join(outputs)
    assert answer_row not in everything  # no answer row was ever printed
    assert "No such file" in by_attack[attacks[0]] or "Permission denied" in by_attack[attacks[0]]
    assert "answers" not in by_attack[attacks[1]]
    mounts = by_attack[attacks[2]]  # the one bind from the host: the public dir, read-only
    assert "prepared/private" not in mounts and str(pack / task_id / "prepared/public") in mounts
    assert not listener.connected
    assert "Traceback" in by_attack[attacks[3]] and "Traceback" in by_attack[attacks[4]]
    assert "wrote" not in by_attack[attacks[5]] and not (pack / task_id / "pwned").exists()
    forked = by_attack[attacks[6]].split()
    assert forked[:3] == ["fork", "failed", "after"] and int(forked[3]) < 64  # max_processes
    assert "4294967296" not in by_attack[attacks[7]]  # killed or MemoryError, never allocated
    assert "still-alive" in by_attack[attacks[8]]  # the container survived everything above
    (sample,) = log.samples or []
    assert sample.scores["medal_scorer"].value["valid_submission"] == 1.0  # type: ignore[index]
