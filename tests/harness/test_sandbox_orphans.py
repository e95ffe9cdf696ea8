"""Samples a killed run left are released by the next run; a live run's are never touched.

Inspect's own SIGTERM handling ends the process at once, and nothing can clean up after a
SIGKILL or the OOM killer: each running sample's folder, quota mount, cgroup and a bwrap
stayed behind (found on 2026-12-05: a GRPO run stopped with SIGTERM left 8 of each)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sandmle.harness.sandbox._release import release_orphans

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")
SLEEP = "987"
"""The sandboxed command's argument: no other process on the machine sleeps that long."""

RUN = f"""
import os, sys
from pathlib import Path
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import solver
from inspect_ai.util import sandbox

@solver
def sleeper():
    async def solve(state, generate):
        if sys.argv[1] == "sleep":
            await sandbox().exec(["sleep", "{SLEEP}"], timeout=600)
        return state
    return solve

samples = [Sample(input="x", id=i) for i in range(int(sys.argv[2]))]
eval(Task(dataset=samples, solver=sleeper(), sandbox="bwrap"), model="mockllm/model",
     display="none", log_dir=os.environ["LOG_DIR"], max_samples=2)
"""


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A temp folder with a short path: samples keep unix sockets there (108-byte cap)."""
    path = Path(tempfile.mkdtemp(prefix="sm-orphans-", dir="/tmp"))
    yield path
    release_orphans(path / "sandmle-sandboxes")  # whatever a failed assertion left
    shutil.rmtree(path, ignore_errors=True)


def processes(matches: Callable[[list[bytes]], bool]) -> list[int]:
    """Pids whose argv ``matches``."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if proc.name.isdigit() and matches(args):
            found.append(int(proc.name))
    return found


def sleeping() -> list[int]:
    return processes(lambda args: args[:2] == [b"sleep", SLEEP.encode()])


def launches_of(uids: list[str]) -> list[int]:
    """bwrap processes started ahead for these samples' next exec (their argv names the uid)."""
    return processes(lambda args: any(uid.encode() in args for uid in uids))


def mounts_under(path: Path) -> list[str]:
    return [ln for ln in Path("/proc/mounts").read_text().splitlines() if f" {path}/" in ln]


def samples_in(base: Path) -> list[str]:
    return sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []


def test_a_killed_runs_samples_are_released_by_the_next_run(short_tmp: Path):
    (short_tmp / "run.py").write_text(RUN)
    env = {**os.environ, "TMPDIR": str(short_tmp), "LOG_DIR": str(short_tmp / "logs")}
    base = short_tmp / "sandmle-sandboxes"
    run = [sys.executable, "run.py"]
    killed = subprocess.Popen([*run, "sleep", "2"], env=env, cwd=short_tmp)
    try:
        deadline = time.monotonic() + 180
        while len(sleeping()) < 2 and time.monotonic() < deadline and killed.poll() is None:
            time.sleep(0.5)
        assert len(sleeping()) == 2, "the samples never started"
        live = samples_in(base)
        assert len(live) == 2
        assert release_orphans(base) == [] and samples_in(base) == live  # a live run's stay
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
    finally:
        if killed.poll() is None:
            killed.kill()
    assert samples_in(base) == live  # nothing ran its cleanup
    assert len(mounts_under(base)) == (2 if os.geteuid() == 0 else 0)
    # each sample's bwrap started ahead for its next exec outlives the run (it waits for its
    # options, --die-with-parent among them)
    assert len(launches_of(live)) == (2 if os.geteuid() == 0 else 0)
    subprocess.run([*run, "none", "1"], env=env, cwd=short_tmp, check=True, timeout=300)
    assert samples_in(base) == [] and mounts_under(short_tmp) == []
    assert launches_of(live) == []
    assert sleeping() == []  # bwrap's --die-with-parent took the sandboxes' processes


def test_only_a_visible_ended_owner_is_released(tmp_path: Path):
    base = tmp_path / "sandmle-sandboxes"
    here = os.readlink("/proc/self/ns/pid")
    owners = {
        "ended": f"999999999 1 {here}",  # no such pid here: its run ended
        "elsewhere": "999999999 1 pid:[1]",  # another PID namespace: cannot be told
        "making": None,  # no owner file yet: a root being made
    }
    for name, owner in owners.items():
        (base / name / "rw").mkdir(parents=True)
        if owner is not None:
            (base / name / "owner").write_text(owner)
    assert release_orphans(base) == ["ended"]
    assert samples_in(base) == ["elsewhere", "making"]


def test_a_stray_cgroup_of_a_gone_root_does_not_block_its_uid() -> None:
    """A sample cgroup left without its root (a run killed before the release existed, a
    test's deleted temp base) once failed every later sample that drew the same uid
    (FileExistsError, GRPO run 2026-12-05); an empty stray is now replaced, a live one kept."""
    from sandmle.harness.sandbox._cgroup import CgroupUnavailableError, SampleCgroup, cgroup_roots
    from sandmle.harness.sandbox.limits import SandboxLimits

    try:
        cgroup_roots()
    except CgroupUnavailableError:
        pytest.skip("no usable cgroup hierarchy (needs root): the claim is cgroup-only")
    name = f"stray-test-{os.getpid()}"
    limits = SandboxLimits(memory_mb=256)
    stray = SampleCgroup.create(name, limits)  # made and never removed: a stray
    group = SampleCgroup.create(name, limits)
    try:
        assert group.paths == stray.paths and all(p.is_dir() for p in group.paths)
        sleeper = subprocess.Popen(["sleep", "30"])
        try:
            for path in group.paths:
                (path / "cgroup.procs").write_text(str(sleeper.pid))
            with pytest.raises(FileExistsError):
                SampleCgroup.create(name, limits)  # a live sample's cgroup is never taken
        finally:
            sleeper.kill()
            sleeper.wait()
    finally:
        group.remove()
    assert not any(p.exists() for p in group.paths)
