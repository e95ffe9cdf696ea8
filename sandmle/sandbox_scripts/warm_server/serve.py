"""The server's loop: say ready, keep a standby monitor forked, import what bounced runs name.

Entered from the launcher (``server.py`` in the warm dir) with the modules its interpreter had
loaded before the program's first line. Returns only in a run's process, which then runs
the job (`main`).
"""

from __future__ import annotations  # any python3 may run this: annotations stay text

import ctypes
import gc
import os
import select
import signal
import socket
import sys

from .imports import PRELOAD, preload
from .monitor import OURS, ServerFds, children, forget_wakeup, standby, take_bounce
from .request import STARTUP_MODULES, Job
from .run import run_job

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
_SCAN_S = 1.0  # the orphan scan's period when no child dies (a monitor's death wakes it)


def _reap() -> list[int]:
    reaped: list[int] = []
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid == 0:
            return reaped
        OURS.discard(pid)
        reaped.append(pid)


def kill_orphans() -> None:
    """SIGKILL every child this server did not fork: a run (or its child) whose monitor was
    killed is reparented here (we are a subreaper), and must die with its run."""
    for pid in children():
        if pid not in OURS:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def harden(libc: ctypes.CDLL) -> None:
    """Before the first fork: no run can open this process's (or a sibling run's) memory or
    fds through /proc, nor copy its fds (non-dumpable, inherited by every fork), and every
    process a run leaves behind comes back to us (subreaper)."""
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _child_wakeup() -> int:
    """A pipe a byte lands in whenever a child dies (so a killed monitor's orphans die now)."""
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    return wake_r


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass
    except BlockingIOError:
        pass


def serve(listen_fd: int, modules: list[str], eager: bool) -> Job:
    """Import the preload modules (eager) or none yet, say ready, then keep a standby monitor
    (and its run's process) forked for the next connection, and import what bounced runs
    name. Returns only in a run's process."""
    os.chdir("/")  # the server never resolves anything against the agent's dirs
    PRELOAD[:] = modules
    if eager:
        preload(modules)
    gc.freeze()  # runs' collections skip the preloaded heap (no copy-on-write of it)
    libc = ctypes.CDLL(None, use_errno=True)
    harden(libc)
    listener = socket.socket(fileno=listen_fd)
    listener.setblocking(True)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    os.close(devnull)
    fds_ = ServerFds(listener)
    wake = _child_wakeup()
    waiting = 0  # the standby monitor waiting for the next connection
    while True:
        if not waiting:
            waiting = os.fork()
            if waiting == 0:
                forget_wakeup(wake)
                job = standby(fds_, libc)
                if job is not None:
                    return job
                os._exit(0)
            OURS.add(waiting)
        watched = [fds_.notify_r, fds_.control.fileno(), wake]
        ready, _, _ = select.select(watched, [], [], _SCAN_S)
        if fds_.notify_r in ready and os.read(fds_.notify_r, 1):
            waiting = 0
        if fds_.control.fileno() in ready:
            waiting = 0  # it handed its connection back: the next one gets the new imports
            if (job := take_bounce(fds_, libc, wake)) is not None:
                return job
        if wake in ready:
            _drain(wake)
        if waiting in _reap():  # it died before taking a connection
            waiting = 0
        kill_orphans()


def main(startup_modules: frozenset[str]) -> None:
    """Serve (the arguments: ``--fd N --preload a,b,c [--eager]``), then run the job."""
    STARTUP_MODULES.update(startup_modules)
    fd_arg = sys.argv[sys.argv.index("--fd") + 1]
    modules = sys.argv[sys.argv.index("--preload") + 1].split(",")
    eager = "--eager" in sys.argv
    sys.argv = sys.argv[:1]
    job = serve(int(fd_arg), [m for m in modules if m], eager)
    run_job(job)
