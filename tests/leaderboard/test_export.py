"""The static HTML report and the ``leaderboard`` typer sub-app."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import typer
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from sandmle.errors import SandmleError
from sandmle.leaderboard import cli, serving
from sandmle.leaderboard.export import _table_html as export_table_html
from sandmle.leaderboard.export import export_html

from .conftest import CHECKPOINTS, MODELS


def test_export_is_one_self_contained_file(log_dir: Path, tmp_path: Path) -> None:
    html = export_html([log_dir], tmp_path / "out" / "report.html").read_text()
    for model in (*MODELS, *CHECKPOINTS):
        assert model in html
    assert html.count("class='main-fig plotly-graph-div'") >= 4
    assert "<script src=" not in html  # plotly.js is packed inside, not fetched
    assert "id='plotly-js'" in html and "id='details'" in html and "100% [21–100] 1/1" in html
    assert "too few shared competitions to decide (needs ≥ 6)" in html
    assert "Paired comparisons" in html
    assert "last checkpoint against its first" in html and "<td>step 200</td>" in html


def _root() -> typer.Typer:
    root = typer.Typer()

    @root.callback()
    def _main() -> None: ...

    root.add_typer(cli.leaderboard_app, name="leaderboard")
    return root


@pytest.mark.parametrize(
    ("args", "dirs", "port"),
    [
        (["leaderboard", "logs-a", "logs-b", "--port", "9000"], ["logs-a", "logs-b"], "9000"),
        (["leaderboard"], ["logs"], "8501"),
        (["leaderboard", "--port", "9001"], ["logs"], "9001"),
        (["leaderboard", "serve", "x"], ["x"], "8501"),
    ],
)
def test_leaderboard_serves_by_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, args: list[str], dirs: list[str], port: str
) -> None:
    monkeypatch.delenv("INSPECT_LOG_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    for name in dirs:
        (tmp_path / name).mkdir()
    calls: list[list[str]] = []
    monkeypatch.setattr(serving, "run_server", lambda cmd, env: calls.append(cmd) or 0)
    result = CliRunner().invoke(_root(), args)
    assert result.exit_code == 0, result.output
    (command,) = calls
    assert command[3:5] == ["run", str(cli.APP_FILE)]
    assert command[command.index("--server.port") + 1] == port
    assert command[command.index("--") + 1 :] == dirs


def test_leaderboard_export_command(log_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = CliRunner().invoke(_root(), ["leaderboard", "export", str(log_dir), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert MODELS[0] in out.read_text()
    assert "export" in CliRunner().invoke(_root(), ["leaderboard", "--help"]).output


def test_export_of_a_missing_or_empty_dir_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SandmleError, match="does not exist"):
        CliRunner().invoke(
            _root(), ["leaderboard", "export", str(tmp_path / "nope")], catch_exceptions=False
        )
    (tmp_path / "empty").mkdir()
    with pytest.raises(SandmleError, match="no finished sandmle logs"):
        export_html([tmp_path / "empty"], tmp_path / "r.html")
    assert not (tmp_path / "r.html").exists()


def test_serve_is_headless_without_a_terminal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(serving, "run_server", lambda cmd, env: calls.append(cmd) or 0)
    result = CliRunner().invoke(_root(), ["leaderboard", str(tmp_path)])  # no tty under CliRunner
    assert result.exit_code == 0, result.output
    command = calls[0]
    assert command[command.index("--server.headless") + 1] == "true"
    assert command[command.index("--browser.gatherUsageStats") + 1] == "false"
    CliRunner().invoke(_root(), ["leaderboard", str(tmp_path), "--browser"])
    assert calls[1][calls[1].index("--server.headless") + 1] == "false"


def test_export_and_app_show_the_same_pairs_table(
    monkeypatch: pytest.MonkeyPatch, log_dir: Path, tmp_path: Path
) -> None:
    monkeypatch.setattr(sys, "argv", [str(cli.APP_FILE), str(log_dir)])
    app = AppTest.from_file(str(cli.APP_FILE), default_timeout=60).run()
    shown = next(d.value for d in app.dataframe if "verdict" in d.value.columns)
    assert len(shown) == 7  # pairs of the six best ranked within a benchmark: 6 of mini, 1
    page = export_html([log_dir], tmp_path / "r.html").read_text()
    assert export_table_html(shown) in page  # the same rows, in the same order
