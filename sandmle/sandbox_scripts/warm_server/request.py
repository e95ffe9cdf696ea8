"""What a run asks the warm server for, and whether a fork of the server can serve it.

A request is the client's argv, cwd, environment, umask, rlimits and ignored signals, with its
fds 0-2 attached. A fork serves it only when a fresh interpreter would behave the same: plain
``script.py``/``-c``/``-`` arguments, the import-time environment the server started with,
rlimits within the server's hard limits, and nothing in the run's ``sys.path[0]`` that would
shadow a module the server has loaded.
"""

from __future__ import annotations  # any python3 may run this: annotations stay text

import array
import marshal
import os
import socket
import struct
import sys

STDIO_FDS = 3
HEADER = struct.Struct("!I")
MAX_REQUEST = 2 * 1024 * 1024
"""Bytes of one request: about what execve can carry (ARG_MAX under the default 8 MiB stack);
a larger one is dropped and its client runs cold."""
# Variables read at interpreter start or at a library's import: a run whose value differs
# from the server's would not behave as a fresh process, so it runs cold.
_IMPORT_TIME_PREFIXES = (
    "PYTHON", "OMP_", "OPENBLAS_", "MKL_", "GOTO", "BLIS_", "NUMEXPR_", "VECLIB_", "KMP_",
    "LD_", "MALLOC_", "GLIBC_", "NPY_", "NUMPY_", "SCIPY_", "SKLEARN_", "PANDAS_", "JOBLIB_",
    "LOKY_", "LC_", "MPL", "CUDA_", "ARROW_",
)  # fmt: skip
_IMPORT_TIME_NAMES = ("LANG", "LANGUAGE", "TZ", "HOME", "TMPDIR", "TEMP", "TMP")
RLIMITS = (
    "RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NPROC", "RLIMIT_CORE",
    "RLIMIT_NOFILE", "RLIMIT_STACK", "RLIMIT_DATA",
)  # fmt: skip
"""The limits a run takes from its client, in the client's order (see warm_client)."""
SERVER_ENV = dict(os.environb)
STARTUP_MODULES: set[str] = set()
"""What any interpreter has loaded before a program's first line (the launcher's snapshot):
not shadowable by a run's dir."""
PACKAGE = __name__.rpartition(".")[0]
"""This server's package (``sandmle_warm`` in the sandbox): never a run's module."""
INT_SIZE = array.array("i").itemsize


class Job:
    """What a run's process executes once it has left the server's frames."""

    def __init__(self, kind: str, target: str, rest: list[str]) -> None:
        self.kind = kind  # "script", "code" or "stdin"
        self.target = target
        self.rest = rest


def _import_time_key(key: bytes) -> bool:
    name = key.decode("utf-8", "replace")
    return name.startswith(_IMPORT_TIME_PREFIXES) or name in _IMPORT_TIME_NAMES


def env_mismatch(env: dict[bytes, bytes]) -> str | None:
    """The first import-time variable whose value differs from the server's, if any."""
    for key in set(env) | set(SERVER_ENV):
        if _import_time_key(key) and env.get(key) != SERVER_ENV.get(key):
            return key.decode("utf-8", "replace")
    return None


def parse_args(args: list[str], stdin_is_tty: bool) -> Job | None:
    """The run an argv asks for, or None when only a cold interpreter can serve it."""
    if not args:
        return None if stdin_is_tty else Job("stdin", "", [""])
    first = args[0]
    if first == "-c" and len(args) >= 2:
        return Job("code", args[1], ["-c", *args[2:]])
    if first == "-":
        return None if stdin_is_tty else Job("stdin", "", args)
    if first.startswith("-") or not first:
        return None  # -m, -u, -O, ...: flags the warm parent was not started with
    return Job("script", first, args)


def job_of(request: tuple, stdin_fd: int) -> Job | None:
    """The run a decoded request asks for (see `parse_args`)."""
    return parse_args([os.fsdecode(a) for a in request[0]], os.isatty(stdin_fd))


def _rlimits_fit(wanted: list[tuple[int, int]]) -> bool:
    import resource

    inf = resource.RLIM_INFINITY
    for name, (soft, hard) in zip(RLIMITS, wanted, strict=True):
        _, our_hard = resource.getrlimit(getattr(resource, name))
        if our_hard != inf and (hard == inf or hard > our_hard or soft == inf or soft > our_hard):
            return False
    return True


def check(request: tuple, stdin_fd: int) -> tuple[Job | None, str]:
    """The run to serve, or None and why it runs cold."""
    _args, cwd, env, _umask, rlimits, _ignored = request
    job = job_of(request, stdin_fd)
    if job is None:
        return None, "arguments"
    if (key := env_mismatch(env)) is not None:
        return None, f"environment {key}"
    cwd = os.fsdecode(cwd)
    if not os.path.isdir(cwd):
        return None, "cwd"
    if not _rlimits_fit(rlimits):
        return None, "rlimits"
    if job.kind == "script" and not os.path.isfile(os.path.join(cwd, job.target)):
        return None, "script"  # a missing file, a dir or zip app: the cold error/behaviour
    if (name := _shadowed(job, cwd)) is not None:
        return None, f"shadowed {name}"
    return job, ""


def _path0(job: Job, cwd: str) -> str:
    """The run's ``sys.path[0]``: its script's dir, else its cwd."""
    if job.kind == "script":
        return os.path.dirname(os.path.realpath(os.path.join(cwd, job.target)))
    return cwd


def _shadowed(job: Job, cwd: str) -> str | None:
    """A module this process loaded after start-up that a file or package in the run's
    ``sys.path[0]`` would replace in a fresh interpreter (``pandas.py``), if any. The
    server's own package is no such module: a run never sees it (see run.forget_server)."""
    ours = PACKAGE.partition(".")[0]
    loaded = {name.partition(".")[0] for name in sys.modules} - STARTUP_MODULES - {ours}
    try:
        entries = list(os.scandir(_path0(job, cwd)))
    except OSError:
        return None  # nothing there can shadow anything
    for entry in entries:
        name = entry.name.partition(".")[0]
        if name not in loaded or name == "__main__":
            continue
        if entry.name.endswith((".py", ".pyc", ".so")) or (
            "." not in entry.name and os.path.isfile(os.path.join(entry.path, "__init__.py"))
        ):
            return name
    return None


def fd_bytes(fds: list[int]) -> bytes:
    return array.array("i", fds).tobytes()


def received_fds(ancdata: list[tuple[int, int, bytes]]) -> list[int]:
    """The fds an SCM_RIGHTS message carried."""
    fds = array.array("i")
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    return list(fds)


def recv_request(conn: socket.socket) -> tuple[tuple, list[int]]:
    """Read one request and the fds 0-2 sent with it."""
    data, ancdata, _, _ = conn.recvmsg(65536, socket.CMSG_LEN(STDIO_FDS * INT_SIZE))
    fds = received_fds(ancdata)
    if len(data) < HEADER.size or len(fds) != STDIO_FDS:
        raise ConnectionError("bad request")
    (size,) = HEADER.unpack_from(data)
    if size > MAX_REQUEST:
        raise ConnectionError("request too large")
    body = bytearray(data[HEADER.size :])
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ConnectionError("client went away")
        body += chunk
    return marshal.loads(bytes(body)), fds


def encode_request(request: tuple) -> bytes:
    """A request as `recv_request` reads it (header and body)."""
    data = marshal.dumps(request)
    return HEADER.pack(len(data)) + data
