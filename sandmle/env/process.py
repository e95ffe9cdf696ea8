"""The host's side of an episode's worker process, and the ledger that lets a restarted host
reap what a killed one left.

Each worker runs in a session of its own with its own temp folder (its sandboxes live there),
and is recorded in ``<state>/episodes/<id>.json`` (pid and kernel start time, so a recycled pid
is never killed by mistake). Closing an episode kills the worker's process group (its bwrap
sandboxes die with their parent) and removes the folder; a host that starts reaps every record
a previous one left.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

from pydantic import BaseModel

from sandmle.env.protocol import (
    MAX_LINE_BYTES,
    ActionLine,
    DoneLine,
    EpisodeRequest,
    FailedLine,
    ObservationLine,
    WorkerLine,
)
from sandmle.errors import SandmleError
from sandmle.harness.sandbox import process_start_time, release_sandboxes

WORKER = "sandmle.env.worker"


class EpisodeGone(SandmleError):
    """The episode's worker ended without a ``done`` (killed, crashed, or past its deadline)."""


class Record(BaseModel):
    """One live worker, as the ledger holds it."""

    pid: int
    start: str
    workdir: str


def reap(state_dir: Path, dead_only: bool = False) -> int:
    """Kill every worker a previous host left running and remove its folder; how many. With
    ``dead_only``, leave running workers alone (another live host's) and only release what
    dead ones left: their folders and sandbox mounts (a worker killed with its host by the
    parent-death signal cannot unmount its own)."""
    ledger = state_dir / "episodes"
    reaped = 0
    for path in sorted(ledger.glob("*.json")) if ledger.is_dir() else []:
        try:
            record = Record.model_validate_json(path.read_text())
        except (OSError, ValueError):
            path.unlink(missing_ok=True)
            continue
        alive = process_start_time(record.pid) == record.start  # the very process we started
        if dead_only and (alive or not Path(record.workdir).exists()):
            continue  # running, or another node's (its folder and mounts are there)
        if alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(record.pid, signal.SIGKILL)
            reaped += 1
        _remove(Path(record.workdir))
        path.unlink(missing_ok=True)
    return reaped


class EpisodeProcess:
    """One episode's worker: started on ``start``, one ``act`` per policy turn, ``kill`` always."""

    def __init__(self, request: EpisodeRequest, state_dir: Path) -> None:
        self.request = request
        # a short path: sandboxes put unix sockets in the worker's temp folder (108-byte cap)
        self.workdir = Path(tempfile.mkdtemp(prefix="sandmle-env-"))
        self.record = state_dir / "episodes" / f"{request.episode_id}.json"
        self.proc: asyncio.subprocess.Process | None = None
        self.ended = False

    async def start(self) -> WorkerLine:
        """Start the worker and hand it the request; its first line (the first observation)."""
        tmp = self.workdir / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        self.record.parent.mkdir(parents=True, exist_ok=True)
        stderr = (self.workdir / "worker.log").open("wb")
        try:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", WORKER,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=stderr,
                start_new_session=True, limit=MAX_LINE_BYTES,
                env={**os.environ, "TMPDIR": str(tmp)},
            )  # fmt: skip
        finally:
            stderr.close()
        start = process_start_time(self.proc.pid) or ""
        record = Record(pid=self.proc.pid, start=start, workdir=str(self.workdir))
        self.record.write_text(record.model_dump_json())
        return await self._exchange(self.request)

    async def act(self, action: ActionLine) -> WorkerLine:
        """Hand the worker the policy's turn; its next line."""
        return await self._exchange(action)

    async def _exchange(self, line: BaseModel) -> WorkerLine:
        proc = self._running()
        assert proc.stdin is not None and proc.stdout is not None
        broke: Exception | None = None
        try:
            proc.stdin.write(line.model_dump_json().encode() + b"\n")
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            broke = exc  # it may have ended on its own (a time limit): its last line tells
        try:
            raw = await proc.stdout.readline()
        except (ConnectionResetError, ValueError) as exc:
            raise self._gone(f"its pipe broke ({broke or exc})") from None
        if not raw:
            await proc.wait()
            raise self._gone(f"it exited with code {proc.returncode}")
        answer = _parse(raw)
        if not isinstance(answer, ObservationLine):
            self.ended = True
        return answer

    def _running(self) -> asyncio.subprocess.Process:
        if self.proc is None or self.ended:
            raise SandmleError(f"episode {self.request.episode_id} is not running")
        return self.proc

    def _gone(self, why: str) -> EpisodeGone:
        self.ended = True
        tail = self.stderr_tail()
        return EpisodeGone(f"episode {self.request.episode_id}: the worker ended: {why}{tail}")

    def stderr_tail(self) -> str:
        """The worker's last stderr line, for an error message (``: <line>``, or nothing)."""
        try:
            lines = (self.workdir / "worker.log").read_text(errors="replace").splitlines()
        except OSError:
            return ""
        last = next((ln.strip() for ln in reversed(lines) if ln.strip()), "")
        return f": {last[:300]}" if last else ""

    def kill(self) -> None:
        """End the worker and everything in its session, remove its folder and its record.

        Synchronous and safe from any thread: a server closes sessions from worker threads.
        """
        self.ended = True
        if self.proc is not None and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            _wait_gone(self.proc.pid)
        _remove(self.workdir)
        self.record.unlink(missing_ok=True)

    async def wait_closed(self, timeout_s: float = 10.0) -> None:
        """Wait until asyncio has reaped the (killed) worker."""
        if self.proc is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.proc.wait(), timeout_s)


def _wait_gone(pid: int, tries: int = 200) -> None:
    """Wait (up to ~2 s) until the killed worker is no longer running."""
    import time

    for _ in range(tries):  # asyncio's child watcher reaps it: only look
        if process_start_time(pid) is None or _zombie(pid):
            return
        time.sleep(0.01)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except OSError:
        return True


def _remove(workdir: Path) -> None:
    """Remove a worker's folder, with what its killed sandboxes left (cgroups, mounts)."""
    release_sandboxes(workdir / "tmp")
    shutil.rmtree(workdir, ignore_errors=True)


def _parse(raw: bytes) -> WorkerLine:
    data = json.loads(raw)
    kind = data.get("type")
    if kind == "observation":
        return ObservationLine.model_validate(data)
    if kind == "done":
        return DoneLine.model_validate(data)
    return FailedLine.model_validate(data)
