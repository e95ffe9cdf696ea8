"""A run's process: become the process the client asked for, run its code, end as Python does.

The process is a fork of the server. Before the run's code it takes the client's fds 0-2,
cwd, umask, rlimits, ignored signals and environment, gets fresh ``sys.std*`` streams and
random state, a fresh ``__main__``, the run's argv and ``sys.path[0]``, and forgets the
server's own modules (`forget_server`). After it: traceback, exit status, non-daemon threads
joined, ``atexit``, flushing, as a fresh interpreter ends.
"""

from __future__ import annotations  # any python3 may run this: annotations stay text

import builtins
import gc
import importlib.machinery
import io
import os
import signal
import sys
import types

from .request import PACKAGE, RLIMITS, SERVER_ENV, STDIO_FDS, Job

_HERE = os.path.dirname(os.path.abspath(__file__))
"""The server's package dir (its launcher sits in the dir above)."""


def become_run(request: tuple, fds: list[int]) -> None:
    """Turn this fresh fork into the process the client asked for (minus running the code)."""
    _args, cwd, env, umask, rlimits, ignored = request
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
    buffered = not SERVER_ENV.get(b"PYTHONUNBUFFERED")
    streams = []
    for fd, name in ((0, "<stdin>"), (1, "<stdout>"), (2, "<stderr>")):
        write = fd != 0
        old = (sys.__stdin__, sys.__stdout__, sys.__stderr__)[fd]
        buffering = 0 if (write and not buffered) else -1
        buf = open(fd, "wb" if write else "rb", buffering, closefd=False)
        raw = buf.raw if isinstance(buf, (io.BufferedReader, io.BufferedWriter)) else buf
        if isinstance(raw, io.FileIO):  # always: open() on an fd makes a FileIO
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
        text.mode = "w" if write else "r"  # type: ignore[misc]  # as CPython's create_stdio
        streams.append(text)
    # The stubs call sys.__std*__ final; the interpreter's startup sets them, and so do we.
    sys.stdin = sys.__stdin__ = streams[0]  # type: ignore[misc]
    sys.stdout = sys.__stdout__ = streams[1]  # type: ignore[misc]
    sys.stderr = sys.__stderr__ = streams[2]  # type: ignore[misc]


def _reseed() -> None:
    """Fresh entropy where a preloaded library seeded itself at import (random reseeds itself)."""
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()
    tempfile = sys.modules.get("tempfile")
    if tempfile is not None:
        vars(tempfile)["tempdir"] = None  # recomputed from this run's TMPDIR


def _fresh_main(job: Job) -> types.ModuleType:
    main = types.ModuleType("__main__")
    main.__dict__.update(__annotations__={}, __builtins__=builtins, __loader__=None, __spec__=None)
    if job.kind == "script":
        path = os.path.abspath(job.target)
        loader = importlib.machinery.SourceFileLoader("__main__", path)
        main.__dict__.update(__file__=path, __cached__=None, __loader__=loader)
    else:
        main.__loader__ = importlib.machinery.BuiltinImporter
        if job.kind == "stdin":
            main.__dict__.update(__file__="<stdin>", __cached__=None)
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


def forget_server() -> None:
    """Leave a run no way to reach the server's code by import: its modules leave
    ``sys.modules`` (their functions keep their globals) and every path under the warm dir
    the importer cache (``sys.path[0]``, the warm dir, is already the run's). A run that imports a module
    named like one of them gets its own, as in a fresh interpreter; nothing here imports our
    package again after this."""
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]
    # Finders of other dirs stay: they re-list a dir whenever its mtime changes.
    warm_dir = os.path.dirname(_HERE)  # the launcher's, cached at start-up too
    for key in [
        k for k in sys.path_importer_cache if k == warm_dir or k.startswith(warm_dir + "/")
    ]:
        del sys.path_importer_cache[key]


def _strip_server_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    while tb is not None and os.path.dirname(tb.tb_frame.f_code.co_filename) == _HERE:
        tb = tb.tb_next
    return tb


def run_job(job: Job) -> None:
    """Run the job as `__main__`, then end as a fresh interpreter would. Never returns."""
    _set_argv(job)
    forget_server()
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


def _print_uncaught(
    kind: type[BaseException], error: BaseException, tb: types.TracebackType | None
) -> None:
    try:
        sys.excepthook(kind, error, tb)
    except BaseException as hook_error:  # noqa: BLE001
        print("Error in sys.excepthook:", file=sys.stderr)
        sys.__excepthook__(type(hook_error), hook_error, hook_error.__traceback__)
        print("\nOriginal exception was:", file=sys.stderr)
        sys.__excepthook__(kind, error, tb)
