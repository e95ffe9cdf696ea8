"""Run one sandbox command with a wall-clock timeout and capped output (and, only where
the sample has no sized tmpfs, a polled disk-quota watch).

The command is expected to be a `bwrap` invocation: killing its process group kills
bwrap, whose `--die-with-parent` then takes the sandbox's PID namespace (and every
process the command started) down with it.
"""

import json
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from subprocess import DEVNULL, PIPE

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process
from inspect_ai.util import OutputLimitExceededError

_READ_CHUNK = 64 * 1024
OUTPUT_GRACE_S = 0.5
"""How long output is still read once the exec's process tree is gone: what it wrote is in
the pipe by then; a process outside its PID namespace (a warm run whose monitor was killed)
holding the pipe must not keep the exec open until its timeout."""


@dataclass
class ProcessOutcome:
    """How a limited command ended."""

    returncode: int
    stdout: bytes
    stderr: bytes
    disk_exceeded: bool = False


@dataclass
class _CappedBuffer:
    """Keeps the first `limit` bytes of a stream and notes whether more came."""

    limit: int
    data: bytearray = field(default_factory=bytearray)
    overflowed: bool = False

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        if len(chunk) > room:
            self.overflowed = True
        self.data += chunk[: max(room, 0)]


def dir_size(paths: Sequence[Path]) -> int:
    """Bytes used by regular files under `paths` (symlinks are not followed)."""
    total = 0
    stack = [str(p) for p in paths]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:  # vanished or unreadable while the agent works
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    total += entry.stat(follow_symlinks=False).st_blocks * 512
            except OSError:
                continue
    return total


def _read_child_pid(info_fd: int) -> int | None:
    """The sandbox init's host pid, from what bwrap wrote to `--info-fd`."""
    os.set_blocking(info_fd, False)
    try:
        return int(json.loads(os.read(info_fd, 4096))["child-pid"])
    except (OSError, ValueError, KeyError):
        return None  # bwrap died before it got that far


@dataclass
class _Info:
    """bwrap's `--info-fd` pipe, read once (after bwrap exited, the JSON is all there)."""

    fd: int
    read: bool = False
    child_pid: int | None = None

    def pid(self) -> int | None:
        if not self.read:
            self.read, self.child_pid = True, _read_child_pid(self.fd)
        return self.child_pid


def _alive(child_pid: int) -> bool:
    """Whether the sandbox's init (a bwrap process) still runs."""
    try:
        with open(f"/proc/{child_pid}/stat") as handle:
            name, rest = handle.read().split(" (", 1)[1].rsplit(")", 1)
    except OSError:
        return False
    return rest.split()[0] not in "ZX" and name == "bwrap"  # not exited, pid not reused


def _wait_namespace_gone(child_pid: int, limit_s: float = 5.0) -> None:
    """Wait while the sandbox's init is alive.

    The kernel only lets a PID namespace's init finish exiting once every other
    process in it is gone, so its end is the end of everything the exec started.
    """
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and _alive(child_pid):
        time.sleep(0.005)


def kill_group(process: Process) -> None:
    """SIGKILL the command's process group (bwrap and anything it left in the group)."""
    if process.returncode is not None:
        return  # reaped: its pid (and group id) may already belong to someone else
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


async def _pump(stream: ByteReceiveStream, buffer: _CappedBuffer, process: Process) -> None:
    # Keep reading after an overflow (and discard) so the killed process sees EOF, not
    # a full pipe; memory stays bounded by `limit`.
    async for chunk in stream:
        buffer.add(chunk)
        if buffer.overflowed:
            kill_group(process)


async def _end_reading(process: Process, info: _Info, io: anyio.CancelScope) -> None:
    """Stop reading output OUTPUT_GRACE_S after the exec's process tree is gone (bwrap
    exited and its PID namespace emptied), whoever still holds the pipes."""
    await process.wait()
    child_pid = info.pid()
    if child_pid is not None and _alive(child_pid):
        await anyio.to_thread.run_sync(_wait_namespace_gone, child_pid)
    await anyio.sleep(OUTPUT_GRACE_S)
    io.cancel()


async def _feed(stream: ByteSendStream, data: bytes) -> None:
    try:
        await stream.send(data)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass  # the command exited without reading all its input
    finally:
        await stream.aclose()


@dataclass(frozen=True)
class DiskWatch:
    """A polled disk quota, only for hosts where the sample has no sized tmpfs."""

    dirs: Sequence[Path]
    limit: int
    interval: float


async def _watch_disk(watch: DiskWatch, state: dict) -> None:
    while True:
        await anyio.sleep(watch.interval)
        if await anyio.to_thread.run_sync(dir_size, watch.dirs) > watch.limit:
            state["disk_exceeded"] = True
            kill_group(state["process"])
            return


def size_str(n: int) -> str:
    return f"{n // 1024**2} MiB" if n % 1024**2 == 0 else f"{n} bytes"


async def run_limited(
    argv: list[str],
    *,
    input: bytes | None,
    timeout: float,
    max_output: int,
    launcher: Sequence[str] = (),
    pass_fds: Sequence[int] = (),
    disk_watch: DiskWatch | None = None,
) -> ProcessOutcome:
    """Run bwrap `argv` (after `launcher`, which must exec it) to completion under the
    limits; return once all it started is gone. `pass_fds` stay open in bwrap.

    Raises:
      TimeoutError: `timeout` seconds passed; the command was killed.
      OutputLimitExceededError: stdout or stderr passed `max_output` bytes; killed.
    """
    info_read, info_write = os.pipe()
    try:
        process = await anyio.open_process(
            [*launcher, argv[0], "--info-fd", str(info_write), *argv[1:]],
            stdin=PIPE if input is not None else DEVNULL, stdout=PIPE, stderr=PIPE,
            start_new_session=True, pass_fds=(info_write, *pass_fds),
        )  # fmt: skip
    except BaseException:
        os.close(info_read)
        raise
    finally:
        os.close(info_write)
    return await _supervise(process, info_read, input, timeout, max_output, disk_watch)


class LaunchLostError(Exception):
    """A `Launch` ended before its exec began (e.g. the OOM killer took it)."""


@dataclass
class Launch:
    """A bwrap started ahead of its exec: already in the sample's cgroup, blocked reading
    its options from `args_fd` (so the slow cgroup join is off the exec's path)."""

    process: Process
    args_fd: int
    """Write end of bwrap's `--args` pipe: writing the options starts the exec."""
    info_fd: int
    """Read end of bwrap's `--info-fd` pipe."""

    def discard(self) -> None:
        """End it unused (bwrap, finding no options, exits; the kill makes sure)."""
        for fd in (self.args_fd, self.info_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        kill_group(self.process)

    async def aclose(self) -> None:
        """`discard`, then reap it and close its pipes (in the loop that started it)."""
        self.discard()
        with anyio.CancelScope(shield=True):
            await self.process.wait()
            await self.process.aclose()


async def launch(argv: list[str], *, launcher: Sequence[str], pass_fds: Sequence[int]) -> Launch:
    """Start bwrap `argv` (options to come through `--args`) behind `launcher`."""
    args_read, args_write = os.pipe()
    info_read, info_write = os.pipe()
    inherited = (args_read, info_write)
    try:
        process = await anyio.open_process(
            [*launcher, argv[0], "--args", str(args_read), "--info-fd", str(info_write), *argv[1:]],
            stdin=PIPE, stdout=PIPE, stderr=PIPE, start_new_session=True,
            pass_fds=(*inherited, *pass_fds),
        )  # fmt: skip
    except BaseException:
        os.close(args_write)
        os.close(info_read)
        raise
    finally:
        for fd in inherited:
            os.close(fd)
    return Launch(process, args_write, info_read)


async def run_launched(
    started: Launch,
    options: bytes,
    *,
    input: bytes | None,
    timeout: float,
    max_output: int,
    disk_watch: DiskWatch | None = None,
) -> ProcessOutcome:
    """Give a `Launch` its NUL-separated `options`, then run it as `run_limited` does.

    Raises:
      LaunchLostError: it died before taking its options (nothing ran); start another.
      As `run_limited` otherwise.
    """
    try:
        view = memoryview(options)
        os.set_blocking(started.args_fd, False)  # bwrap waits on an empty pipe: this fits
        try:
            view = view[os.write(started.args_fd, view) :]
        except BlockingIOError:
            pass
        os.set_blocking(started.args_fd, True)
        while view:  # more than a pipe holds: bwrap reads as we write
            view = view[await anyio.to_thread.run_sync(os.write, started.args_fd, view) :]
    except BrokenPipeError:
        await started.aclose()
        raise LaunchLostError("the bwrap started ahead was gone") from None
    except BaseException:
        started.discard()
        raise
    finally:
        try:
            os.close(started.args_fd)
        except OSError:
            pass
    process = started.process
    if input is None and process.stdin is not None:
        await process.stdin.aclose()  # the command reads EOF, as from /dev/null
    return await _supervise(process, started.info_fd, input, timeout, max_output, disk_watch)


async def _supervise(
    process: Process,
    info_read: int,
    input: bytes | None,
    timeout: float,
    max_output: int,
    disk_watch: DiskWatch | None,
) -> ProcessOutcome:
    out, err = _CappedBuffer(max_output), _CappedBuffer(max_output)
    info = _Info(info_read)
    state: dict = {"process": process, "disk_exceeded": False}
    try:
        with anyio.fail_after(timeout):
            async with anyio.create_task_group() as watcher:
                if disk_watch is not None:
                    watcher.start_soon(_watch_disk, disk_watch, state)
                async with anyio.create_task_group() as io:
                    assert process.stdout is not None and process.stderr is not None  # pipes
                    io.start_soon(_pump, process.stdout, out, process)
                    io.start_soon(_pump, process.stderr, err, process)
                    if input is not None and process.stdin is not None:
                        io.start_soon(_feed, process.stdin, input)
                    watcher.start_soon(_end_reading, process, info, io.cancel_scope)
                returncode = await process.wait()
                watcher.cancel_scope.cancel()
    finally:
        kill_group(process)
        with anyio.CancelScope(shield=True):
            await process.wait()
            await process.aclose()
            child_pid = info.pid()
            os.close(info_read)
            if child_pid is not None and _alive(child_pid):  # usually gone already
                await anyio.to_thread.run_sync(_wait_namespace_gone, child_pid)
    # A write that lands between two polls is caught here, after the exit.
    if disk_watch is not None and await anyio.to_thread.run_sync(dir_size, disk_watch.dirs) > (
        disk_watch.limit
    ):
        state["disk_exceeded"] = True
    for buffer in (out, err):
        if buffer.overflowed:
            text = bytes(buffer.data).decode("utf-8", errors="replace")
            raise OutputLimitExceededError(size_str(max_output), truncated_output=text)
    return ProcessOutcome(returncode, bytes(out.data), bytes(err.data), state["disk_exceeded"])
