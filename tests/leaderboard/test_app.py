"""The Streamlit app's logic through ``AppTest``, on logs of real offline evals."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from sandmle.leaderboard.app import DIRS_ENV, default_log_dirs
from sandmle.leaderboard.cli import APP_FILE
from sandmle.leaderboard.logs import SkippedLogWarning

from .conftest import CHECKPOINTS, MODELS


def _app(monkeypatch: pytest.MonkeyPatch, *dirs: Path) -> AppTest:
    # Streamlit hands the app the arguments after ``--`` as sys.argv[1:].
    monkeypatch.setattr(sys, "argv", [str(APP_FILE), *map(str, dirs)])
    app = AppTest.from_file(str(APP_FILE), default_timeout=60).run()
    assert not app.exception, app.exception
    return app


def _charts(app: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in app.get("plotly_chart")]


def _values(array: list | dict) -> list:
    """Plotly JSON keeps numeric arrays as base64 typed arrays."""
    if isinstance(array, dict):
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"]).tolist()
    return array


def test_log_dirs_come_from_args_then_env() -> None:
    assert default_log_dirs(["a", "b"], {DIRS_ENV: "c"}) == ["a", "b"]
    assert default_log_dirs([], {DIRS_ENV: "c:d"}) == ["c", "d"]
    assert default_log_dirs([], {"INSPECT_LOG_DIR": "e"}) == ["e"]
    assert default_log_dirs([], {}) == ["logs"]


def test_table_charts_and_download(monkeypatch: pytest.MonkeyPatch, log_dir: Path) -> None:
    app = _app(monkeypatch, log_dir)
    table = app.dataframe[0].value
    assert set(table["model"]) == {*MODELS, *CHECKPOINTS}
    assert table["any_medal"].is_monotonic_decreasing
    assert [tab.label for tab in app.tabs] == [
        "Leaderboard", "Generalization", "Benchmarks", "Training", "Sample",
    ]  # fmt: skip
    charts = _charts(app)
    assert len(charts) >= 5
    curve = next(c for c in charts if "training" in c["layout"]["title"]["text"])
    assert _values(curve["data"][0]["x"]) == [100, 200]
    assert _values(curve["data"][0]["y"]) == [0.0, 100.0]
    app.selectbox(key="gen_benchmark").select("synthetic").run()
    heatmap = next(c for c in _charts(app) if "scaffolds" in c["layout"]["title"]["text"])
    assert set(heatmap["data"][0]["x"]) == {
        "copy_answers", "copy_sample_submission", "toy_tree_search",
    }  # fmt: skip
    assert app.get("download_button")[0].proto.label == "Download CSV"


def test_filters_narrow_the_table(monkeypatch: pytest.MonkeyPatch, log_dir: Path) -> None:
    app = _app(monkeypatch, log_dir)
    app.multiselect(key="model").set_value([MODELS[1]]).run()
    assert set(app.dataframe[0].value["model"]) == {MODELS[1]}
    app.multiselect(key="benchmark").set_value(["mini"]).run()
    table = app.dataframe[0].value
    assert list(table["benchmark"]) == ["mini"] and list(table["scaffold"]) == ["copy_answers"]


def test_sample_drill_down_shows_transcript_and_tree(
    monkeypatch: pytest.MonkeyPatch, log_dir: Path
) -> None:
    app = _app(monkeypatch, log_dir)
    picker = app.selectbox(key="sample")
    index = next(i for i, o in enumerate(picker.options) if "toy_tree_search · bike" in o)
    picker.select_index(index).run()
    assert not app.exception
    assert any('"cmd": "ls /home/data"' in code.value for code in app.code)
    assert any("train.csv" in text.value for text in app.text)  # the tool's output
    tree = next(c for c in _charts(app) if c["layout"]["title"]["text"] == "search tree")
    buggy = next(t for t in tree["data"] if t.get("name") == "buggy")
    assert buggy["marker"]["symbol"] == "x" and buggy["text"] == ["1", "4"]
    assert app.json[0].value and json.loads(app.json[0].value)["competition_id"] == "bike-rentals"


def test_app_renders_with_broken_logs_and_empty_dirs(
    monkeypatch: pytest.MonkeyPatch, log_copy: Path, tmp_path: Path
) -> None:
    (log_copy / "corrupt.eval").write_bytes(b"garbage")
    with pytest.warns(SkippedLogWarning, match="corrupt.eval"):
        app = _app(monkeypatch, log_copy)
    assert any("corrupt.eval" in w.value for w in app.warning)
    assert len(app.dataframe[0].value) == 7
    empty = tmp_path / "empty"
    empty.mkdir()
    app = _app(monkeypatch, empty)
    assert any("No sandmle logs" in i.value for i in app.info)
    assert app.dataframe[0].value.empty
