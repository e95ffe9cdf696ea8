"""Bounded grading: each submission is graded in a forked child with a time and memory cap.

An agent's submission must not be able to stall or exhaust the host that grades it. A small
server process imports pandas, the metrics and each grader in use once, then forks one child
per request; the child sets ``RLIMIT_AS``/``RLIMIT_CPU``, grades with the grading core and sends
the report back. Forking a warm, single-threaded server costs milliseconds per call, where
starting a fresh interpreter would cost a second of imports. The caller kills a child that
runs past the wall-time limit. A limit hit or a crash is a grader error (``GRADER_ERROR``),
never the agent's invalid submission.
"""

from __future__ import annotations

import atexit
import gc
import io
import os
import resource
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from multiprocessing.connection import Client, Connection
from pathlib import Path

from sandmle.errors import SandmleError
from sandmle.harness.competition import Competition
from sandmle.harness.grading.reading import read_csv_reference
from sandmle.harness.grading.registry import get_grader
from sandmle.harness.grading.report import (
    GRADER_ERROR,
    CompetitionReport,
    column_limit,
    competition_thresholds,
    grade_csv,
    invalid_report,
    load_answers,
)

TIMEOUT_ENV = "SANDMLE_GRADE_TIMEOUT_S"
MEMORY_ENV = "SANDMLE_GRADE_MEMORY_MB"
DEFAULT_TIMEOUT_S = 1800.0
"""Wall time one grading may take (MLE-bench's largest graders need a few minutes)."""
DEFAULT_MEMORY_MB = 8 * 1024
"""Address space one grading may map (a 5.7M-row image submission needs about 2 GB)."""
WARM_ANSWERS_MAX_BYTES = 16 * 1024**2
"""Answers up to this size stay parsed in the server (larger ones are read per grading)."""
_SINGLE_THREAD = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
_GRADING: ContextVar[Competition | None] = ContextVar("sandmle_grading", default=None)


@contextmanager
def grading(competition: Competition) -> Iterator[None]:
    """Name the competition being graded, for graders that need its folder (not just its
    answers): a release's evaluator runs in a copy of the public folder. Bounded grading
    sets it; a caller of ``grade_csv``/``grade_frame`` may too."""
    token = _GRADING.set(competition)
    try:
        yield
    finally:
        _GRADING.reset(token)


def graded_competition() -> Competition | None:
    """The competition set by :func:`grading`, if any."""
    return _GRADING.get()


@dataclass(frozen=True)
class GradingLimits:
    """Caps for one bounded grading."""

    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mb: int = DEFAULT_MEMORY_MB

    @classmethod
    def from_env(cls) -> GradingLimits:
        """Defaults, overridden by ``$SANDMLE_GRADE_TIMEOUT_S`` and ``$SANDMLE_GRADE_MEMORY_MB``."""
        try:
            timeout = float(os.environ.get(TIMEOUT_ENV) or DEFAULT_TIMEOUT_S)
            memory = int(os.environ.get(MEMORY_ENV) or DEFAULT_MEMORY_MB)
        except ValueError as exc:
            raise SandmleError(f"{TIMEOUT_ENV}/{MEMORY_ENV} must be numbers: {exc}") from None
        return cls(timeout_s=timeout, memory_mb=memory)


def grade_csv_bounded(
    submission_path: str | Path, competition: Competition, limits: GradingLimits | None = None
) -> CompetitionReport:
    """:func:`grade_csv` in a forked child under ``limits`` (blocking; call from a thread)."""
    limits = limits or GradingLimits.from_env()
    try:
        with _server().connect() as conn:
            conn.send((str(submission_path), competition, limits.memory_mb, limits.timeout_s))
            child = conn.recv()
            if not conn.poll(limits.timeout_s):
                _kill(child)
                problem = f"grading ran past its {limits.timeout_s:g} s time limit"
                return _limit_report(competition, submission_path, problem)
            kind, payload = conn.recv()
    except (EOFError, OSError):  # a signal (RLIMIT_CPU, the OOM killer, a segfault) ended it
        return _limit_report(competition, submission_path, "the grading process died")
    if kind == "memory":
        problem = f"grading needed more than its {limits.memory_mb} MiB memory limit"
        return _limit_report(competition, submission_path, problem)
    if kind == "error":
        raise SandmleError(payload)  # a broken competition folder, as grade_csv raises it
    if kind == "crash":
        return _limit_report(competition, submission_path, f"grading crashed: {payload}")
    return payload


def _limit_report(
    competition: Competition, submission_path: str | Path, problem: str
) -> CompetitionReport:
    reason = f"{GRADER_ERROR} ({problem}; not the submission's fault)"
    return invalid_report(competition, submission_path, reason)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


class _Server:
    """The warm fork server, started on first use and stopped with this process."""

    def __init__(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="sandmle-grader-")  # 0700: only we may connect
        self.address = os.path.join(self._dir, "socket")
        env = os.environ | dict.fromkeys(_SINGLE_THREAD, "1")
        self._process = subprocess.Popen(
            [sys.executable, "-m", __name__, self.address],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        assert self._process.stdout is not None
        if self._process.stdout.readline().strip() != b"ready":
            raise SandmleError("the grading server failed to start; see its stderr above")
        atexit.register(self.stop)

    def alive(self) -> bool:
        return self._process.poll() is None

    def connect(self) -> Connection:
        return Client(self.address, family="AF_UNIX")

    def stop(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()  # the server exits when its stdin closes
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
        for name in os.listdir(self._dir):
            os.unlink(os.path.join(self._dir, name))
        os.rmdir(self._dir)


_lock = threading.Lock()
_running: _Server | None = None


def _server() -> _Server:
    global _running
    with _lock:
        if _running is None or not _running.alive():
            _running = _Server()
        return _running


def _serve(address: str) -> None:
    """Server loop: fork a child per request; exit when the parent closes our stdin."""
    get_grader("standard")
    read_csv_reference(io.StringIO("id,label\na,1.5\n"))  # pandas' lazy imports, once
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(64)
    print("ready", flush=True)
    os.dup2(2, 1)  # nobody reads our stdout after this: a grader's prints go to stderr
    while True:
        ready, _, _ = select.select([sys.stdin, listener], [], [], 1.0)
        _reap()  # waited for, so their CPU time shows in our rusage (bench/bounded_grading.py)
        if sys.stdin in ready:
            return
        if listener not in ready:
            continue
        accepted, _ = listener.accept()
        conn = Connection(accepted.detach())
        request = conn.recv()
        _warm_grader(request[1])
        if os.fork() == 0:
            listener.close()
            _child(conn, request)
        conn.close()


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _warm_grader(competition: Competition) -> None:
    # A plugin grader (a benchmark's) is imported here once, not in every child; the server
    # stays as small as the graders in use, and a smaller heap forks faster.
    try:
        get_grader(competition.config.grader.name)
        if competition.answers_path.stat().st_size <= WARM_ANSWERS_MAX_BYTES:
            load_answers(competition)  # cached here, so children fork with it parsed
        competition_thresholds(competition)
        column_limit(competition)
    except Exception:  # noqa: BLE001 - the child meets the same error and reports it
        return
    gc.freeze()  # keep the warm heap out of the children's collections: fewer copied pages


def _child(conn: Connection, request: tuple) -> None:
    code = 0
    try:
        path, competition, memory_mb, timeout_s = request
        conn.send(os.getpid())
        limit = memory_mb * 1024**2
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        cpu = int(timeout_s) + 1  # a backstop, should the caller vanish
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        conn.send(_grade(path, competition))
    except BaseException:  # noqa: BLE001 - the child must always exit, never return to the loop
        code = 1
    finally:
        os._exit(code)


def _grade(path: str, competition: Competition) -> tuple[str, object]:
    try:
        with grading(competition):
            return "report", grade_csv(path, competition)
    except MemoryError:
        return "memory", None
    except SandmleError as exc:
        return "error", str(exc)
    except Exception as exc:  # outside the grader's own guard: still not the agent's fault
        return "crash", f"{type(exc).__name__}: {exc}".splitlines()[0]


if __name__ == "__main__":
    # Serve from the importable module, not __main__, so graders share its grading() context.
    from sandmle.harness.grading.bounded import _serve as serve

    serve(sys.argv[1])
