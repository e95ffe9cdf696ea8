"""Loading logs into frames: pooling columns, skipping broken files, incremental cache."""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import shutil
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.scorer import includes
from inspect_ai.solver import Generate, Solver, TaskState, solver

from sandmle.leaderboard import logs as logs_module
from sandmle.leaderboard.logs import LogCache, LogRecord, SkippedLogWarning, load_logs

from .conftest import CHECKPOINTS, MODELS


def test_frames_hold_every_run_and_sample(log_dir: Path) -> None:
    loaded = load_logs([log_dir])
    assert not loaded.skipped
    assert len(loaded.runs) == 8
    assert set(loaded.runs["model"]) == {*MODELS, *CHECKPOINTS}
    assert set(loaded.runs["benchmark"]) == {"synthetic", "mini"}
    assert set(loaded.runs["scaffold"]) == {
        "copy_sample_submission",
        "copy_answers",
        "toy_tree_search",
        "trained_policy",
    }
    # 2 + 4 (two epochs) + 2 + 2 synthetic samples, 4 mini samples
    assert len(loaded.samples) == 14
    perfect = loaded.samples[loaded.samples["scaffold"] == "copy_answers"]
    assert perfect["gold_medal"].eq(1.0).all() and perfect["valid_submission"].eq(1.0).all()
    floor = loaded.samples[loaded.samples["scaffold"] == "copy_sample_submission"]
    assert floor["any_medal"].eq(0.0).all() and floor["valid_submission"].eq(1.0).all()
    plant = loaded.samples[loaded.samples["competition_id"] == "plant-watering"].iloc[0]
    assert plant["gold_threshold"] == 0.95 and plant["metric"] == "roc_auc"


def test_steps_come_from_checkpoint_names(log_dir: Path) -> None:
    runs = load_logs([log_dir]).runs.set_index("model")
    assert runs.loc[CHECKPOINTS[1], "checkpoint_step"] == 200
    assert runs.loc[CHECKPOINTS[0], "checkpoint_run"] == "mockllm/runs/grpo"
    assert runs.loc[MODELS[0], "checkpoint_step"].isna().all()


def _foreign_log(log_dir: Path) -> None:
    """A real Inspect log that sandmle's scorer never saw."""
    task = Task(dataset=[Sample(input="hi", target="hi")], solver=noop(), scorer=includes())
    logs = inspect_eval(task, model="mockllm/model", log_dir=str(log_dir), display="none")
    assert logs[0].status == "success"


@solver
def noop() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return state

    return solve


def _break(log_dir: Path) -> dict[str, str]:
    """Broken files of every kind next to the good logs; name -> expected reason."""
    good = sorted(log_dir.glob("*.eval"))[0]
    (log_dir / "corrupt.eval").write_bytes(b"not a zip at all")
    data = good.read_bytes()
    (log_dir / "truncated.eval").write_bytes(data[: len(data) // 2])
    foreign = log_dir / "2026-01-01T00-00-00+00-00_notes_abc123.json"
    foreign.write_text(json.dumps({"hello": "world"}))
    partial = read_eval_log(str(good))
    partial.status = "started"
    write_eval_log(partial, str(log_dir / "2026-01-01T00-00-01+00-00_partial_def456.eval"))
    return {
        "corrupt.eval": "unreadable",
        "truncated.eval": "unreadable",
        foreign.name: "unreadable",
        "2026-01-01T00-00-01+00-00_partial_def456.eval": "unfinished log (status started)",
    }


def test_broken_logs_are_skipped_with_a_warning_naming_them(log_copy: Path) -> None:
    expected = _break(log_copy)
    foreign_dir = log_copy / "foreign"
    _foreign_log(foreign_dir)
    with pytest.warns(SkippedLogWarning) as caught:
        loaded = load_logs([log_copy])
    messages = " ".join(str(w.message) for w in caught)
    for name, reason in expected.items():
        assert name in messages
        assert reason in next(r for p, r in loaded.skipped.items() if p.endswith(name))
    (foreign_path,) = [p for p in loaded.skipped if p.startswith(str(foreign_dir))]
    assert "not a sandmle log" in loaded.skipped[foreign_path]
    assert len(loaded.runs) == 8 and len(loaded.samples) == 14  # the good logs still load


def test_empty_or_missing_dir_gives_empty_frames(tmp_path: Path) -> None:
    loaded = load_logs([tmp_path, tmp_path / "missing"])
    assert loaded.runs.empty and loaded.samples.empty and not loaded.skipped
    assert "any_medal" in loaded.samples.columns and "model" in loaded.runs.columns


def test_cache_reads_only_new_or_changed_logs(
    log_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    real = logs_module.record_of

    def counted(path: str, *stored: object) -> LogRecord:  # both readers end here
        reads.append(path)
        return real(path, *stored)  # type: ignore[arg-type]

    monkeypatch.setattr(logs_module, "record_of", counted)
    cache = LogCache()
    first = cache.load([log_copy])
    assert len(reads) == 8
    assert cache.load([log_copy]) is first  # nothing changed: the same frames
    source = sorted(log_copy.glob("*.eval"))[0]
    copy = log_copy / source.name.replace(".eval", "-copy.eval")
    shutil.copy(source, copy)
    second = cache.load([log_copy])
    assert reads[8:] == [str(copy)]
    assert len(second.runs) == 9
    copy.unlink()
    assert len(cache.load([log_copy]).runs) == 8 and len(reads) == 9


def test_persistent_cache_survives_a_restart(
    log_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / "cache" / "leaderboard.pkl"
    first = LogCache.persistent(file).load([log_copy])
    assert file.exists()
    reads: list[str] = []
    real = logs_module.record_of

    def counted(path: str, *stored: object) -> LogRecord:  # both readers end here
        reads.append(path)
        return real(path, *stored)  # type: ignore[arg-type]

    monkeypatch.setattr(logs_module, "record_of", counted)
    again = LogCache.persistent(file).load([log_copy])  # a new process: nothing read
    assert reads == []
    pd.testing.assert_frame_equal(again.samples, first.samples)
    rewritten = sorted(log_copy.glob("*.eval"))[0]
    rewritten.write_bytes(rewritten.read_bytes())  # same bytes, new mtime: read again
    os.utime(rewritten, (1, 1))
    LogCache.persistent(file).load([log_copy])
    assert reads == [str(rewritten)]


def test_persistent_cache_ignores_a_foreign_or_broken_file(tmp_path: Path, log_dir: Path) -> None:
    file = tmp_path / "leaderboard.pkl"
    file.write_bytes(b"not a pickle")
    assert LogCache.persistent(file).entries == {}
    file.write_bytes(pickle.dumps({"format": "old", "entries": {"x": 1}}))
    assert LogCache.persistent(file).entries == {}
    assert len(LogCache.persistent(file).load([log_dir]).runs) == 8


def _same(a: object, b: object) -> bool:
    """Equal, with NaN equal to NaN (rates of an empty metric)."""
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return a == b


def _rows_equal(fast: dict, slow: dict) -> list[str]:
    return [k for k in slow if not _same(fast.get(k), slow[k])]


@solver
def _errs_on_one_sample() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.epoch == 1 and str(state.sample_id).startswith("bike"):
            raise RuntimeError("agent crashed\n  with a two-line message")
        return state

    return solve


def test_stored_json_gives_the_rows_inspects_readers_give(
    log_dir: Path, chaos_log_dir: Path, pack_dir: Path, tmp_path: Path
) -> None:
    """The fast reader (log_json) and Inspect's readers make the same run and sample rows for
    every test log: plain runs, checkpoints, a chaos search (refusals, crashes, long invalid
    reasons) and a log with an errored, unscored sample."""
    from sandmle.benchmarks.synthetic.task import synthetic

    [errored] = inspect_eval(
        synthetic(pack=str(pack_dir), epochs=2),
        model="mockllm/model",
        solver=_errs_on_one_sample(),
        log_dir=str(tmp_path / "errored"),
        display="none",
        fail_on_error=False,
    )
    assert errored.samples and any(s.error for s in errored.samples)
    paths = [
        str(p) for d in (log_dir, chaos_log_dir, tmp_path / "errored") for p in d.rglob("*.eval")
    ]
    assert len(paths) == 10
    for path in paths:
        fast = logs_module.read_stored(path)
        slow = asyncio.run(logs_module.read_log_record(path))
        assert isinstance(fast, LogRecord), path  # every finished log takes the fast path
        assert not _rows_equal(fast.run, slow.run), path
        assert len(fast.samples) == len(slow.samples)
        for f, s in zip(fast.samples, slow.samples, strict=True):
            assert not _rows_equal(f, s), (path, s["sample_id"], _rows_equal(f, s))
    samples = load_logs([tmp_path / "errored"]).samples
    crashed = samples[samples["error"].notna()]
    assert len(crashed) == 1 and not crashed["scored"].any()
    assert crashed["invalid_reason"].iloc[0].startswith("not scored: RuntimeError")


def test_finished_logs_never_wait_on_inspects_summary_reader(
    log_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast path is the one taken for finished logs; a running (or broken) one still goes
    through Inspect's reader, which names why it is skipped."""

    async def refuse(*_: object, **__: object) -> None:
        raise AssertionError("Inspect's summary reader was called")

    monkeypatch.setattr(logs_module, "read_eval_log_sample_summaries_async", refuse)
    loaded = load_logs([log_copy])
    assert len(loaded.runs) == 8 and len(loaded.samples) == 14 and not loaded.skipped
    (log_copy / "2026-01-01T00-00-00+00-00_broken_abc123.eval").write_bytes(b"PK\x03\x04 cut")
    with pytest.warns(SkippedLogWarning, match="not a complete .eval file"):
        loaded = load_logs([log_copy])
    assert len(loaded.skipped) == 1 and len(loaded.runs) == 8
