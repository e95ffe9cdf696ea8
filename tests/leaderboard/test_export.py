"""The static HTML report and the ``leaderboard`` typer sub-app."""

from __future__ import annotations

import json
import shutil
import sys
from html import escape as html_escape
from pathlib import Path

import pytest
import typer
from streamlit.testing.v1 import AppTest
from typer.testing import CliRunner

from sandmle.errors import SandmleError
from sandmle.leaderboard import cli, export_drill, serving
from sandmle.leaderboard.drilldown import sample_key
from sandmle.leaderboard.export import _table_html as export_table_html
from sandmle.leaderboard.export import export_html
from sandmle.leaderboard.logs import load_logs
from sandmle.leaderboard.transcript import read_sample

from .conftest import BUGGY_CODE, CHECKPOINTS, MODELS


def test_export_is_one_self_contained_file(log_dir: Path, tmp_path: Path) -> None:
    html = export_html([log_dir], tmp_path / "out" / "report.html").read_text()
    for model in (*MODELS, *CHECKPOINTS):
        assert model in html
    assert html.count("class='main-fig plotly-graph-div'") >= 4
    assert "<script src=" not in html  # plotly.js is packed inside, not fetched
    assert "id='plotly-js'" in html and "id='bodies'" in html and "100% [21–100] 1/1" in html
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


def test_copies_of_a_log_share_their_drill_downs(
    monkeypatch: pytest.MonkeyPatch, log_dir: Path, tmp_path: Path
) -> None:
    source = next(log_dir.glob("*.eval"))
    for i in range(3):  # byte copies under other names: three logs, one set of records
        shutil.copy(source, tmp_path / f"{source.stem}-copy{i}.eval")
    samples = load_logs([tmp_path]).samples
    reads: list[str] = []
    real = export_drill.read_eval_log
    monkeypatch.setattr(export_drill, "read_eval_log", lambda log, **kw: reads.append(log) or
                        real(log, **kw))  # fmt: skip
    keys = export_drill.sample_keys(samples)
    assert keys == [sample_key(row) for _, row in samples.iterrows()]  # the app's addresses
    found = export_drill.drills(samples, keys)
    assert len(reads) == 1 and len(samples) == 3 * len(found.bodies)
    assert set(found.by_sample) == set(keys)  # every sample reachable, each copy's own key
    assert found.by_sample[keys[0]] == found.by_sample[keys[len(found.bodies)]]


def test_export_node_shows_its_card_code_and_diff_as_the_app(log_dir: Path) -> None:
    samples = load_logs([log_dir]).samples
    row = samples[samples["scaffold"] == "toy_tree_search"].iloc[0]
    sample = read_sample(row["log"], row["sample_id"], int(row["epoch"]))
    body = export_drill.sample_body(sample, export_drill.Blobs())
    page = body["html"]
    assert "<th>result</th><td>KeyError</td>" in page  # the failure in full, on the card
    assert "<pre class='code' data-line='3'>" in page and "│" not in page  # numbered by CSS
    assert "▶ line 3: ids = train[&#x27;id&#x27;]" in page
    assert html_escape(BUGGY_CODE) in page  # the code as it ran: copyable
    assert "Diff against parent node 1 (debug)" in page and "-ids = train[" in page
    assert f"Transcript ({len(sample.messages)} messages)" in page and len(sample.messages) > 4
    tree = body["tree"]
    assert json.dumps(tree) and tree["layout"]["height"] < 420  # 3 levels: no tall blank


def test_zip_directory_reads_what_zipfile_reads(log_dir: Path, tmp_path: Path) -> None:
    import zipfile

    log = next(log_dir.glob("*.eval"))
    expected = [(i.filename, i.CRC, i.file_size) for i in zipfile.ZipFile(log).infolist()]
    assert export_drill.zip_directory(str(log)) == expected
    commented = tmp_path / "commented.eval"  # a comment moves the end record: zipfile reads it
    shutil.copy(log, commented)
    with zipfile.ZipFile(commented, "a") as archive:
        archive.comment = b"a comment"
    assert export_drill.zip_directory(str(commented)) == expected
    assert export_drill.content_keys(str(tmp_path / "missing.eval")) == {}
