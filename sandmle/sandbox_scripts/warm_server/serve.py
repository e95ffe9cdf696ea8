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
import socket
import sys

from .imports import PRELOAD, preload
from .monitor import ServerFds, standby, take_bounce
from .request import STARTUP_MODULES, Job
from .run import run_job


def _reap() -> list[int]:
    reaped: list[int] = []
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid == 0:
            return reaped
        reaped.append(pid)


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
    listener = socket.socket(fileno=listen_fd)
    listener.setblocking(True)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    os.close(devnull)
    fds_ = ServerFds(listener)
    waiting = 0  # the standby monitor waiting for the next connection
    while True:
        if not waiting:
            waiting = os.fork()
            if waiting == 0:
                job = standby(fds_, libc)
                if job is not None:
                    return job
                os._exit(0)
        ready, _, _ = select.select([fds_.notify_r, fds_.control.fileno()], [], [], 1.0)
        if fds_.notify_r in ready and os.read(fds_.notify_r, 1):
            waiting = 0
        if fds_.control.fileno() in ready:
            waiting = 0  # it handed its connection back: the next one gets the new imports
            if (job := take_bounce(fds_, libc)) is not None:
                return job
        if waiting in _reap():  # it died before taking a connection
            waiting = 0


def main(startup_modules: frozenset[str]) -> None:
    """Serve (the arguments: ``--fd N --preload a,b,c [--eager]``), then run the job."""
    STARTUP_MODULES.update(startup_modules)
    fd_arg = sys.argv[sys.argv.index("--fd") + 1]
    modules = sys.argv[sys.argv.index("--preload") + 1].split(",")
    eager = "--eager" in sys.argv
    sys.argv = sys.argv[:1]
    job = serve(int(fd_arg), [m for m in modules if m], eager)
    run_job(job)
