"""``sandmle/mle_bench_lite`` end to end on the micro replicas: offline, bwrap sandbox."""

from __future__ import annotations

import logging
import math
import shutil
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

from sandmle.benchmarks.mle_bench import cross_check as cross_check_module
from sandmle.benchmarks.mle_bench.competitions import lite_competitions
from sandmle.benchmarks.mle_bench.replicas.build import build_replicas
from sandmle.benchmarks.mle_bench.task import default_data_dir, mle_bench, mle_bench_lite
from sandmle.errors import SandmleError
from sandmle.harness.competition import load_competition
from sandmle.harness.grading.report import grade_csv
from sandmle.harness.solvers import copy_sample_submission

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")
PRIVATE_SAMPLE = {  # MLE-bench configures these sample submissions in private/: nothing to copy
    "text-normalization-challenge-english-language",
    "text-normalization-challenge-russian-language",
}


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("replicas")
    build_replicas(out)
    return out


def _eval(task: object, tmp_path: Path, **kwargs: object) -> EvalLog:
    log = inspect_eval(
        task,
        model="mockllm/model",
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_samples=22,
        **kwargs,
    )[0]
    assert log.status == "success", log.error
    return log


@needs_bwrap
def test_sample_submission_eval_runs_offline(replicas: Path, tmp_path: Path) -> None:
    log = _eval(mle_bench_lite(data_dir=str(replicas)), tmp_path, solver=copy_sample_submission())
    assert log.samples is not None and len(log.samples) == 22
    assert log.eval.metadata is not None and log.eval.metadata["excluded"] == {}
    for sample in log.samples:
        score = sample.scores["medal_scorer"]
        assert isinstance(score.value, dict)
        expected = sample.id not in PRIVATE_SAMPLE
        assert score.value["valid_submission"] == float(expected), (sample.id, score.metadata)
        if expected:  # the same report as grading the sample submission directly
            competition = load_competition(replicas / str(sample.id))
            report = grade_csv(competition.sample_submission_path, competition)
            assert score.value["score"] == report.score
        assert (
            sample.metadata["rules_unavailable"]
            == lite_competitions()[str(sample.id)].rules_unavailable
        )
        assert math.isnan(score.value["human_rank"])  # MLE-bench has no human boards


@needs_bwrap
def test_heuristic_policy_runs(replicas: Path, tmp_path: Path) -> None:
    policies = pytest.importorskip(
        "sandmle.policies", reason="sandmle/heuristic is not available yet"
    )
    if "heuristic" not in getattr(policies, "POLICIES", ()):
        pytest.skip("sandmle/heuristic is not available yet")
    task = mle_bench_lite(
        data_dir=str(replicas),
        competitions="spooky-author-identification,tabular-playground-series-may-2022",
        message_limit=30,
        time_limit=240,
        command_timeout=120,
    )
    log = inspect_eval(
        task, model="sandmle/heuristic", log_dir=str(tmp_path / "logs"), display="none"
    )[0]
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == 2
    for sample in log.samples:  # the reference policy trains a model and hands in valid files
        value = sample.scores["medal_scorer"].value
        assert isinstance(value, dict) and value["valid_submission"] == 1.0, sample.id


def test_unprepared_competitions_are_left_out_with_a_reason(
    replicas: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for cid in ("spooky-author-identification", "leaf-classification"):
        (data / cid).symlink_to(replicas / cid)
    (data / "aerial-cactus-identification" / "prepared" / "public").mkdir(parents=True)
    with caplog.at_level(logging.WARNING):
        task = mle_bench_lite(data_dir=str(data))
    assert sorted(str(s.id) for s in task.dataset) == [
        "leaf-classification",
        "spooky-author-identification",
    ]
    excluded = task.metadata["excluded"]
    assert len(excluded) == 20
    assert "mlebench prepare -c random-acts-of-pizza" in excluded["random-acts-of-pizza"]
    assert "no longer" in excluded["detecting-insults-in-social-commentary"]
    assert "not prepared" in excluded["aerial-cactus-identification"]
    assert "leaving random-acts-of-pizza out" in caplog.text


def test_nothing_prepared_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SandmleError, match="no competition of the split is prepared"):
        mle_bench_lite(data_dir=str(tmp_path))


def test_other_splits_and_split_files(replicas: Path, tmp_path: Path) -> None:
    split = tmp_path / "mine.txt"
    split.write_text("# two\nleaf-classification\nspooky-author-identification\n")
    assert len(mle_bench(split=str(split), data_dir=str(replicas)).dataset) == 2
    with pytest.raises(SandmleError, match="not in split"):
        mle_bench_lite(data_dir=str(replicas), competitions="titanic")
    with pytest.raises(SandmleError, match="no competition of the split"):
        mle_bench(split="dev", data_dir=str(replicas))  # no dev replica in this data dir


def test_default_data_dir_is_mle_benchs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    # Without mlebench, its rule: Path(appdirs.user_cache_dir()) / "mle-bench" / "data" (Linux)
    monkeypatch.setattr("sandmle.benchmarks.mle_bench.task.mlebench_available", lambda: False)
    assert default_data_dir() == tmp_path.resolve() / "mle-bench" / "data"
    # With it, its own constant (computed when mlebench.registry is imported).
    monkeypatch.setattr("sandmle.benchmarks.mle_bench.task.mlebench_available", lambda: True)
    monkeypatch.setattr(
        "sandmle.benchmarks.mle_bench.task.mlebench_default_data_dir", lambda: Path("/m/d")
    )
    assert default_data_dir() == Path("/m/d")


class FakeReport:
    def __init__(self, score: float | None) -> None:
        self.score = score

    def to_dict(self) -> dict:
        return {
            "score": self.score,
            "valid_submission": self.score is not None,
            "gold_medal": False,
        }


def test_cross_check_records_differences(
    replicas: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    competition = load_competition(replicas / "spooky-author-identification")
    ours = grade_csv(competition.sample_submission_path, competition)
    monkeypatch.setattr(cross_check_module, "mlebench_available", lambda: True)
    monkeypatch.setattr(
        cross_check_module, "mlebench_report", lambda *a: FakeReport(ours.score).to_dict()
    )
    same = cross_check_module.cross_check(competition.sample_submission_path, ours, replicas)
    assert same == {"agree": True, "differences": {}, "mlebench_score": ours.score}
    monkeypatch.setattr(
        cross_check_module, "mlebench_report", lambda *a: FakeReport(None).to_dict()
    )
    differ = cross_check_module.cross_check(competition.sample_submission_path, ours, replicas)
    assert differ["agree"] is False
    assert differ["differences"]["valid_submission"] == [True, False]


@needs_bwrap
def test_cross_check_scorer_in_an_eval(
    replicas: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cross_check_module, "mlebench_available", lambda: True)
    monkeypatch.setattr(cross_check_module, "mlebench_report", lambda *a: FakeReport(0.5).to_dict())
    task = mle_bench_lite(
        data_dir=str(replicas), competitions="aerial-cactus-identification", cross_check=True
    )
    log = _eval(task, tmp_path, solver=copy_sample_submission())
    assert log.samples is not None
    (score,) = log.samples[0].scores.values()
    assert score.metadata is not None
    assert score.metadata["cross_check"]["agree"] is True
    assert isinstance(score.value, dict) and score.value["valid_submission"] == 1.0
