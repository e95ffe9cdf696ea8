"""Warm Python: one fork server per sample, so an agent's ``python`` skips the heavy imports.

At sample start (or at the sample's first exec that runs Python, see `WarmPythonConfig.start`)
the sandbox starts the fork server (``sandbox_scripts/warm_server/``) under the agent's Python,
as any exec (same uid, cgroup, seccomp, mounts, limits). It forks a fresh process from that
clean parent for each run (never reusing one), so a run costs a fork instead of an interpreter
start plus the numpy/pandas/scikit-learn/scipy imports. By default the server imports a library of its
preload list the first time a run's source names it (once per sample, for that run and every
later one), so a sample pays only for what its runs use; ``imports="eager"`` imports the whole
list up front instead (for hosts whose CPU idles while the model thinks).

The agent keeps calling ``python``: a shim named ``python``/``python3`` leads PATH and hands
``python script.py``, ``python -c`` and ``python -`` to the server over a unix socket (fds
passed with SCM_RIGHTS); anything else (``-m``, another interpreter, a venv the agent made,
an import-time environment change, a file that shadows a loaded module, a dead server) runs
cold on the real interpreter. A run that comes while the server still imports waits for it
rather than importing alongside it.

Why one server per sample and not one template for many: a process cannot enter another
sandbox's mount and PID namespaces without privileges the sandbox denies (``setns`` and the
mount calls are in the seccomp deny list), so a template shared across samples would have to
run outside every sandbox and rebuild each one's isolation itself.

Host side, here: the per-sample warm dir (shims, server script, socket), starting the server
and listening on its socket from the start, and stopping it.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from sandmle.sandbox_scripts import SCRIPTS_DIR

logger = logging.getLogger(__name__)

WARM_DIR = "/opt/sandmle-warm"
"""Where the warm dir is mounted (read-only) inside the sandbox."""
SHIM_DIR = f"{WARM_DIR}/bin"
"""Leads the sandbox PATH when warm Python is on."""
SHIM_NAMES = ("python", "python3")
SOCKET_NAME = "sock"
SERVER_SCRIPT = "server.py"
"""The server's launcher in the warm dir (``warm_server/launcher.py``)."""
WARM_PACKAGE = "sandmle_warm"
"""The server's package in the warm dir, beside its launcher (``sandbox_scripts/warm_server``):
a name no agent's code imports, and its modules leave a run's ``sys.modules`` anyway."""
SERVER_SOURCE = SCRIPTS_DIR / "warm_server"
_LAUNCHER = "launcher.py"
HOST_DIR_NAME = "warm"
LOG_NAME = "warm-server.log"
MAX_LOG_BYTES = 1024**2
"""Host bytes of a sample's server log: the log lives on the host, outside the sample's
quota, and a run can make the server write (one line per connection)."""
READY_LINE = b"ready\n"
DEFAULT_PRELOAD = (
    "numpy", "pandas", "scipy", "scipy.stats", "scipy.sparse", "scipy.ndimage", "sklearn",
    "sklearn.ensemble", "sklearn.linear_model", "sklearn.model_selection", "sklearn.metrics",
    "sklearn.preprocessing", "sklearn.impute", "sklearn.pipeline", "sklearn.compose",
    "sklearn.dummy", "sklearn.tree", "sklearn.neighbors", "sklearn.svm", "sklearn.naive_bayes",
    "sklearn.decomposition", "sklearn.feature_extraction.text", "PIL.Image",
)  # fmt: skip
"""Libraries agents' scripts commonly import, none with import-time effects on other modules
(``sklearn.experimental.*`` would enable estimators for every later run, so it is not here).
On demand, only those a run names are imported; eager, all."""
_MAX_SHEBANG = 200  # the kernel reads 256 bytes of a #! line (128 before Linux 5.1)

Spawn = Callable[[list[str], Sequence[int], int], subprocess.Popen]
"""Starts `cmd` in the sample's sandbox in the background, keeping `pass_fds` open, with
stderr to the given fd; stdout must be a pipe."""


class WarmPythonConfig(BaseModel, frozen=True):
    """Warm Python settings of the bwrap sandbox."""

    enabled: bool = False
    """Start a warm server per sample and lead PATH with the ``python`` shim. Off for a bare
    sandbox; every benchmark task turns it on (``-T warm_python=false`` to turn it off)."""

    preload: tuple[str, ...] = DEFAULT_PRELOAD
    """Modules the server imports once; a module the agent's Python lacks is skipped."""

    start: Literal["sample", "first_python"] = "sample"
    """When the server starts: at sample start, in the background (its interpreter start
    overlaps the agent's first turns), or at the sample's first exec that names ``python``
    (that run waits for it; a sample that never runs Python costs nothing)."""

    imports: Literal["on_demand", "eager"] = "on_demand"
    """``on_demand``: a preload module is imported in the server the first time a run names
    it (that run waits for the import, which costs it what its own import would; later ones
    do not; unused modules cost nothing). ``eager``: all of them before the server is ready
    (runs that come meanwhile wait for it)."""

    cold_trivial: bool = True
    """A run whose source names none of the preload modules (``python -c pass``, a script
    importing only the standard library) goes straight to the real interpreter: a fork of
    the server saves nothing there, and the client's own start would cost more. Off: every
    servable run goes to the server (the tests of the server's fidelity do that)."""


def wants_server(config: WarmPythonConfig, cmd: list[str]) -> bool:
    """Whether this exec starts a not-yet-started server: it may run ``python``."""
    return config.enabled and config.start == "first_python" and any("python" in a for a in cmd)


def skip_shim(config: WarmPythonConfig, python: str, cmd: list[str]) -> list[str]:
    """``cmd`` with the real interpreter in place of the shim, where the shim would exec it
    at once (flags but ``-c``/``-``, or ``-c`` code naming no preload module): the same run,
    one ``sh`` exec fewer, so a trivial exec costs what it costs without warm Python.

    >>> config = WarmPythonConfig(enabled=True)
    >>> skip_shim(config, "/py", ["python", "-c", "pass"])
    ['/py', '-c', 'pass']
    >>> skip_shim(config, "/py", ["python3", "-c", "import pandas"])
    ['python3', '-c', 'import pandas']
    >>> skip_shim(config, "/py", ["python", "solution.py"])
    ['python', 'solution.py']
    """
    if not (config.enabled and config.cold_trivial) or len(cmd) < 2 or cmd[0] not in SHIM_NAMES:
        return cmd
    flag = cmd[1]
    if flag == "-c":
        names = {module.partition(".")[0] for module in config.preload}
        trivial = len(cmd) > 2 and not any(name in cmd[2] for name in names)
    else:
        trivial = flag.startswith("-") and flag != "-"
    return [python, *cmd[1:]] if trivial else cmd


def _shim_text(python: str, config: WarmPythonConfig) -> str:
    """The shim: the client script, started by the agent's Python with ``-S -I`` (fast,
    stdlib only), behind a sh front that sends trivial runs cold (`cold_trivial`)."""
    client = (SCRIPTS_DIR / "warm_client.py").read_text()
    interpreter = python
    to_client = f'exec "$py" -SI {WARM_DIR}/client.py "$@"\n'
    if not config.cold_trivial:
        if len(interpreter) < _MAX_SHEBANG and not any(c.isspace() for c in interpreter):
            return f"#!{interpreter} -SI\n{client}"
        # A path the kernel's #! line cannot hold: go through sh (one more exec).
        return f"#!/bin/sh\npy={shlex.quote(interpreter)}\n{to_client}"
    names = sorted({module.partition(".")[0] for module in config.preload})
    patterns = "|".join(f"*{name}*" for name in names)
    grep = " ".join(f"-e {shlex.quote(name)}" for name in names)
    # sh costs ~1 ms; a run here that names none of the modules is the interpreter itself.
    return (
        "#!/bin/sh\n"
        "# sandmle's warm Python shim: a run naming none of the server's modules runs cold at\n"
        "# once; -m and other flags too; the rest goes to the client (warm_client.py).\n"
        f"py={shlex.quote(interpreter)}\n"
        'case "$1" in\n'
        f'-c) case "$2" in {patterns}) ;; *) exec "$py" "$@" ;; esac ;;\n'
        "-|'') ;;\n"
        '-*) exec "$py" "$@" ;;\n'
        f'*) if [ -f "$1" ] && ! grep -qsF {grep} -- "$1"; then exec "$py" "$@"; fi ;;\n'
        "esac\n"
        f"{to_client}"
    )


def prepare_warm_dir(root: Path, python: str, config: WarmPythonConfig) -> Path:
    """Write the shims and the server into ``<root>/warm`` (mounted read-only at WARM_DIR):
    ``server.py`` (the launcher), ``sandmle_warm/`` (the server's package), ``client.py``."""
    host = root / HOST_DIR_NAME
    package = host / WARM_PACKAGE
    for folder in (host, host / "bin", package):
        folder.mkdir(parents=True)
        folder.chmod(0o755)
    copies = {SERVER_SOURCE / _LAUNCHER: host / SERVER_SCRIPT}
    copies[SCRIPTS_DIR / "warm_client.py"] = host / "client.py"
    for source in sorted(SERVER_SOURCE.glob("*.py")):
        if source.name != _LAUNCHER:
            copies[source] = package / source.name
    for source, target in copies.items():
        shutil.copyfile(source, target)
        target.chmod(0o644)
    text = _shim_text(python, config)
    for name in SHIM_NAMES:
        shim = host / "bin" / name
        shim.write_text(text)
        shim.chmod(0o755)
    return host


class ServerLog:
    """The server's stderr, copied into its host log up to MAX_LOG_BYTES; past that the pipe
    is still drained (a blocked write would stall the server), with one line saying so."""

    def __init__(self, read_fd: int, path: Path) -> None:
        self.read_fd = read_fd
        self.path = path
        self.busy = threading.Lock()  # held while a chunk read is being written

    def copy(self) -> None:
        written = 0
        with open(self.path, "ab", buffering=0) as log:
            while True:
                try:
                    chunk = os.read(self.read_fd, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                with self.busy:
                    if written < MAX_LOG_BYTES:
                        log.write(chunk[: MAX_LOG_BYTES - written])
                        written += len(chunk)
                        if written >= MAX_LOG_BYTES:
                            log.write(f"\n[log cut at {MAX_LOG_BYTES} bytes]\n".encode())
        fd, self.read_fd = self.read_fd, -1
        os.close(fd)

    def sync(self, limit_s: float = 5.0) -> None:
        """Wait until what the server has written so far is in the file (for readers)."""
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            try:
                pending = struct.unpack("i", fcntl.ioctl(self.read_fd, termios.FIONREAD, b"\0" * 4))
            except OSError:
                return  # closed: all copied
            if pending[0] == 0 and self.busy.acquire(blocking=False):
                self.busy.release()
                return
            time.sleep(0.001)


@dataclass
class WarmServer:
    """A sample's running warm server."""

    process: subprocess.Popen
    host_dir: Path
    ready: threading.Event
    log: ServerLog
    stopped: bool = False

    def stop(self) -> None:
        """Kill the server's sandbox (every run it forked dies with its PID namespace)."""
        self.stopped = True
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait()


def _listen(host_dir: Path, uid: int | None) -> socket.socket:
    """The server's listening socket, there from the start: a run that comes while the server
    still imports waits in the backlog (cheaper than importing everything a second time)."""
    path = host_dir / SOCKET_NAME
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    if uid is not None:
        os.chown(path, uid, uid)
    os.chmod(path, 0o600)
    listener.listen(64)
    return listener


def _await_ready(server: WarmServer) -> None:
    """Set `ready` when the server says so; log (once) if it dies before."""
    stdout = server.process.stdout
    assert stdout is not None
    with stdout:  # this thread owns the pipe; the server stops writing once ready
        for line in iter(stdout.readline, b""):  # a library may print at import
            if line == READY_LINE:
                server.ready.set()
                return
    if server.stopped:  # the sample ended first
        return
    logger.warning(
        "warm python server in %s exited before it was ready (see %s); runs stay cold",
        server.host_dir.parent,
        server.host_dir.parent / LOG_NAME,
    )


def start_server(
    spawn: Spawn, root: Path, python: str, config: WarmPythonConfig, uid: int | None
) -> WarmServer:
    """Start the sample's server in the background; a run that comes before it is ready
    waits for it (if it dies instead, that run and the next are cold).

    Must be called from the event loop's thread: bwrap's --die-with-parent fires when the
    thread that started it ends.
    """
    host_dir = root / HOST_DIR_NAME
    listener = _listen(host_dir, uid)
    fd = listener.fileno()
    cmd = [python, f"{WARM_DIR}/{SERVER_SCRIPT}", "--fd", str(fd)]
    cmd += ["--preload", ",".join(config.preload)]
    if config.imports == "eager":
        cmd.append("--eager")
    log_r, log_w = os.pipe2(os.O_CLOEXEC)
    (root / LOG_NAME).touch(0o600)
    try:
        process = spawn(cmd, (fd,), log_w)
    except BaseException:
        os.close(log_r)
        raise
    finally:
        listener.close()  # only the server holds it: a dead server refuses, never hangs
        os.close(log_w)
    log = ServerLog(log_r, root / LOG_NAME)
    server = WarmServer(process=process, host_dir=host_dir, ready=threading.Event(), log=log)
    threading.Thread(target=_await_ready, args=(server,), daemon=True).start()
    threading.Thread(target=log.copy, daemon=True).start()
    return server
