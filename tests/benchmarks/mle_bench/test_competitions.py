"""The competition facts, the split lists, and MLE-bench prepared dirs as competition folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandmle.benchmarks.mle_bench import competitions as lite
from sandmle.benchmarks.mle_bench.competitions import (
    RULES_UNAVAILABLE,
    competition_source,
    get_competition,
    lite_competitions,
    split_ids,
)
from sandmle.errors import CompetitionError, SandmleError
from sandmle.harness import plugins
from sandmle.harness.competition import load_competition
from sandmle.harness.grading.registry import get_grader
from sandmle.harness.grading.report import grade_csv

from ...conftest import MLEBENCH
from .conftest import write_prepared


def test_facts_cover_the_lite_split() -> None:
    assert list(lite_competitions()) == split_ids("lite") == split_ids("low")
    assert len(lite_competitions()) == 22
    counts = {cid: len(get_competition(cid).target_columns) for cid in lite_competitions()}
    assert counts["dog-breed-identification"] == 120
    assert counts["leaf-classification"] == 99
    assert counts["ranzcr-clip-catheter-line-classification"] == 9
    assert counts["jigsaw-toxic-comment-classification-challenge"] == 6
    assert counts["nomad2018-predict-transparent-conductors"] == 2
    assert get_competition("nomad2018-predict-transparent-conductors").id_columns == ()
    text = get_competition("text-normalization-challenge-english-language")
    assert text.sample_submission == "prepared/private/sample_submission.csv"
    assert text.answers == "prepared/private/answers.csv"


def test_every_competition_has_a_registered_grader() -> None:
    for cid in lite_competitions():
        assert callable(get_grader(lite.grader_name(cid)))


def test_split_lists() -> None:
    assert len(split_ids("dev")) == 7
    assert len(split_ids("medium")) == 38
    assert len(split_ids("high")) == 15
    assert not set(split_ids("low")) & set(split_ids("medium"))
    with pytest.raises(SandmleError, match="unknown MLE-bench split"):
        split_ids("huge")


def test_split_lists_match_mle_bench() -> None:
    """Against MLE-bench's ``experiments/splits`` lists (copied to tests/fixtures/mlebench)."""
    for name in ("low", "dev", "medium", "high"):
        text = (MLEBENCH / "splits" / f"{name}.txt").read_text()
        assert split_ids(name) == text.split()


def test_two_competitions_flagged_rules_unavailable() -> None:
    flagged = {cid for cid, c in lite_competitions().items() if c.rules_unavailable}
    assert (
        flagged
        == RULES_UNAVAILABLE
        == {
            "detecting-insults-in-social-commentary",
            "the-icml-2013-whale-challenge-right-whale-redux",
        }
    )


def test_source_describes_a_prepared_dir(tmp_path: Path) -> None:
    folder = write_prepared(tmp_path, "leaf-classification", "id\n")
    config = competition_source(folder)
    assert config is not None
    assert config.grader.name == "mle-bench-lite/leaf-classification"
    assert config.is_lower_better is True
    assert config.answers == "prepared/private/test.csv"
    assert config.thresholds is not None and config.thresholds.silver == 0.00791
    assert config.tags["rules_unavailable"] is False
    assert config.tags["awards_medals"] is False


def test_source_flags_rules_unavailable(tmp_path: Path) -> None:
    folder = write_prepared(tmp_path, "detecting-insults-in-social-commentary", "Insult\n")
    config = competition_source(folder)
    assert config is not None and config.tags["rules_unavailable"] is True


def test_source_ignores_other_folders(tmp_path: Path) -> None:
    assert competition_source(tmp_path / "my-own-competition") is None
    folder = write_prepared(tmp_path, "leaf-classification", "id\n")
    (folder / "competition.yaml").write_text("id: leaf-classification\n")
    assert competition_source(folder) is None


def test_source_reports_unprepared_data(tmp_path: Path) -> None:
    folder = tmp_path / "spooky-author-identification"
    (folder / "raw").mkdir(parents=True)
    with pytest.raises(CompetitionError, match="not prepared"):
        competition_source(folder)


def test_harness_loads_and_grades_a_prepared_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the entry point will do once registered in pyproject.toml.
    real = plugins.load_plugins

    def fake(group: str) -> tuple:
        return (competition_source,) if group == plugins.COMPETITION_SOURCES else real(group)

    monkeypatch.setattr(plugins, "load_plugins", fake)
    answers = "id,has_cactus\na.jpg,0\nb.jpg,1\n"
    folder = write_prepared(tmp_path, "aerial-cactus-identification", answers)
    competition = load_competition(folder)
    submission = tmp_path / "submission.csv"
    submission.write_text("id,has_cactus\nb.jpg,0.7\na.jpg,0.2\n")
    report = grade_csv(submission, competition)
    assert report.valid_submission and report.score == 1.0
    assert report.gold_medal and report.any_medal  # gold threshold 1.0, inclusive
    assert report.is_lower_better is False
