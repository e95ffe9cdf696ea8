"""The ``python`` shim first on the sandbox's PATH: hand the run to the warm server, else run cold.

Runs INSIDE the sandbox as ``<agent python> -S -I`` (its shebang), standard library only (the
C modules ``_socket``/``_signal``: ``socket``/``signal`` would cost ~10 ms of imports). It
sends argv, cwd, environment, umask, rlimits and fds 0-2 to the sample's warm server, relays
the signals it gets, and exits as the run did (same code, or killed by the same signal).
Whatever the server cannot serve (flags such as ``-m``, an environment that changes what the
libraries saw at import, a dead server) is exec'd on the real interpreter: the agent's call
behaves exactly as without the shim.
"""

from __future__ import annotations  # any python3 may run this: annotations stay text

# _signal and marshal are loaded before any program's first line: importing them is free.
import _signal  # type: ignore[import-not-found]  # a C module typeshed has no stub for
import marshal
import os
import sys

TYPE_CHECKING = False  # typing's flag without importing typing (mypy reads it by name)
if TYPE_CHECKING:
    import _socket
    from typing import NoReturn

CONNECT_TIMEOUT_S = 3.0
READY_TIMEOUT_S = 600.0
"""How long a run waits for a server still importing (waiting costs less than importing
again alongside it); past it, or if the server dies, the run goes cold."""
RELAYED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM")
RLIMITS = (
    "RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NPROC", "RLIMIT_CORE",
    "RLIMIT_NOFILE", "RLIMIT_STACK", "RLIMIT_DATA",
)  # fmt: skip
SOCKET = "/opt/sandmle-warm/sock"  # warm.WARM_DIR + SOCKET_NAME, mounted by the sandbox


def cold() -> NoReturn:
    """Become the real interpreter with the same arguments (sys.executable is its path)."""
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])


def servable(args: list[str]) -> bool:
    """Cheap first look; the server makes the full check."""
    return not args or args[0] in ("-c", "-") or not args[0].startswith("-")


def ignored_signals() -> list[int]:
    """Relayed signals this process inherited as ignored (e.g. SIGINT in a `&` job)."""
    found = []
    for name in RELAYED:
        signum = getattr(_signal, name)
        if _signal.getsignal(signum) == _signal.SIG_IGN:
            found.append(signum)
    return found


def request() -> bytes:
    import resource

    umask = os.umask(0)
    os.umask(umask)
    limits = [resource.getrlimit(getattr(resource, name)) for name in RLIMITS]
    body = (
        [os.fsencode(a) for a in sys.argv[1:]],
        os.getcwdb(),
        dict(os.environb),
        umask,
        limits,
        ignored_signals(),
    )
    data = marshal.dumps(body)
    return len(data).to_bytes(4, "big") + data


def handshake(payload: bytes) -> _socket.socket | None:
    import _socket

    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(CONNECT_TIMEOUT_S)
        conn.connect(SOCKET)
        fds = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))  # C ints
        sent = conn.sendmsg([payload], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
        conn.sendall(payload[sent:])
        conn.settimeout(READY_TIMEOUT_S)
        if conn.recv(256)[:1] != b"R":
            conn.close()
            return None
        conn.sendall(b"G")
    except OSError:  # no server, refused, or too slow to answer: run cold
        conn.close()
        return None
    conn.settimeout(None)
    return conn


def relay_signals(conn: _socket.socket) -> None:
    def forward(signum: int, _frame: object) -> None:
        try:
            conn.sendall(b"S" + bytes([signum]))
        except OSError:
            pass

    for name in RELAYED:
        signum = getattr(_signal, name)
        if _signal.getsignal(signum) != _signal.SIG_IGN:  # the run ignores it too
            _signal.signal(signum, forward)


def wait_result(conn: _socket.socket) -> NoReturn:
    data = b""
    while True:
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    if data[:1] != b"X":
        sys.stderr.write("python: the warm run ended without a status (killed from outside)\n")
        os._exit(1)
    exited, value = marshal.loads(data[1:])
    if exited:
        os._exit(value)
    try:  # die of the same signal (SIGKILL needs, and allows, neither step)
        _signal.signal(value, _signal.SIG_DFL)
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, [value])
    except (OSError, ValueError):
        pass
    os.kill(os.getpid(), value)
    os._exit(128 + value)


def main() -> None:
    if not servable(sys.argv[1:]):
        cold()
    try:
        payload = request()
    except OSError:  # e.g. the cwd was deleted: let the interpreter report it
        cold()
    conn = handshake(payload)
    if conn is None:
        cold()
    relay_signals(conn)
    wait_result(conn)


if __name__ == "__main__":
    main()
