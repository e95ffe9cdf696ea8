"""Toolkit runs shared between samples of one task (``-T toolkit_memo=true``).

A toolkit call (``python automl.py FAMILY [LEVEL]``) made as the first command in a fresh
sandbox runs a deterministic program (seeded models, one thread, no clock) on the task's
public files, so every such call on the same task, with the same program and limits, prints
the same text and writes the same ``submission.csv``. In a GRPO group the four episodes of a
task mostly make the same call: in cpu-smollm2's rollouts about 70% of the AutoML seconds were
such repeats (docs/reproduce.md). With the memo, the first call runs and the others of the
process get its output and its file, written into their own sandbox; the model sees the same
text either way, and the grader grades the same bytes.

A run is shared only when it is exact: the call is the sample's first bash or python call and
no other call started while it ran (bash calls in one message run at once), the command is
one of the toolkit's calls letter for letter, and it exited 0 with a submission written.
Anything else (a failed family, a timeout, a run under another limit) runs as it would without
the memo, and a call that waited on a run that is not shared runs its own.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from inspect_ai.tool import Tool, ToolDef
from inspect_ai.util import sandbox, store

from sandmle.harness.automl_program import TOOLKIT_OPTIONS, toolkit_command, toolkit_source
from sandmle.harness.layout import SUBMISSION_PATH
from sandmle.sandbox_scripts.automl.settings import LEVEL_ARGS

STORE_MEMO_KEY = "sandmle:toolkit_memo"
"""The sample's memo scope (its limits, as text) when its task shares toolkit runs."""
STORE_CALLS_KEY = "sandmle:tool_calls"
"""bash and python calls started in this sample: a shared run must be the first."""
MAX_BYTES = 256 * 2**20
"""Submissions kept per process (least recently used first out); a micro task's is kilobytes."""


def toolkit_calls() -> frozenset[str]:
    """Every command the toolkit's program takes, exactly as a model writes it."""
    calls = {toolkit_command(option) for option in TOOLKIT_OPTIONS}
    levels = {f"{call} {level}" for call in calls for (level,) in LEVEL_ARGS}
    return frozenset(calls | levels)


@dataclass(frozen=True)
class Outcome:
    """What a toolkit run gave: the bash tool's text and the submission it wrote."""

    text: str
    submission: bytes


@dataclass
class MemoStats:
    runs: int = 0
    """Toolkit calls that ran (eligible, not found)."""
    shared: int = 0
    """Toolkit calls answered from an earlier run."""


class ToolkitMemo:
    """Outcomes by key, and the runs in flight, so concurrent calls wait for the first."""

    def __init__(self, max_bytes: int = MAX_BYTES):
        self.max_bytes = max_bytes
        self.stats = MemoStats()
        self._done: OrderedDict[str, Outcome] = OrderedDict()
        self._running: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Future]] = {}
        self._lock = threading.Lock()  # training runs each eval's loop in its own thread

    async def get(self, key: str, run: Callable[[], Awaitable[Outcome | None]]) -> Outcome | None:
        """The outcome under ``key``: an earlier run's, a running one's, or ``run()``'s (kept
        when not None). None: this call ran its own, and it is not one to share."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if key in self._done:
                self._done.move_to_end(key)
                self.stats.shared += 1
                return self._done[key]
            running = self._running.get(key)
            if running is None or running[0] is not loop:  # none, or another eval's
                future: asyncio.Future = loop.create_future()
                self._running[key] = (loop, future)
                running = None
        if running is not None:
            outcome = await asyncio.shield(running[1])
            if outcome is not None:
                with self._lock:
                    self.stats.shared += 1
                return outcome
            return await self._run(run)  # the first run is not shared: this call runs its own
        try:
            outcome = await self._run(run)
        except BaseException:
            future.set_result(None)
            raise
        finally:
            with self._lock:
                self._running.pop(key, None)
        future.set_result(outcome)
        if outcome is not None:
            self._keep(key, outcome)
        return outcome

    async def _run(self, run: Callable[[], Awaitable[Outcome | None]]) -> Outcome | None:
        with self._lock:
            self.stats.runs += 1
        return await run()

    def _keep(self, key: str, outcome: Outcome) -> None:
        with self._lock:
            self._done[key] = outcome
            while sum(len(o.submission) for o in self._done.values()) > self.max_bytes:
                self._done.popitem(last=False)


MEMO = ToolkitMemo()
"""This process's memo: every eval it runs (a training rank's rollouts, one eval cell)."""


@lru_cache(maxsize=512)
def _digest(root: str, signature: tuple) -> str:
    sha = hashlib.sha256()
    for path, link, _, _ in signature:
        # a link is hashed by its text, never followed: a pack's files are not trusted
        data = link.encode() if link is not None else (Path(root) / path).read_bytes()
        sha.update(path.encode() + b"\0" + (b"L" if link is not None else b"F") + data)
    return sha.hexdigest()


def files_digest(public_dir: Path) -> str:
    """SHA-256 of a folder's regular files (names and bytes) and links (names and targets,
    not followed), cached while no entry's size or time changes."""
    signature = []
    for p in sorted(public_dir.rglob("*")):
        info = p.lstat()
        link = os.readlink(p) if stat.S_ISLNK(info.st_mode) else None
        if link is not None or stat.S_ISREG(info.st_mode):
            name = p.relative_to(public_dir).as_posix()
            signature.append((name, link, info.st_size, info.st_mtime_ns))
    return _digest(str(public_dir), tuple(signature))


def memo_key(scope: str, public_dir: Path, command: str) -> str:
    program = hashlib.sha256(toolkit_source().encode()).hexdigest()
    return "\n".join([scope, files_digest(public_dir), program, command])


def count_call() -> int:
    """Count a bash/python call starting in this sample; how many started before it."""
    started = int(store().get(STORE_CALLS_KEY, 0))
    store().set(STORE_CALLS_KEY, started + 1)
    return started


def counting(tool: Tool) -> Tool:
    """``tool`` (Inspect's python), counted as a call that may change the sandbox."""
    spec = ToolDef(tool)

    async def execute(code: str) -> str:
        count_call()
        return str(await tool(code=code))

    return _like(spec, execute)


def shared_bash(tool: Tool, public_dir: Callable[[], Path]) -> Tool:
    """``tool`` (Inspect's bash, same name, description and parameters: the model sees the
    same tools) whose exact toolkit calls in a fresh sandbox are shared through ``MEMO``;
    ``public_dir()`` is the sample's task's public files."""
    spec = ToolDef(tool)
    calls = toolkit_calls()

    async def execute(command: str) -> str:
        scope = store().get(STORE_MEMO_KEY)
        first = count_call() == 0
        if scope is None or not first or command not in calls:
            return str(await tool(command=command))
        own: list[str] = []

        async def run() -> Outcome | None:
            own.append(str(await tool(command=command)))
            alone = store().get(STORE_CALLS_KEY) == 1  # no other call changed the sandbox
            return await _outcome(own[0]) if alone else None

        outcome = await MEMO.get(memo_key(str(scope), public_dir(), command), run)
        if own:  # this call ran: its sandbox holds its own submission
            return own[0]
        assert outcome is not None  # get() runs this call's own when it has none to share
        await sandbox().write_file(SUBMISSION_PATH, outcome.submission)
        return outcome.text

    return _like(spec, execute)


async def _outcome(text: str) -> Outcome | None:
    """The outcome of a run that just ended, if it wrote a submission (None: not shared)."""
    try:
        submission = await sandbox().read_file(SUBMISSION_PATH, text=False)
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        return None
    return Outcome(text, submission)


def _like(spec: ToolDef, execute: Callable[..., Awaitable[str]]) -> Tool:
    return ToolDef(
        execute,
        name=spec.name,
        description=spec.description,
        parameters=spec.parameters,
        parallel=spec.parallel,
        viewer=spec.viewer,
    ).as_tool()
