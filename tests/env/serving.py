"""``sandmle env serve`` started as the docs start it, for the environment tests."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

STARTUP_S = 300
"""Startup takes about a minute on 2 busy cores (imports, pack load)."""


@dataclass
class Server:
    url: str
    proc: subprocess.Popen
    root: Path
    token: str | None = None

    @property
    def ledger(self) -> Path:
        return self.root / "logs" / ".state" / "episodes"

    def recorded_pids(self) -> list[int]:
        return [json.loads(p.read_text())["pid"] for p in self.ledger.glob("*.json")]

    def recorded_workdirs(self) -> list[Path]:
        return [Path(json.loads(p.read_text())["workdir"]) for p in self.ledger.glob("*.json")]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(
    root: Path, token: str | None = None, port: int | None = None, extra: tuple[str, ...] = ()
) -> Server:
    """``sandmle env serve --pack <root>/pack`` on a free port, logs under ``<root>/logs``;
    waits until it answers."""
    port = port or free_port()
    command = [
        sys.executable, "-m", "sandmle.cli", "env", "serve", "--pack", str(root / "pack"),
        "--port", str(port), "--log-dir", str(root / "logs"), "--max-episodes", "2",
        *(["--token", token] if token else []), *extra,
    ]  # fmt: skip
    log_file = root / f"server-{port}.log"
    with log_file.open("ab") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    server = Server(f"http://127.0.0.1:{port}", proc, root, token)
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        assert proc.poll() is None, log_file.read_text()[-2000:]
        if health(server) is not None:
            return server
        time.sleep(1)
    server.stop()
    raise AssertionError(f"the server did not answer in {STARTUP_S} s")


def health(server: Server) -> int | None:
    headers = {"Authorization": f"Bearer {server.token}"} if server.token else {}
    request = urllib.request.Request(f"{server.url}/health", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except OSError:
        return None
