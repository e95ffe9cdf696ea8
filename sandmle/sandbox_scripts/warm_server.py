"""Warm Python fork server: runs INSIDE a sample's sandbox, under the agent's interpreter.

Standard library only: sandmle is not importable in the sandbox. Started once per sample (as
any exec: same uid, cgroup, seccomp, mounts), it says ``ready`` on stdout and serves runs on a
listening unix socket it inherits (fd ``--fd``). It keeps one standby monitor forked, which has
already forked the next run's process from this clean parent (so no fork is on a run's path,
and no state of one run reaches the next); the standby accepts a connection, checks the
request and hands it, fds and all, to that process. The run gets the client's argv, cwd,
environment, umask, rlimits, ignored signals and stdin/stdout/stderr (passed with SCM_RIGHTS),
and ends as a fresh interpreter would: traceback, exit status, non-daemon threads joined,
``atexit``, flushing.

Imports: with ``--eager`` the server imports every ``--preload`` module before it is ready.
Otherwise (on demand) it starts with none and imports a preload module the first time a run's
source names it (``import pandas``, ``from sklearn.ensemble import ...``): the standby hands
such a request back to the server (the bounce), which imports the modules once, for this run
and every later one, and forks a monitor for it. Only modules of the ``--preload`` list are
ever imported in the server, and never with the agent's cwd or paths; a run whose own dir
holds a file or folder named like a module the server has loaded (``joblib.py``) runs cold,
as such a file would shadow that module in a fresh interpreter.

Protocol (client first): request = 4-byte length + marshal((args, cwd, env, umask, rlimits,
ignored signals)) with fds 0-2 attached; the server answers ``R`` (can serve) or ``C`` (run
cold yourself); the client answers ``G``; then the client may send ``S`` + signal byte at any
time; the server ends with ``X`` + marshal((exited, code or signal)). A client that goes
away (the exec killed for time or output) takes the run and all it started with it.
"""

from __future__ import annotations  # any python3 may run this: annotations stay text

# ruff: noqa: E402 - the snapshot below must come before the server's own imports
import sys

_STARTUP_MODULES = frozenset(sys.modules)
"""What any interpreter has loaded before a program's first line: not shadowable by its dir."""

import array
import builtins
import ctypes
import gc
import importlib
import importlib.machinery
import io
import marshal
import os
import select
import signal
import socket
import struct
import types

PR_SET_CHILD_SUBREAPER = 36
STDIO_FDS = 3
_HEADER = struct.Struct("!I")
_MAX_REQUEST = 16 * 1024 * 1024
_MAX_SCAN = 1024 * 1024  # bytes of a run's source read for its imports
_PIPE_SCAN = 65536  # of a piped source (one pipe buffer)
_PIPE_WAIT_S = 0.05  # for the caller's first bytes on a piped stdin
SPLICE_F_NONBLOCK = 2
_BOUNCE_FDS = 5  # the connection, the run's fds 0-2, the request in a memfd
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
_SERVER_ENV = dict(os.environb)


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
    for key in set(env) | set(_SERVER_ENV):
        if _import_time_key(key) and env.get(key) != _SERVER_ENV.get(key):
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


def _rlimits_fit(wanted: list[tuple[int, int]]) -> bool:
    import resource

    inf = resource.RLIM_INFINITY
    for name, (soft, hard) in zip(RLIMITS, wanted, strict=True):
        _, our_hard = resource.getrlimit(getattr(resource, name))
        if our_hard != inf and (hard == inf or hard > our_hard or soft == inf or soft > our_hard):
            return False
    return True


def _check(request: tuple, stdin_fd: int) -> tuple[Job | None, str]:
    args, cwd, env, _umask, rlimits, _ignored = request
    job = parse_args([os.fsdecode(a) for a in args], os.isatty(stdin_fd))
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
    ``sys.path[0]`` would replace in a fresh interpreter (``pandas.py``), if any."""
    loaded = {name.partition(".")[0] for name in sys.modules} - _STARTUP_MODULES
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


def _recv_request(conn: socket.socket) -> tuple[tuple, list[int]]:
    fds = array.array("i")
    data, ancdata, _, _ = conn.recvmsg(65536, socket.CMSG_LEN(STDIO_FDS * fds.itemsize))
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    if len(data) < _HEADER.size or len(fds) != STDIO_FDS:
        raise ConnectionError("bad request")
    (size,) = _HEADER.unpack_from(data)
    if size > _MAX_REQUEST:
        raise ConnectionError("request too large")
    body = bytearray(data[_HEADER.size :])
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ConnectionError("client went away")
        body += chunk
    return marshal.loads(bytes(body)), list(fds)


def _log(line: str) -> None:
    """One line per connection to the server's stderr (a host-side log the tests read)."""
    try:
        os.write(2, f"{line}\n".encode())
    except OSError:
        pass


def _descendants_kill(run_pid: int) -> None:
    """SIGKILL the run's group and every process left to us (we are their subreaper)."""
    try:
        os.killpg(run_pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    while True:
        children = _children()
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _children() -> list[int]:
    me = os.getpid()
    found = []
    try:
        with open(f"/proc/{me}/task/{me}/children") as handle:
            found = [int(p) for p in handle.read().split()]
    except OSError:
        pass
    return found


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


def _standby(fds_: ServerFds, libc: ctypes.CDLL) -> Job | None:
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
    wanted = _wanted(*request) if request is not None else []
    if wanted and _bounce(fds_.peer, wanted, conn, *request):
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
    ours.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, _fd_bytes(stdio))])
    ours.close()
    for fd in stdio:
        os.close(fd)
    _relay(conn, pid)
    os._exit(0)


def _fd_bytes(fds: list[int]) -> bytes:
    return array.array("i", fds).tobytes()


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
        return _recv_request(conn)
    except (OSError, ValueError, EOFError, TypeError):
        return None
    finally:  # the socket's O_NONBLOCK is shared with the process it may be handed to
        conn.settimeout(None)


def _answer(conn: socket.socket, request: tuple, fds: list[int]) -> tuple[bytes, list[int]] | None:
    """Check the request and tell the client; None when it runs cold (or went away)."""
    try:
        conn.settimeout(30)
        job, reason = _check(request, fds[0])
        note = f" (imported {', '.join(_IMPORTED_NOW)})" if _IMPORTED_NOW else ""
        _log(f"cold: {reason}" if job is None else f"warm: {job.kind}{note}")
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
    data = marshal.dumps(request)
    return _HEADER.pack(len(data)) + data, fds


def _await_run(sock: socket.socket) -> Job:
    """In a waiting run's process: take the request its monitor accepted, become that run."""
    try:
        request, fds = _recv_request(sock)
    except (OSError, ValueError, EOFError, TypeError):
        os._exit(0)  # the monitor's client ran cold or went away
    sock.close()
    return _become(request, fds)


def _become(request: tuple, fds: list[int]) -> Job:
    job = parse_args([os.fsdecode(a) for a in request[0]], os.isatty(fds[0]))
    assert job is not None  # the monitor checked it
    _become_run(request, fds)
    return job


# --- imports on demand: a run names a preload module the server has not imported yet --------

_PRELOAD: list[str] = []  # the --preload list, in order
_ATTEMPTED: set[str] = set()  # preload modules this process imported or failed to
_IMPORTED_NOW: list[str] = []  # imported for the run being answered (for the log)
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


def _wanted(request: tuple, fds: list[int]) -> list[str]:
    """Preload modules the run names that this process has not imported yet."""
    job = parse_args([os.fsdecode(a) for a in request[0]], os.isatty(fds[0]))
    missing = [m for m in _PRELOAD if m not in _ATTEMPTED and m not in sys.modules]
    if job is None or not missing:
        return []
    named = referenced_modules(_source(job, os.fsdecode(request[1]), fds[0]))
    return [m for m in missing if any(n == m or n.startswith(m + ".") for n in named)]


def _bounce(
    peer: socket.socket, wanted: list[str], conn: socket.socket, request: tuple, fds: list[int]
) -> bool:
    """Hand the connection back to the server, which imports `wanted` and then serves it;
    False when it cannot be handed (the run is then served from this process as it is)."""
    data = marshal.dumps(request)
    try:
        memfd = os.memfd_create("warm-request", os.MFD_CLOEXEC)
    except (OSError, AttributeError):
        return False
    try:
        os.write(memfd, _HEADER.pack(len(data)) + data)
        handed = [conn.fileno(), *fds, memfd]
        peer.sendmsg(
            [marshal.dumps(wanted)], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, _fd_bytes(handed))]
        )
    except OSError:
        return False
    finally:
        os.close(memfd)
    return True


def _take_bounce(fds_: ServerFds, libc: ctypes.CDLL) -> Job | None:
    """In the server: import what a bounced run named, then fork a monitor that answers it.
    Returns a Job only in that run's process."""
    received = array.array("i")
    try:
        data, ancdata, _, _ = fds_.control.recvmsg(
            65536, socket.CMSG_LEN(_BOUNCE_FDS * received.itemsize)
        )
    except OSError:
        return None
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            received.frombytes(payload[: len(payload) - len(payload) % received.itemsize])
    handed = list(received)
    if len(handed) != _BOUNCE_FDS:
        for fd in handed:
            os.close(fd)
        return None
    conn_fd, stdio, memfd = handed[0], handed[1:4], handed[4]
    try:
        names = marshal.loads(data)
        body = os.pread(memfd, _MAX_REQUEST + _HEADER.size, 0)
        request = marshal.loads(body[_HEADER.size :])
    except (OSError, ValueError, EOFError, TypeError):
        for fd in (conn_fd, *stdio):
            os.close(fd)
        return None
    finally:
        os.close(memfd)
    _IMPORTED_NOW[:] = _preload([m for m in _PRELOAD if m in names])  # only listed ones
    gc.freeze()
    pid = os.fork()
    if pid == 0:
        fds_.close()
        libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        return _monitor(socket.socket(fileno=conn_fd), request, stdio)
    _IMPORTED_NOW.clear()
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
    """Forward the client's signals to the run; report its end; kill it if the client goes."""
    pidfd = os.pidfd_open(pid)
    while True:
        ready, _, _ = select.select([conn, pidfd], [], [])
        if pidfd in ready:
            _, status = os.waitpid(pid, 0)
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


def _become_run(request: tuple, fds: list[int]) -> None:
    """Turn this fresh fork into the process the client asked for (minus running the code)."""
    args, cwd, env, umask, rlimits, ignored = request
    import resource

    os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in set(fds):
        if fd >= STDIO_FDS:
            os.close(fd)
    os.chdir(cwd)
    os.umask(umask)
    for name, limit in zip(RLIMITS, rlimits, strict=True):
        try:
            resource.setrlimit(getattr(resource, name), tuple(limit))
        except (ValueError, OSError):
            pass
    for signum in ignored:
        signal.signal(signum, signal.SIG_IGN)
    os.environ.clear()
    os.environb.update(env)
    _reopen_stdio()
    _reseed()


def _reopen_stdio() -> None:
    """New sys.std* on fds 0-2, built as CPython's startup builds them."""
    # -u is refused (cold) and PYTHONUNBUFFERED matches the server's, so this is the run's.
    buffered = not _SERVER_ENV.get(b"PYTHONUNBUFFERED")
    streams = []
    for fd, name in ((0, "<stdin>"), (1, "<stdout>"), (2, "<stderr>")):
        write = fd != 0
        old = (sys.__stdin__, sys.__stdout__, sys.__stderr__)[fd]
        buffering = 0 if (write and not buffered) else -1
        buf = open(fd, "wb" if write else "rb", buffering, closefd=False)
        raw = buf if buffering == 0 else buf.raw
        raw.name = name
        tty = raw.isatty()
        text = io.TextIOWrapper(
            buf,
            encoding=old.encoding if old else None,
            errors=old.errors if old else None,
            newline="\n",
            line_buffering=buffered and (tty or fd == 2),
            write_through=not buffered,
        )
        text.mode = "w" if write else "r"
        streams.append(text)
    sys.stdin = sys.__stdin__ = streams[0]
    sys.stdout = sys.__stdout__ = streams[1]
    sys.stderr = sys.__stderr__ = streams[2]


def _reseed() -> None:
    """Fresh entropy where a preloaded library seeded itself at import (random reseeds itself)."""
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()
    tempfile = sys.modules.get("tempfile")
    if tempfile is not None:
        tempfile.tempdir = None  # recomputed from this run's TMPDIR


def _fresh_main(job: Job) -> types.ModuleType:
    main = types.ModuleType("__main__")
    main.__dict__.update(__annotations__={}, __builtins__=builtins, __loader__=None, __spec__=None)
    if job.kind == "script":
        path = os.path.abspath(job.target)
        main.__file__ = path
        main.__cached__ = None
        main.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
    else:
        main.__loader__ = importlib.machinery.BuiltinImporter
        if job.kind == "stdin":
            main.__file__ = "<stdin>"
            main.__cached__ = None
    sys.modules["__main__"] = main
    return main


def _compile(job: Job) -> types.CodeType:
    if job.kind == "script":
        path = os.path.abspath(job.target)
        with open(path, "rb") as handle:
            return compile(handle.read(), path, "exec", dont_inherit=True)
    if job.kind == "code":
        return compile(job.target, "<string>", "exec", dont_inherit=True)
    return compile(sys.stdin.buffer.read(), "<stdin>", "exec", dont_inherit=True)


def _set_argv(job: Job) -> None:
    sys.argv = list(job.rest)
    if job.kind == "script":
        sys.path[0] = os.path.dirname(os.path.realpath(job.target))
    else:
        sys.path[0] = ""
    sys.orig_argv = [sys.executable, *([] if job.rest == [""] else job.rest)]
    # Finders of other dirs stay: they re-list a dir whenever its mtime changes.
    sys.path_importer_cache.pop(os.path.dirname(os.path.abspath(__file__)), None)


def _strip_server_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return tb


def run_job(job: Job) -> None:
    """Run the job as `__main__`, then end as a fresh interpreter would. Never returns."""
    _set_argv(job)
    main = _fresh_main(job)
    code, interrupted = _execute(job, main)
    _finish(code, main, interrupted)


def _execute(job: Job, main: types.ModuleType) -> tuple[int, bool]:
    """(exit status, ended by an uncaught KeyboardInterrupt)."""
    try:
        exec(_compile(job), main.__dict__)
    except SystemExit as exit_:
        return _system_exit_status(exit_), False
    except BaseException as error:  # noqa: BLE001 - printed as the interpreter would
        tb = _strip_server_frames(error.__traceback__)
        error.__traceback__ = tb
        sys.last_type, sys.last_value, sys.last_traceback = type(error), error, tb
        _print_uncaught(type(error), error, tb)
        return 1, isinstance(error, KeyboardInterrupt)
    return 0, False


def _system_exit_status(exit_: SystemExit) -> int:
    code = exit_.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF if -(2**63) <= code < 2**63 else 0xFF
    try:
        sys.stderr.write(f"{code}\n")
    except Exception:  # noqa: BLE001 - stderr closed by the program
        pass
    return 1


def _finish(code: int, main: types.ModuleType, interrupted: bool) -> None:
    """What Py_FinalizeEx does that a program can see, without tearing down every module.

    A full finalization of the preloaded libraries touches the whole inherited heap (seconds
    of copy-on-write); the run only needs: non-daemon threads joined, atexit callbacks, its
    objects released (files it left open get flushed and closed), stdio flushed.
    """
    import atexit

    threading = sys.modules.get("threading")
    if threading is not None:
        try:
            threading._shutdown()
        except BaseException as error:  # noqa: BLE001
            _unraisable("threading._shutdown", error)
    atexit._run_exitfuncs()
    if not _flush_stdio():
        code = 120  # CPython's status when flushing stdout at exit fails
    main.__dict__.clear()
    gc.collect()
    _flush_stdio()
    if interrupted:  # as CPython: die of SIGINT so the caller sees the interrupt
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(code)


def _unraisable(where: str, error: BaseException) -> None:
    try:
        sys.stderr.write(f"Exception ignored in: {where}\n")
        sys.__excepthook__(type(error), error, error.__traceback__)
    except Exception:  # noqa: BLE001
        pass


def _flush_stdio() -> bool:
    ok = True
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name, None)
        if stream is None or getattr(stream, "closed", False):
            continue
        try:
            stream.flush()
        except Exception as error:  # noqa: BLE001
            if name == "stdout":
                ok = False
                _unraisable(repr(stream), error)
    return ok


def _print_uncaught(kind: type, error: BaseException, tb: types.TracebackType | None) -> None:
    try:
        sys.excepthook(kind, error, tb)
    except BaseException as hook_error:  # noqa: BLE001
        print("Error in sys.excepthook:", file=sys.stderr)
        sys.__excepthook__(type(hook_error), hook_error, hook_error.__traceback__)
        print("\nOriginal exception was:", file=sys.stderr)
        sys.__excepthook__(kind, error, tb)


def _preload(modules: list[str]) -> list[str]:
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
    return imported


def _reap() -> list[int]:
    reaped = []
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
    _PRELOAD[:] = modules
    if eager:
        _preload(modules)
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
    standby = 0  # the monitor waiting for the next connection
    while True:
        if not standby:
            standby = os.fork()
            if standby == 0:
                job = _standby(fds_, libc)
                if job is not None:
                    return job
                os._exit(0)
        ready, _, _ = select.select([fds_.notify_r, fds_.control], [], [], 1.0)
        if fds_.notify_r in ready and os.read(fds_.notify_r, 1):
            standby = 0
        if fds_.control in ready:
            standby = 0  # it handed its connection back: the next one gets the new imports
            if (job := _take_bounce(fds_, libc)) is not None:
                return job
        if standby in _reap():  # it died before taking a connection
            standby = 0


def main() -> None:
    fd_arg = sys.argv[sys.argv.index("--fd") + 1]
    modules = sys.argv[sys.argv.index("--preload") + 1].split(",")
    eager = "--eager" in sys.argv
    sys.argv = sys.argv[:1]
    job = serve(int(fd_arg), [m for m in modules if m], eager)
    run_job(job)


if __name__ == "__main__":
    main()
