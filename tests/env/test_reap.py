"""The ledger's reap: a restarted host kills and releases everything its predecessor left; a
sweep for another host's leftovers (``dead_only``) releases only dead workers' folders on this
machine, never a live worker and never another node's record."""

from __future__ import annotations

import subprocess
from pathlib import Path

from sandmle.env.process import Record, reap
from sandmle.harness.sandbox import process_start_time


def _record(state: Path, name: str, pid: int, start: str, workdir: Path) -> Path:
    path = state / "episodes" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(Record(pid=pid, start=start, workdir=str(workdir)).model_dump_json())
    return path


def test_dead_only_releases_dead_workers_here_and_nothing_else(tmp_path: Path) -> None:
    state = tmp_path / "state"
    live = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        start = process_start_time(live.pid)
        assert start is not None
        running_dir, dead_dir = tmp_path / "running", tmp_path / "dead"
        running_dir.mkdir(), dead_dir.mkdir()
        running = _record(state, "running", live.pid, start, running_dir)
        dead = _record(state, "dead", live.pid, "0", dead_dir)  # another process's start time
        elsewhere = _record(state, "elsewhere", live.pid, "0", tmp_path / "not-on-this-node")
        assert reap(state, dead_only=True) == 0  # kills nothing
        assert live.poll() is None and running.exists() and running_dir.exists()
        assert not dead.exists() and not dead_dir.exists()
        assert elsewhere.exists()  # left for the node that holds its folder
        assert reap(state) == 1  # a restarted host of its own: the live worker goes too
        assert live.wait(timeout=10) is not None
        assert not running.exists() and not running_dir.exists() and not elsewhere.exists()
    finally:
        live.kill()
        live.wait()
