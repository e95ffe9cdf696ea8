"""Published reference rows: a versioned file with sources, shown apart, tested with nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sandmle.errors import SandmleError
from sandmle.leaderboard.cli import APP_FILE
from sandmle.leaderboard.references import STATUS, load_references, reference_table


def test_the_shipped_file_validates_and_cites_each_row() -> None:
    loaded = load_references()
    assert loaded.version >= 1 and loaded.rows
    for row in loaded.rows:
        assert row.source and str(row.url).startswith("https://")
    table = reference_table(loaded)
    assert set(table["status"]) == {STATUS}


def test_a_row_needs_a_figure_and_shows_dashes_for_the_others(tmp_path: Path) -> None:
    row = "  - {name: r, model: m, scaffold: s, benchmark: b, source: p, url: 'https://x.org'"
    bare = tmp_path / "bare.yaml"
    bare.write_text(f"version: 1\nrows:\n{row}}}\n")
    with pytest.raises(SandmleError, match="not a valid reference file"):
        load_references(bare)  # a row without any figure says nothing
    valid_only = tmp_path / "valid.yaml"
    valid_only.write_text(f"version: 1\nrows:\n{row}, valid_submission: 100}}\n")
    shown = reference_table(load_references(valid_only)).iloc[0]
    assert (shown["Any medal %"], shown["Valid %"]) == ("—", "100.0")


def test_a_broken_file_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "refs.yaml"
    bad.write_text("version: 1\nrows:\n  - name: x\n    any_medal: 140\n")
    with pytest.raises(SandmleError, match="not a valid reference file") as caught:
        load_references(bad)
    assert "\n" not in str(caught.value)


def test_reference_rows_are_shown_apart_and_absent_from_every_test(
    monkeypatch: pytest.MonkeyPatch, log_dir: Path
) -> None:
    names = {row.name for row in load_references().rows}
    monkeypatch.setattr(sys, "argv", [str(APP_FILE), str(log_dir)])
    app = AppTest.from_file(str(APP_FILE), default_timeout=60).run()
    shown = next(d.value for d in app.dataframe if "status" in d.value.columns)
    assert set(shown["name"]) == names and set(shown["status"]) == {STATUS}
    pairs = next(d.value for d in app.dataframe if "verdict" in d.value.columns)
    tested = set(pairs["A"]) | set(pairs["B"])
    assert tested and not any(name in entrant for name in names for entrant in tested)
    app.query_params["view"] = "Models"
    app.run()
    for frame in app.dataframe:
        cells = {str(v) for v in frame.value.to_numpy().ravel()} | set(
            map(str, frame.value.columns)
        )
        assert not any(name in cell for name in names for cell in cells)
