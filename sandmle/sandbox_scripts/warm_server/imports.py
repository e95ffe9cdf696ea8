"""Imports on demand: a run names a preload module the server has not imported yet.

The standby monitor reads the run's source (without taking it from the run) for the modules
its import statements name; when one is on the ``--preload`` list and not imported yet, the
request goes back to the server, which imports it once, for this run and every later one.
Only listed modules are ever imported, and never with the agent's cwd or paths.
"""

from __future__ import annotations  # any python3 may run this: annotations stay text

import ctypes
import importlib
import os
import select
import sys

from .request import Job, job_of

_MAX_SCAN = 1024 * 1024  # bytes of a run's source read for its imports
_PIPE_SCAN = 65536  # of a piped source (one pipe buffer)
_PIPE_WAIT_S = 0.05  # for the caller's first bytes on a piped stdin
SPLICE_F_NONBLOCK = 2

PRELOAD: list[str] = []  # the --preload list, in order
_ATTEMPTED: set[str] = set()  # preload modules this process imported or failed to
IMPORTED_NOW: list[str] = []  # imported for the run being answered (for the log)
COMPANIONS: dict[str, tuple[str, ...]] = {
    "pandas": ("pandas.io.formats.csvs", "pyarrow.pandas_compat", "zstandard"),
    "sklearn": (
        "narwhals._pandas_like.dataframe",
        "narwhals._pandas_like.namespace",
        "narwhals._interchange.dataframe",
        "narwhals.stable.v2._namespace",
    ),
}
"""Modules a preload library imports lazily on first use of its everyday calls (pandas'
``to_csv``; scikit-learn's checks of a DataFrame go through narwhals): imported in the server
with the library, so that no run imports them again (~25 ms a run, measured by
bench/synth_step_time.py's scripts). One that is not installed is skipped quietly."""
_IMPORT_LINE = None  # compiled on first use: `re` costs nothing once numpy has loaded it


def referenced_modules(source: bytes) -> set[str]:
    """Modules a source's import statements name (``from a.b import c`` gives a.b and
    a.b.c): a hint of what the run will import, never a reason to import anything else."""
    global _IMPORT_LINE
    if _IMPORT_LINE is None:
        import re

        _IMPORT_LINE = re.compile(
            rb"^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t(]+([\w., \t]*)|import[ \t]+([\w., \t]+))",
            re.M,
        )
    found: set[str] = set()
    for base, names, plain in _IMPORT_LINE.findall(source):
        if plain:
            found.update(part.split()[0] for part in plain.decode().split(",") if part.split())
            continue
        package = base.decode()
        found.add(package)
        found.update(
            f"{package}.{part.split()[0]}" for part in names.decode().split(",") if part.split()
        )
    return found


def _source(job: Job, cwd: str, stdin_fd: int) -> bytes:
    """The run's source, or its first part, read without taking it from the run."""
    try:
        if job.kind == "code":
            return os.fsencode(job.target)
        if job.kind == "script":
            return _read_regular(os.path.join(cwd, job.target))
        return _peek_stdin(stdin_fd)
    except (OSError, ValueError):
        return b""


def _read_regular(path: str) -> bytes:
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO never blocks
    try:
        return os.read(fd, _MAX_SCAN) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    finally:
        os.close(fd)


def _peek_stdin(fd: int) -> bytes:
    """A regular file: read at its offset (which stays); a pipe: a copy of what it holds
    (tee(2) leaves the bytes in it for the run)."""
    import stat

    mode = os.fstat(fd).st_mode
    if stat.S_ISREG(mode):
        return os.pread(fd, _MAX_SCAN, os.lseek(fd, 0, os.SEEK_CUR))
    if not stat.S_ISFIFO(mode):
        return b""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    poller.poll(int(_PIPE_WAIT_S * 1000))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.tee.argtypes = (ctypes.c_int, ctypes.c_int, ctypes.c_size_t, ctypes.c_uint)
    libc.tee.restype = ctypes.c_ssize_t
    read_end, write_end = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        copied = libc.tee(fd, write_end, _PIPE_SCAN, SPLICE_F_NONBLOCK)
        return os.read(read_end, copied) if copied > 0 else b""
    finally:
        os.close(read_end)
        os.close(write_end)


def wanted(request: tuple, fds: list[int]) -> list[str]:
    """Preload modules the run names that this process has not imported yet."""
    job = job_of(request, fds[0])
    missing = [m for m in PRELOAD if m not in _ATTEMPTED and m not in sys.modules]
    if job is None or not missing:
        return []
    named = referenced_modules(_source(job, os.fsdecode(request[1]), fds[0]))
    return [m for m in missing if any(n == m or n.startswith(m + ".") for n in named)]


def preload(modules: list[str]) -> list[str]:
    """Import the modules not tried yet (from the server's own cwd and path); the imported."""
    imported = []
    for name in modules:
        if name in _ATTEMPTED:
            continue
        _ATTEMPTED.add(name)
        try:
            importlib.import_module(name)
            imported.append(name)
        except Exception as error:  # noqa: BLE001 - a missing library only stays cold
            print(f"warm: cannot preload {name}: {error!r}", file=sys.stderr)
            continue
        _companions(name.partition(".")[0])
    return imported


def _companions(package: str) -> None:
    """Import what ``package`` loads lazily on first use (`COMPANIONS`), once."""
    for name in COMPANIONS.pop(package, ()):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001, S110 - an optional backend the run would lack too
            pass
