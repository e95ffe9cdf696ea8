"""The monitors: a run's parent process, forked from the clean server before the run comes.

The server keeps one standby monitor forked, which has already forked the next run's process
(so no fork is on a run's path). The standby accepts a connection, checks the request, tells
the client, hands the request (fds and all) to that process, then relays the client's
signals to the run and reports how it ended. A request that names a preload module the
server has not imported yet goes back to the server instead (the bounce), which imports it
and forks a monitor for that one run (`take_bounce`).
"""

from __future__ import annotations  # any python3 may run this: annotations stay text

import ctypes
import gc
import marshal
import os
import select
import signal
import socket

from .imports import IMPORTED_NOW, PRELOAD, preload, wanted
from .request import (
    HEADER,
    INT_SIZE,
    MAX_REQUEST,
    Job,
    check,
    encode_request,
    fd_bytes,
    job_of,
    received_fds,
    recv_request,
)
from .run import become_run

PR_SET_CHILD_SUBREAPER = 36
_BOUNCE_FDS = 5  # the connection, the run's fds 0-2, the request in a memfd
MAX_LOG_LINE = 300
"""Characters of one log line: a line quotes what a run sent (an env key), never all of it."""
OURS: set[int] = set()
"""In the server: the monitors it forked; any other child is an orphan (see serve)."""


def forget_wakeup(wake: int) -> None:
    """In a fresh fork of the server: drop its child-death wakeup, so neither a monitor nor
    a run inherits the server's SIGCHLD handler (a run starts with SIG_DFL)."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.close(wake)


class ServerFds:
    """The server's own fds; each process it forks closes those it does not use, so no run
    ever holds one (a run holding the listener could take other runs' connections)."""

    SOCKETS = ("listener", "control", "peer")

    def __init__(self, listener: socket.socket) -> None:
        self.listener = listener
        self.notify_r, self.notify_w = os.pipe()  # a standby took a connection
        self.control, self.peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)

    def close(self, *names: str) -> None:
        for name in names or (*self.SOCKETS, "notify_r", "notify_w"):
            if name in self.SOCKETS:
                getattr(self, name).close()
            else:
                os.close(getattr(self, name))


def log(line: str) -> None:
    """One line per connection to the server's stderr (a host-side log the tests read)."""
    if len(line) > MAX_LOG_LINE:
        line = f"{line[:MAX_LOG_LINE]}... ({len(line)} chars)"
    try:
        os.write(2, f"{line}\n".encode())
    except OSError:
        pass


def standby(fds_: ServerFds, libc: ctypes.CDLL) -> Job | None:
    """A monitor with its run's process already forked, both waiting for the next connection,
    so neither fork is on a run's path. Returns a Job only in the run's process."""
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    fds_.close("control", "notify_r")
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:
        ours.close()
        fds_.close("listener", "notify_w", "peer")
        return _await_run(theirs)
    theirs.close()
    conn = _accept(fds_.listener)
    fds_.listener.close()
    request = _read_request(conn)
    names = wanted(*request) if request is not None else []
    if request is not None and names and _bounce(fds_.peer, names, conn, *request):
        request = None  # the server imports them, serves it, then forks the next standby
    else:
        os.write(fds_.notify_w, b".")  # the server forks the next standby
    fds_.close("notify_w", "peer")
    accepted = _answer(conn, *request) if request is not None else None
    if accepted is None:
        ours.close()  # the waiting process sees EOF and exits
        os.waitpid(pid, 0)
        os._exit(0)
    payload, stdio = accepted
    ours.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fd_bytes(stdio))])
    ours.close()
    for fd in stdio:
        os.close(fd)
    _relay(conn, pid)
    os._exit(0)


def _accept(listener: socket.socket) -> socket.socket:
    while True:
        try:
            conn, _ = listener.accept()
            return conn
        except OSError:
            continue


def _read_request(conn: socket.socket) -> tuple[tuple, list[int]] | None:
    try:
        conn.settimeout(30)
        return recv_request(conn)
    except (OSError, ValueError, EOFError, TypeError):
        return None
    finally:  # the socket's O_NONBLOCK is shared with the process it may be handed to
        conn.settimeout(None)


def _answer(conn: socket.socket, request: tuple, fds: list[int]) -> tuple[bytes, list[int]] | None:
    """Check the request and tell the client; None when it runs cold (or went away)."""
    try:
        conn.settimeout(30)
        job, reason = check(request, fds[0])
        note = f" (imported {', '.join(IMPORTED_NOW)})" if IMPORTED_NOW else ""
        log(f"cold: {reason}" if job is None else f"warm: {job.kind}{note}")
        if job is None:
            conn.sendall(b"C" + reason.encode())
            return None
        conn.sendall(b"R")
        if conn.recv(1) != b"G":
            return None  # the client gave up waiting and ran cold
    except (OSError, ValueError, EOFError, TypeError):
        return None
    finally:
        try:
            conn.settimeout(None)
        except OSError:
            pass
    return encode_request(request), fds


def _await_run(sock: socket.socket) -> Job:
    """In a waiting run's process: take the request its monitor accepted, become that run."""
    try:
        request, fds = recv_request(sock)
    except (OSError, ValueError, EOFError, TypeError):
        os._exit(0)  # the monitor's client ran cold or went away
    sock.close()
    return _become(request, fds)


def _become(request: tuple, fds: list[int]) -> Job:
    job = job_of(request, fds[0])
    assert job is not None  # the monitor checked it
    become_run(request, fds)
    return job


def _bounce(
    peer: socket.socket, names: list[str], conn: socket.socket, request: tuple, fds: list[int]
) -> bool:
    """Hand the connection back to the server, which imports `names` and then serves it;
    False when it cannot be handed (the run is then served from this process as it is)."""
    try:
        memfd = os.memfd_create("warm-request", os.MFD_CLOEXEC)
    except (OSError, AttributeError):
        return False
    try:
        os.write(memfd, encode_request(request))
        handed = [conn.fileno(), *fds, memfd]
        peer.sendmsg(
            [marshal.dumps(names)], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fd_bytes(handed))]
        )
    except OSError:
        return False
    finally:
        os.close(memfd)
    return True


def take_bounce(fds_: ServerFds, libc: ctypes.CDLL, wake: int) -> Job | None:
    """In the server: import what a bounced run named, then fork a monitor that answers it.
    Returns a Job only in that run's process."""
    try:
        data, ancdata, _, _ = fds_.control.recvmsg(65536, socket.CMSG_LEN(_BOUNCE_FDS * INT_SIZE))
    except OSError:
        return None
    handed = received_fds(ancdata)
    if len(handed) != _BOUNCE_FDS:
        for fd in handed:
            os.close(fd)
        return None
    conn_fd, stdio, memfd = handed[0], handed[1:4], handed[4]
    try:
        names = marshal.loads(data)
        body = os.pread(memfd, MAX_REQUEST + HEADER.size, 0)
        request = marshal.loads(body[HEADER.size :])
    except (OSError, ValueError, EOFError, TypeError):
        for fd in (conn_fd, *stdio):
            os.close(fd)
        return None
    finally:
        os.close(memfd)
    IMPORTED_NOW[:] = preload([m for m in PRELOAD if m in names])  # only listed ones
    gc.freeze()
    pid = os.fork()
    if pid == 0:
        forget_wakeup(wake)
        fds_.close()
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        return _monitor(socket.socket(fileno=conn_fd), request, stdio)
    OURS.add(pid)
    IMPORTED_NOW.clear()
    for fd in (conn_fd, *stdio):
        os.close(fd)
    return None


def _monitor(conn: socket.socket, request: tuple, stdio: list[int]) -> Job:
    """Answer a bounced request and, if it runs here, fork its process and relay."""
    if _answer(conn, request, stdio) is None:
        os._exit(0)
    pid = os.fork()
    if pid == 0:
        conn.close()
        return _become(request, stdio)
    for fd in stdio:
        os.close(fd)
    _relay(conn, pid)
    os._exit(0)


def _relay(conn: socket.socket, pid: int) -> None:
    """Forward the client's signals to the run; report its end; kill it if the client goes.
    (A child's death wakes the wait through SIGCHLD: pidfd_open is denied in the sandbox.)"""
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if not done:
            ready, _, _ = select.select([conn.fileno(), wake_r], [], [])
            if wake_r in ready:
                _drain(wake_r)
                continue
        else:
            _descendants_kill(pid)
            if os.WIFSIGNALED(status):
                result = (False, os.WTERMSIG(status))
            else:
                result = (True, os.waitstatus_to_exitcode(status))
            try:
                conn.sendall(b"X" + marshal.dumps(result))
            except OSError:
                pass
            return
        try:
            message = conn.recv(2)
        except OSError:
            message = b""
        if len(message) == 2 and message[:1] == b"S":
            try:
                os.kill(pid, message[1])
            except (ProcessLookupError, OSError):
                pass
        elif not message:  # the client died (a timeout kill of the exec): end the run
            _descendants_kill(pid)
            return


def _descendants_kill(run_pid: int) -> None:
    """SIGKILL the run's group and every process left to us (we are their subreaper)."""
    try:
        os.killpg(run_pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    while True:
        for pid in children():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


def children() -> list[int]:
    me = os.getpid()
    found: list[int] = []
    try:
        with open(f"/proc/{me}/task/{me}/children") as handle:
            found = [int(p) for p in handle.read().split()]
    except OSError:
        pass
    return found
