"""Serving the app safely: loopback by default, a token elsewhere, log dirs kept under the roots.

The CLI passes the served roots and, for a non-loopback address, a token to the Streamlit
process in the environment (``ROOTS_ENV``, ``TOKEN_ENV``); the app refuses any log dir that
does not resolve under a root, and shows nothing until the token is given as ``?token=``.
The server runs in its own process group, which ends with the command on SIGTERM, SIGINT or
SIGHUP, and (Linux) when the command dies.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

ROOTS_ENV = "SANDMLE_LEADERBOARD_ROOTS"
"""The served roots, one a line (a URL holds ``:``): the only folders the log-dir box opens."""
TOKEN_ENV = "SANDMLE_LEADERBOARD_TOKEN"
"""The token a visitor must give (``?token=``); unset on loopback, where none is asked."""
TOKEN_PARAM = "token"
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
STOP_GRACE_S = 3.0
"""Seconds the server's group has to end after SIGTERM before it is killed."""


def exposure_warning(host: str, port: int, token: str) -> str:
    """What the command prints before serving beyond loopback."""
    return (
        f"warning: serving on {host}, reachable by other machines; the logs are readable by "
        f"anyone with the token. Open http://{host}:{port}/?{TOKEN_PARAM}={token}"
    )


def _resolved(path: str) -> Path:
    return Path(path).expanduser().resolve()


def confine(dirs: Sequence[str], roots: Sequence[str]) -> tuple[list[str], list[str]]:
    """``dirs`` split into those under a root (symlinks resolved) and those refused.

    A URL (``s3://...``) is kept only under a URL root it starts with. No roots: all kept.
    """
    if not roots:
        return list(dirs), []
    local = [_resolved(r) for r in roots if "://" not in r]
    remote = [r.rstrip("/") + "/" for r in roots if "://" in r]
    kept: list[str] = []
    refused: list[str] = []
    for entry in dirs:
        if "://" in entry:
            inside = any((entry.rstrip("/") + "/").startswith(r) for r in remote)
        else:
            path = _resolved(entry)
            inside = any(path == root or path.is_relative_to(root) for root in local)
        (kept if inside else refused).append(entry)
    return kept, refused


def roots_value(dirs: Sequence[str | Path]) -> str:
    return "\n".join(map(str, dirs))


def served_roots(environ: dict[str, str]) -> list[str]:
    return [d for d in environ.get(ROOTS_ENV, "").splitlines() if d]


def _die_with_parent() -> None:  # runs in the child between fork and exec
    if sys.platform == "linux":
        pr_set_pdeathsig = 1
        ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGTERM)


def stop_group(proc: subprocess.Popen, grace_s: float = STOP_GRACE_S) -> None:
    """SIGTERM to the server's whole process group, SIGKILL if it is still there after grace."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, grace_s)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_server(command: list[str], env: dict[str, str]) -> int:
    """Run ``command`` in its own process group until it exits or this process is signalled.

    The handler only forwards SIGTERM to the group; the loop below waits, and kills the group
    if it outlives the grace period (waiting inside a handler would race the loop's wait).
    """
    proc = subprocess.Popen(command, env=env, start_new_session=True, preexec_fn=_die_with_parent)
    stopping: list[int] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stopping.append(signum)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)

    handlers = {sig: signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
    try:
        code = _wait(proc, stopping)
    finally:
        stop_group(proc)  # the server may have left children of its own
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    return 128 + stopping[0] if stopping else code


def _wait(proc: subprocess.Popen, stopping: list[int]) -> int:
    deadline = None
    while True:
        try:
            return proc.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            pass
        if stopping and deadline is None:
            deadline = time.monotonic() + STOP_GRACE_S
        if deadline is not None and time.monotonic() > deadline:
            stop_group(proc)
