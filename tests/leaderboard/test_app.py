"""The Streamlit app's logic through ``AppTest``, on logs of real offline evals."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from sandmle.leaderboard import stats
from sandmle.leaderboard.app import DIRS_ENV, default_log_dirs
from sandmle.leaderboard.drilldown import sample_key
from sandmle.leaderboard.logs import SkippedLogWarning, load_logs
from sandmle.leaderboard.plain import md_escape
from sandmle.leaderboard.tables import GRID_COLUMNS

from .conftest import BUGGY_CODE, CHECKPOINTS, MODELS, REACT_CODE, TRACEBACK, open_app


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


def test_compact_table_charts_and_download(monkeypatch: pytest.MonkeyPatch, log_dir: Path) -> None:
    app = open_app(monkeypatch, log_dir)
    table = app.dataframe[0].value
    assert list(table.columns) == [
        "rank", "model", "scaffold", "benchmark", "run", "Any medal %", "Valid %",
        "Above median %",
    ]  # fmt: skip
    assert set(table["model"]) == {*MODELS, *CHECKPOINTS}
    assert [tab.label for tab in app.tabs] == [
        "Leaderboard", "Models", "Generalization", "Benchmarks", "Training", "Reproduce",
        "Samples",
    ]  # fmt: skip
    bars = next(c for c in _charts(app) if "by benchmark" in c["layout"]["title"]["text"])
    assert bars["layout"]["yaxis"]["range"] == [-5.0, 105.0]
    assert app.get("download_button")[0].proto.label == "Download CSV"
    app.toggle(key="all_columns").set_value(True).run()
    full = app.dataframe[0].value
    assert {"HumanRank", "Gold %", "logs", "last run"} <= set(full.columns)
    assert "—" in set(full["HumanRank"])


def test_pairwise_comparisons_say_when_they_cannot_decide(
    monkeypatch: pytest.MonkeyPatch, log_dir: Path
) -> None:
    app = open_app(monkeypatch, log_dir)
    pairs = next(d.value for d in app.dataframe if "verdict" in d.value.columns)
    # the session's logs share at most 2 competitions per pair: no outcome could be significant
    assert len(pairs) > 0 and set(pairs["verdict"]) == {stats.too_few()}
    assert set(pairs["detectable"]) == {"—"}


def test_lazy_tabs_render_from_the_address(monkeypatch: pytest.MonkeyPatch, log_dir: Path) -> None:
    app = open_app(monkeypatch, log_dir, view="Training")
    curve = next(c for c in _charts(app) if "training" in c["layout"]["title"]["text"])
    assert _values(curve["data"][0]["x"]) == [100, 200]
    assert _values(curve["data"][0]["y"]) == [0.0, 100.0]
    step_pair = next(d.value for d in app.dataframe if "training run" in d.value.columns)
    assert list(step_pair.iloc[0][["A", "B", "competitions"]]) == ["step 200", "step 100", 1]
    app.selectbox(key=app.selectbox[-1].key).select(200).run()  # step B: the same checkpoint
    step_pair = next(d.value for d in app.dataframe if "training run" in d.value.columns)
    assert list(step_pair.iloc[0][["A", "B"]]) == ["step 200", "step 200"]
    app = open_app(monkeypatch, log_dir, view="Generalization")
    app.selectbox(key="gen_benchmark").select("synthetic").run()
    heatmap = next(c for c in _charts(app) if "scaffolds" in c["layout"]["title"]["text"])
    assert set(heatmap["data"][0]["x"]) == {
        "copy_answers", "copy_sample_submission", "toy_tree_search",
    }  # fmt: skip
    gen = app.dataframe[0].value.set_index("model")
    assert gen.loc[MODELS[0], "best scaffold"].startswith("too few (2 < 6)")


def test_filters_narrow_the_table(monkeypatch: pytest.MonkeyPatch, log_dir: Path) -> None:
    app = open_app(monkeypatch, log_dir)
    app.multiselect(key="model").set_value([MODELS[1]]).run()
    assert set(app.dataframe[0].value["model"]) == {MODELS[1]}
    app.multiselect(key="benchmark").set_value(["mini"]).run()
    table = app.dataframe[0].value
    assert list(table["scaffold"]) == ["copy_answers"] and "benchmark" not in table.columns


def test_runs_are_entrants_filterable_and_pooled_on_request(
    monkeypatch: pytest.MonkeyPatch, log_dir: Path
) -> None:
    app = open_app(monkeypatch, log_dir)
    assert "run" in app.dataframe[0].value.columns  # model-a's floor ran twice: runs shown
    app.toggle(key="all_columns").set_value(True).run()  # the full table has n
    floor = {"model": MODELS[0], "scaffold": "copy_sample_submission"}

    def floors() -> pd.DataFrame:
        table = app.dataframe[0].value
        mine = (table[list(floor)] == pd.Series(floor)).all(axis=1)
        return table[mine & (table["benchmark"] == "synthetic")]

    runs = list(floors()["run"])
    assert len(runs) == 2 and sorted(floors()["n"]) == [2, 4]
    box = app.multiselect(key="run")  # each run shown with its start, to the minute
    assert all(any(str(o).startswith(f"{r} · 20") for o in box.options) for r in runs)
    ns = dict(zip(floors()["run"], floors()["n"], strict=True))
    box.set_value([runs[0]]).run()
    assert list(floors()["n"]) == [ns[runs[0]]]  # that run alone
    app.multiselect(key="run").set_value([]).run()
    app.toggle(key="pool").set_value(True).run()
    assert list(floors()["n"]) == [6] and set(floors()["run"]) == {"pooled"}
    assert not any(" · run " in str(o) for o in app.multiselect(key="compare").options)
    app.toggle(key="all_columns").set_value(False).run()
    assert "run" not in app.dataframe[0].value.columns  # pooled: nothing to tell apart


def test_models_tab_pools_ranks_and_tests_across_scaffolds(
    monkeypatch: pytest.MonkeyPatch, log_dir: Path
) -> None:
    app = open_app(monkeypatch, log_dir, view="Models")
    rank = next(d.value for d in app.dataframe if "rank 95% CI" in d.value.columns)
    assert set(rank["model"]) == {*MODELS, *CHECKPOINTS}
    cross = next(d.value for d in app.dataframe if "holds under" in d.value.columns)
    assert len(cross) > 0 and set(cross["holds under"]) == {"none"}  # 2 competitions: too few
    wins = next(c for c in _charts(app) if "Head-to-head" in c["layout"]["title"]["text"])
    assert set(wins["data"][0]["y"]) == {*MODELS, *CHECKPOINTS}


def test_cost_beside_quality_and_tasks_by_separation(
    monkeypatch: pytest.MonkeyPatch, log_dir: Path
) -> None:
    app = open_app(monkeypatch, log_dir)
    cost = next(d.value for d in app.dataframe if "tokens in / sample" in d.value.columns)
    assert set(cost["tokens in / sample"]) == {"n/a"}  # mockllm and fixed policies: no usage
    assert (cost["wall s / sample"] > 0).all()
    assert any("Cost vs medals" in c["layout"]["title"]["text"] for c in _charts(app))
    app = open_app(monkeypatch, log_dir, view="Benchmarks")
    tasks = next(d.value for d in app.dataframe if "separation" in d.value.columns)
    assert tasks["separation"].is_monotonic_decreasing
    assert set(tasks["competition"]) == {"bike-rentals", "plant-watering"}


def _tree_sample_key(log_dir: Path) -> str:
    samples = load_logs([log_dir]).samples
    row = samples[
        (samples["scaffold"] == "toy_tree_search") & (samples["competition_id"] == "bike-rentals")
    ].iloc[0]
    return sample_key(row)


def test_sample_drill_down_explains_the_sample(
    monkeypatch: pytest.MonkeyPatch, log_dir: Path
) -> None:
    app = open_app(monkeypatch, log_dir, view="Samples", sample=_tree_sample_key(log_dir))
    grid = app.dataframe[0].value
    assert list(grid.columns) == GRID_COLUMNS and len(grid) == 14
    codes = {code.value: code.language for code in app.code}
    assert codes.get("ls /home/data") == "bash" and codes.get(REACT_CODE) == "python"
    assert any("train.csv" in text.value for text in app.text)  # the tool's output
    tree = next(c for c in _charts(app) if c["layout"]["title"]["text"] == "search tree")
    buggy = next(t for t in tree["data"] if t.get("name") == "buggy")
    assert buggy["marker"]["symbol"] == "x" and buggy["text"] == ["1", "4"]
    strip = next(c for c in _charts(app) if "medal lines" in c["layout"]["title"]["text"])
    assert {a["text"] for a in strip["layout"]["annotations"]} >= {"bronze", "silver", "gold"}
    assert not app.table  # st.table renders markdown in cells: the report is a dataframe
    report = next(f.value for f in app.dataframe if list(f.value.columns) == ["field", "value"])
    assert (
        "bike-rentals" in set(report["value"]) and not report["value"].str.contains("/tmp/").any()
    )
    picker = next(box for box in app.selectbox if box.label.startswith("Node"))
    assert picker.key.startswith("node:")  # one picker per sample: labels never go stale
    picker.select(1).run()
    codes = {code.value for code in app.code}
    assert BUGGY_CODE in codes and TRACEBACK in codes  # the code as it ran: copyable
    died = md_escape("▶ line 3: ids = train['id']")
    assert any(c.value == died for c in app.caption)  # the line it died at, named
    assert "**Result:** KeyError" in [m.value for m in app.markdown]  # the failure, in full
    assert [m.label for m in app.metric] == ["operator", "step", "metric", "run time"]
    app.selectbox(key=picker.key).select(3).run()  # node 3 debugs node 1
    diffs = [c.value for c in app.code if c.language == "diff"]
    assert diffs and "--- node 1" in diffs[0] and "-ids = train['id']" in diffs[0]
    link = next(b for b in app.get("link_button") if "Inspect View" in b.proto.label)
    assert "/samples/sample/" in link.proto.url


def test_sample_grid_filters(monkeypatch: pytest.MonkeyPatch, log_dir: Path) -> None:
    app = open_app(monkeypatch, log_dir, view="Samples")
    app.text_input(key="sample_find").input("bike").run()
    grid = app.dataframe[0].value
    assert len(grid) > 0 and set(grid["competition"]) == {"bike-rentals"}
    app.multiselect(key="sample_status").set_value(["medal"]).run()
    assert set(app.dataframe[0].value["status"]) == {"medal"}


def test_app_renders_with_broken_logs_and_empty_dirs(
    monkeypatch: pytest.MonkeyPatch, log_copy: Path, tmp_path: Path
) -> None:
    (log_copy / "corrupt.eval").write_bytes(b"garbage")
    with pytest.warns(SkippedLogWarning, match="corrupt.eval"):
        app = open_app(monkeypatch, log_copy)
    assert any(md_escape("corrupt.eval") in w.value for w in app.warning)
    assert len(app.dataframe[0].value) == 8
    empty = tmp_path / "empty"
    empty.mkdir()
    app = open_app(monkeypatch, empty)
    assert any("No sandmle logs" in i.value and "sandmle demo" in i.value for i in app.info)
    assert not app.dataframe
