"""Medal thresholds: the packaged table, MLE-bench checkouts, and the table's generator."""

from __future__ import annotations

import importlib
import math
import sys
from pathlib import Path

import pytest

from sandmle.benchmarks.mle_bench import make_thresholds, thresholds
from sandmle.benchmarks.mle_bench.competitions import competition_config
from sandmle.benchmarks.mle_bench.thresholds import (
    lite_thresholds,
    mlebench_leaderboard,
    packaged_thresholds,
    read_table,
)
from sandmle.errors import SandmleError
from sandmle.harness.competition import Competition

from ...conftest import LEADERBOARDS
from ...spec_tables import SPEC_TABLE
from .conftest import Grade, write_prepared

FIND_PACKAGE = thresholds._package_dir  # the conftest stubs it out for the other tests

SIIM = "siim-isic-melanoma-classification"


@pytest.mark.parametrize("cid", sorted(SPEC_TABLE))
def test_packaged_table_matches_spec_illustration(cid: str) -> None:
    teams, lower, gold, silver, bronze, median = SPEC_TABLE[cid]
    entry = packaged_thresholds()[cid]
    t = entry.thresholds
    assert t is not None and entry.available
    assert (t.teams, t.is_lower_better, entry.is_lower_better) == (teams, lower, lower)
    assert (t.gold, t.silver, t.bronze) == (gold, silver, bronze)
    assert t.median == pytest.approx(median, abs=1e-12)  # the spec prints 0.122095, not ...01
    assert entry.sha256 and entry.generated_on and "private_leaderboard.csv" in entry.source


def test_siim_thresholds_unavailable() -> None:
    entry = packaged_thresholds()[SIIM]
    assert not entry.available and entry.thresholds is None
    assert entry.source.startswith("unavailable")
    assert entry.is_lower_better is False
    t = entry.config_thresholds()
    assert all(math.isnan(v) for v in (t.gold, t.silver, t.bronze, t.median))


def test_siim_grades_without_medals(tmp_path: Path, grade: Grade) -> None:
    folder = write_prepared(tmp_path, SIIM, "image_name,target\nISIC_1,0\nISIC_2,1\n")
    config = competition_config(folder)
    assert config.tags["thresholds_available"] is False
    report = grade(Competition(folder, config), "image_name,target\nISIC_2,0.9\nISIC_1,0.1\n")
    assert report.valid_submission and report.score == 1.0
    assert math.isnan(report.gold_threshold) and math.isnan(report.median_threshold)
    assert not (report.any_medal or report.gold_medal or report.above_median)


# ---- MLE-bench checkouts ----

LEADERBOARD = "teamId,teamName,score\n1,a,0.9\n2,b,0.8\n3,c,0.7\n4,d,0.6\n5,e,0.5\n"
CACTUS = "aerial-cactus-identification"


def fake_checkout(root: Path, text: str = LEADERBOARD, cid: str = CACTUS) -> Path:
    """``<root>/mlebench/competitions/<id>/leaderboard.csv``, as in MLE-bench's repository."""
    board = root / "mlebench" / "competitions" / cid / "leaderboard.csv"
    board.parent.mkdir(parents=True)
    board.write_text(text)
    return root


def test_checkout_leaderboard_replaces_the_table(tmp_path: Path) -> None:
    checkout = fake_checkout(tmp_path / "mle-bench")
    entry = lite_thresholds(CACTUS, checkout)
    # 5 teams: gold row max(1, 0) = 1, silver row 1, bronze row int(2.0) = 2; median 0.7.
    assert entry.thresholds is not None
    assert (entry.thresholds.gold, entry.thresholds.silver, entry.thresholds.bronze) == (
        0.9,
        0.9,
        0.8,
    )
    assert entry.thresholds.median == 0.7 and entry.is_lower_better is False
    assert entry.source == str(checkout / "mlebench/competitions" / CACTUS / "leaderboard.csv")
    folder = write_prepared(tmp_path / "data", CACTUS, "id,has_cactus\n")
    config = competition_config(folder, checkout)
    assert config.thresholds is not None and config.thresholds.bronze == 0.8
    assert config.tags["thresholds_source"] == entry.source


def test_checkout_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checkout = fake_checkout(tmp_path / "mle-bench", "score\n1.0\n2.0\n3.0\n")
    monkeypatch.setenv("MLEBENCH_DIR", str(checkout))
    entry = lite_thresholds(CACTUS)
    assert entry.is_lower_better is True  # first score below the last
    assert entry.thresholds is not None and entry.thresholds.median == 2.0
    # A competition missing from the checkout falls back to the packaged table.
    assert lite_thresholds("leaf-classification") == packaged_thresholds()["leaf-classification"]


def test_checkout_lfs_pointer_falls_back(tmp_path: Path) -> None:
    pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 123\n"
    checkout = fake_checkout(tmp_path / "mle-bench", pointer)
    assert mlebench_leaderboard(CACTUS, checkout) is None
    assert lite_thresholds(CACTUS, checkout) == packaged_thresholds()[CACTUS]


def test_not_a_checkout(tmp_path: Path) -> None:
    with pytest.raises(SandmleError, match="not an MLE-bench checkout"):
        lite_thresholds(CACTUS, tmp_path)


def test_importable_mlebench_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = fake_checkout(tmp_path / "site")
    (root / "mlebench" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    monkeypatch.delitem(sys.modules, "mlebench", raising=False)
    monkeypatch.setattr(thresholds, "_package_dir", FIND_PACKAGE)
    path = mlebench_leaderboard(CACTUS)
    assert path == root / "mlebench" / "competitions" / CACTUS / "leaderboard.csv"


# ---- the generator ----


def test_make_thresholds_writes_a_readable_table(tmp_path: Path) -> None:
    boards = tmp_path / "boards"
    for cid, text in {CACTUS: "rank,score\n1,0.99\n2,0.98\n3,0.5\n"}.items():
        (boards / cid).mkdir(parents=True)
        (boards / cid / "private_leaderboard.csv").write_text(text)
    out = tmp_path / "thresholds.csv"
    make_thresholds.main(
        [str(boards), "--out", str(out), "--source", "test", "--date", "2025-01-01"]
    )
    table = read_table(out.read_text())
    assert len(table) == 22
    entry = table[CACTUS]
    assert entry.thresholds is not None and entry.thresholds.median == 0.98
    assert entry.source == f"test: {CACTUS}/private_leaderboard.csv"
    assert entry.generated_on == "2025-01-01" and len(entry.sha256) == 64
    assert not table["leaf-classification"].available
    assert table["leaf-classification"].is_lower_better is True


def test_make_thresholds_rejects_a_board_in_the_wrong_direction(tmp_path: Path) -> None:
    (tmp_path / CACTUS).mkdir()
    (tmp_path / CACTUS / "private_leaderboard.csv").write_text("rank,score\n1,0.5\n2,0.9\n")
    with pytest.raises(SandmleError, match="lower-is-better"):
        make_thresholds.build_entries(tmp_path, "test", "private")


def test_packaged_table_regenerates_exactly(tmp_path: Path) -> None:
    entries = make_thresholds.build_entries(LEADERBOARDS, "MLE-Dojo/MLE-Dojo@667a8fd", "private")
    out = tmp_path / "thresholds.csv"
    date = packaged_thresholds()[CACTUS].generated_on
    make_thresholds.write_table(entries, out, date)
    packaged = Path(make_thresholds.DEFAULT_OUT).read_text()
    assert out.read_text() == packaged
