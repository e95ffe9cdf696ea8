"""Serving safely: the address, the token, the log-dir box kept under the roots, the stop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from sandmle.cli import app
from sandmle.harness import exposure
from sandmle.leaderboard import serving
from sandmle.leaderboard.cli import APP_FILE, streamlit_command

from .conftest import MODELS
from .test_browser import _free_port, _wait_healthy

ROOT = Path(__file__).resolve().parents[2]


def test_loopback_is_told_apart_from_other_addresses() -> None:
    assert all(map(exposure.is_loopback, ["127.0.0.1", "127.0.0.2", "::1", "localhost"]))
    assert not any(map(exposure.is_loopback, ["0.0.0.0", "::", "192.168.1.4", "example.org"]))


def test_the_server_binds_loopback_unless_told() -> None:
    command = streamlit_command([Path("logs")], 8501)
    assert command[command.index("--server.address") + 1] == "127.0.0.1"


def test_confine_keeps_folders_under_the_roots_only(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "a/b").mkdir(parents=True)
    outside.mkdir()
    (root / "link").symlink_to(outside)  # a symlink inside pointing out is outside
    wanted = [str(root / "a/b"), str(root), str(outside), str(root / "a/../../outside"),
              str(root / "link"), "/", "s3://bucket/x", "s3://bucket-other"]  # fmt: skip
    kept, refused = serving.confine(wanted, [str(root), "s3://bucket"])
    assert kept == [str(root / "a/b"), str(root), "s3://bucket/x"]
    assert refused == wanted[2:6] + ["s3://bucket-other"]


def test_token_is_compared_exactly() -> None:
    assert exposure.token_ok(None, None) and exposure.token_ok("x", "")
    assert exposure.token_ok("abc", "abc")
    assert not exposure.token_ok(None, "abc") and not exposure.token_ok("abd", "abc")


def _app(monkeypatch: pytest.MonkeyPatch, root: Path, **params: str) -> AppTest:
    monkeypatch.setattr(sys, "argv", [str(APP_FILE), str(root)])
    app = AppTest.from_file(str(APP_FILE), default_timeout=60)
    for key, value in params.items():
        app.query_params[key] = value
    return app.run()


def test_log_dir_box_refuses_folders_outside_the_roots(
    monkeypatch: pytest.MonkeyPatch, log_dir: Path, chaos_log_dir: Path
) -> None:
    monkeypatch.setenv(serving.ROOTS_ENV, str(log_dir))
    app = _app(monkeypatch, log_dir)
    app.text_area(key="log_dirs").input(f"{chaos_log_dir}\n{log_dir}/training").run()
    assert not app.exception, app.exception
    assert any("outside the served folders" in e.value for e in app.sidebar.error)
    models = {m for f in app.dataframe for m in f.value.get("model", [])}
    assert models and "sandmle/chaos" not in models and MODELS[0] not in models  # training only


def test_off_loopback_nothing_shows_without_the_token(
    monkeypatch: pytest.MonkeyPatch, log_dir: Path
) -> None:
    monkeypatch.setenv(serving.TOKEN_ENV, "s3cret")
    locked = _app(monkeypatch, log_dir, token="wrong")
    assert "asks for its token" in locked.error[0].value
    assert not locked.dataframe and not locked.get("plotly_chart")
    opened = _app(monkeypatch, log_dir, token="s3cret")
    assert not opened.error and opened.dataframe


def test_cli_warns_and_hands_a_token_to_the_server_off_loopback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    started: list[tuple[list[str], dict[str, str]]] = []

    def run_server(command: list[str], env: dict[str, str]) -> int:
        started.append((command, env))
        return 0

    monkeypatch.setattr(serving, "run_server", run_server)
    monkeypatch.delenv(serving.TOKEN_ENV, raising=False)
    for host in ("127.0.0.1", "0.0.0.0"):
        result = CliRunner().invoke(app, ["leaderboard", str(tmp_path), "--host", host])
        assert result.exit_code == 0, result.output
    (local, local_env), (wide, wide_env) = started
    assert serving.TOKEN_ENV not in local_env
    assert wide[wide.index("--server.address") + 1] == "0.0.0.0"
    token = wide_env[serving.TOKEN_ENV]
    assert len(token) >= 24 and "warning: serving on 0.0.0.0" in result.output
    assert f"?token={token}" in result.output
    assert serving.served_roots(wide_env) == [str(tmp_path)]


def _descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (read from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except (OSError, ValueError):
            continue
        if entry.name.isdigit():
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stopping_the_command_stops_the_server(log_dir: Path, sig: signal.Signals) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandmle.cli", "leaderboard", "serve", str(log_dir),
         "--port", str(port), "--headless"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_healthy(f"http://127.0.0.1:{port}", proc, timeout=60)
        below = _descendants(proc.pid)
        assert below, "the server runs as a child of the command"
        os.kill(proc.pid, sig)
        time.sleep(5)
        assert proc.poll() is not None and [p for p in below if _alive(p)] == []
    finally:
        for pid in [proc.pid, *_descendants(proc.pid)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
