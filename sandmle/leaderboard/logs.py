"""Inspect logs into two tidy frames: one row per run (log) and one per sample-epoch.

Reads only each log's header and its sample summaries, never the transcripts: a finished log
from the JSON it stores (``log_json``), any other through Inspect's readers, so a thousand
logs load in seconds. ``LogCache`` keeps what it read keyed by
path, mtime and size: a new or rewritten log is read, the others are not.

A log that cannot be read, is unfinished (status other than ``success``), or was not scored
by sandmle's ``medal_scorer`` is skipped with a ``SkippedLogWarning`` naming the file.
A sample without a medal score (it errored) counts as an invalid submission, as MLE-bench
counts a failed run.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import pickle
import warnings
import zipfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from inspect_ai.log import (
    EvalLog,
    EvalSampleSummary,
    list_eval_logs,
    read_eval_log_async,
    read_eval_log_sample_summaries_async,
)

from sandmle.errors import SandmleWarning
from sandmle.harness.scorer import FLAGS, RATE_KEYS, medal_scorer
from sandmle.leaderboard.log_json import stored_log
from sandmle.specs.checkpoint import checkpoint_info, checkpoint_label

SCORER = medal_scorer.__name__
RUN_KEY = ["model", "scaffold", "benchmark", "run"]
"""An entrant: logs sharing these are pooled. A run is one ``eval``/``eval_set`` invocation
(Inspect's ``run_id``) or what a ``run:NAME`` tag names; runs are pooled only on request."""
RUN_TAG = "run:"
"""``inspect eval ... --tags run:seed-1`` names the run (and pools logs across invocations)."""
POOLED = "pooled"
RUN_COLUMNS = [
    "log", "eval_id", "run_id", "created", "status", *RUN_KEY, "entrant", "scaffold_args", "task", "task_args",
    "pack", "pack_version", "sandbox", "epochs", "total_samples", "completed_samples",
    "checkpoint_step", "checkpoint_run", "base_model", "checkpoint_label", "tokens",
    *RATE_KEYS, *(f"{key}_stderr" for key in RATE_KEYS),
]  # fmt: skip
SAMPLE_COLUMNS = [
    "log", "created", *RUN_KEY, "entrant", "checkpoint_step", "checkpoint_label", "checkpoint_run", "sample_id", "epoch",
    "competition_id", "metric", "modality", "task_type", "scored", *FLAGS, "score",
    "human_rank", "gold_threshold", "silver_threshold", "bronze_threshold", "median_threshold",
    "is_lower_better", "invalid_reason", "tokens", "input_tokens", "output_tokens", "total_time",
    "working_time", "limit",
    "error", "message_count",
]  # fmt: skip
READ_CONCURRENCY = 32
"""Logs read at once; bounds open files."""
_THRESHOLD_KEYS = ("gold_threshold", "silver_threshold", "bronze_threshold", "median_threshold")


class SkippedLogWarning(SandmleWarning):
    """A log under a leaderboard dir was left out (unreadable, unfinished or foreign)."""


class LogSkipped(Exception):  # noqa: N818 - a reason to skip, not an error
    """Why one log file is left out; the message is the reason."""


@dataclass(frozen=True)
class LogRecord:
    """What one log contributes: its run row and its sample rows."""

    run: dict[str, Any]
    samples: list[dict[str, Any]]


@dataclass(frozen=True)
class LoadedLogs:
    """The frames of every readable log under some dirs, and the files left out."""

    runs: pd.DataFrame
    samples: pd.DataFrame
    skipped: dict[str, str] = field(default_factory=dict)
    """Path of each skipped log, and why."""


def _short(name: str | None) -> str:
    return (name or "").rsplit("/", 1)[-1]


def _args_label(name: str, args: dict[str, Any]) -> str:
    if not args:
        return name
    return f"{name}({', '.join(f'{k}={v}' for k, v in sorted(args.items()))})"


def _scaffold(header: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The solver's short name and passed args (the plan's last step when none was named)."""
    spec = header["eval"]
    if spec.get("solver"):
        return _short(spec["solver"]), dict(
            spec.get("solver_args_passed") or spec.get("solver_args") or {}
        )
    steps = (header.get("plan") or {}).get("steps") or []
    return (_short(steps[-1].get("solver")) if steps else "default"), {}


def _usage(usage: dict[str, Any] | None, kind: str = "total_tokens") -> int:
    return sum(int(u.get(kind) or 0) for u in (usage or {}).values())


def _header_rates(header: dict[str, Any]) -> dict[str, float]:
    rates: dict[str, float] = {}
    for score in (header.get("results") or {}).get("scores") or []:
        if score.get("name") in RATE_KEYS:
            metrics = score.get("metrics") or {}
            for metric, suffix in (("mean", ""), ("stderr", "_stderr")):
                value = (metrics.get(metric) or {}).get("value")
                rates[score["name"] + suffix] = math.nan if value is None else value
    return rates


def run_label(tags: Sequence[str] | None, run_id: str | None, eval_id: str) -> str:
    """The run a log belongs to: its ``run:NAME`` tag, else Inspect's run id (8 characters)."""
    named = [t.removeprefix(RUN_TAG).strip() for t in tags or [] if t.startswith(RUN_TAG)]
    return next((n for n in named if n), None) or (run_id or eval_id)[:8]


def run_row(header: dict[str, Any], path: str) -> dict[str, Any]:
    """The run row of a log header (as stored JSON); raises ``LogSkipped`` for foreign or
    unfinished logs."""
    if header.get("status") != "success":
        raise LogSkipped(f"unfinished log (status {header.get('status')})")
    spec = header["eval"]
    if not any(s.get("name") == SCORER for s in spec.get("scorers") or []):
        raise LogSkipped(f"not a sandmle log (no {SCORER} scores)")
    scaffold, args = _scaffold(header)
    meta = spec.get("metadata") or {}
    info = checkpoint_info(spec["model"], spec.get("model_args"))
    results = header.get("results") or {}
    return {
        "log": path,
        "eval_id": spec["eval_id"],
        "run_id": spec.get("run_id"),
        "created": pd.Timestamp(spec["created"]),
        "status": header["status"],
        "model": spec["model"],
        "scaffold": _args_label(scaffold, args),
        "benchmark": meta.get("benchmark") or _short(spec["task"]),
        "run": run_label(spec.get("tags"), spec.get("run_id"), spec["eval_id"]),
        "entrant": None,  # named once every log is read: ``entrant_labels``
        "scaffold_args": json.dumps(args, default=str),
        "task": spec["task"],
        "task_args": json.dumps(spec.get("task_args_passed") or {}, default=str),
        "pack": meta.get("pack"),
        "pack_version": meta.get("pack_version"),
        "sandbox": meta.get("sandbox"),
        "epochs": (spec.get("config") or {}).get("epochs") or 1,
        "total_samples": results.get("total_samples", 0),
        "completed_samples": results.get("completed_samples", 0),
        "checkpoint_step": info.step,
        "checkpoint_run": info.run,
        "base_model": info.base_model,
        "checkpoint_label": checkpoint_label(info),  # base / SFT / GRPO with its step
        "tokens": _usage((header.get("stats") or {}).get("model_usage")),
        **_header_rates(header),
    }


def _score_fields(summary: dict[str, Any]) -> dict[str, Any]:
    score = (summary.get("scores") or {}).get(SCORER)
    value = score.get("value") if score else None
    if not isinstance(value, dict):
        error = summary.get("error")
        reason = f"not scored: {error}" if error else "not scored"
        return {"scored": False, **dict.fromkeys(FLAGS, 0.0), "invalid_reason": reason}
    meta = score.get("metadata") or {}  # type: ignore[union-attr]  # a dict: value is one
    return {
        "scored": True,
        **{key: float(_number(value.get(key))) for key in (*FLAGS, "score", "human_rank")},
        **{key: meta.get(key) for key in (*_THRESHOLD_KEYS, "is_lower_better")},
        "invalid_reason": meta.get("invalid_reason"),
        "competition_id": meta.get("competition_id"),
    }


def _number(value: Any) -> Any:
    return math.nan if value is None else value


def sample_row(summary: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """One sample-epoch's row (from its summary as stored JSON), carrying its run's key so the
    frame needs no join."""
    meta = summary.get("metadata") or {}
    usage = summary.get("model_usage")
    row = {
        key: run[key]
        for key in ("log", "created", *RUN_KEY, "entrant", "checkpoint_step", "checkpoint_label")
    }
    row |= {
        "checkpoint_run": run["checkpoint_run"],
        "sample_id": str(summary["id"]),
        "epoch": summary["epoch"],
        "competition_id": meta.get("competition_id", str(summary["id"])),
        **{key: meta.get(key) for key in ("metric", "modality", "task_type")},
        "tokens": _usage(usage),
        "input_tokens": _usage(usage, "input_tokens"),
        "output_tokens": _usage(usage, "output_tokens"),
        "total_time": summary.get("total_time"),
        "working_time": summary.get("working_time"),
        "limit": summary.get("limit"),
        "error": summary.get("error"),
        "message_count": summary.get("message_count"),
    }
    fields = _score_fields(summary)
    row["competition_id"] = fields.pop("competition_id", None) or row["competition_id"]
    return row | fields


def unreadable(exc: Exception) -> str:
    """Why a log could not be read, in words (a zip reader's "EOCD not found" says little)."""
    if isinstance(exc, zipfile.BadZipFile) or "EOCD" in str(exc):
        return "unreadable log: not a complete .eval file (cut short, or not a log)"
    return f"unreadable log ({type(exc).__name__}: {exc})"


def _as_json(model: EvalLog | EvalSampleSummary) -> dict[str, Any]:
    """A model Inspect's reader gave, in the shape the log stores it (``log_json``'s)."""
    return model.model_dump(mode="json", exclude_none=True)


def record_of(path: str, header: dict[str, Any], summaries: list[dict[str, Any]]) -> LogRecord:
    run = run_row(header, path)
    return LogRecord(run=run, samples=[sample_row(s, run) for s in summaries])


async def read_log_record(path: str) -> LogRecord:
    """Read one log's header and sample summaries with Inspect's readers; raises
    ``LogSkipped`` with the reason."""
    try:
        header = _as_json(await read_eval_log_async(path, header_only=True))
        run_row(header, path)  # a foreign or unfinished log: skipped before its samples
        summaries = await read_eval_log_sample_summaries_async(path)
        return record_of(path, header, [_as_json(s) for s in summaries])
    except LogSkipped:
        raise
    except Exception as exc:  # noqa: BLE001 - any broken file is skipped, never fatal
        raise LogSkipped(unreadable(exc)) from exc


def read_stored(path: str) -> LogRecord | str | None:
    """``path``'s record from its stored JSON (``log_json``), its skip reason, or None when
    Inspect's readers must read it."""
    stored = stored_log(path)
    if stored is None:
        return None
    try:
        return record_of(path, *stored)
    except LogSkipped as exc:
        return str(exc)
    except Exception:  # noqa: BLE001 - an unexpected shape: Inspect's reader decides
        return None


async def _read_all(paths: list[str]) -> list[LogRecord | str]:
    limit = asyncio.Semaphore(READ_CONCURRENCY)

    async def one(path: str) -> LogRecord | str:
        async with limit:
            try:
                return await read_log_record(path)
            except LogSkipped as exc:
                return str(exc)

    return list(await asyncio.gather(*(one(p) for p in paths)))


def read_log_records(paths: list[str]) -> list[LogRecord | str]:
    """Records of ``paths`` (a skip reason where one is left out): finished logs from their
    stored JSON, the rest with Inspect's readers in one event loop."""
    records = {path: read_stored(path) for path in paths}
    rest = [path for path, record in records.items() if record is None]
    read = dict(zip(rest, _read_with_inspect(rest), strict=True)) if rest else {}
    return [records[path] or read[path] for path in paths]


def _read_with_inspect(paths: list[str]) -> list[LogRecord | str]:
    # One loop for all files: a loop per file costs more than reading a small log.
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_read_all(paths))
    with ThreadPoolExecutor(max_workers=1) as pool:  # called from async code: own thread
        return pool.submit(asyncio.run, _read_all(paths)).result()


def _frame(rows: Iterable[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame.from_records(list(rows), columns=columns)


def entrant_labels(frame: pd.DataFrame) -> pd.Series:
    """``model · scaffold``, with `` · run R`` where that model and scaffold ran more than once
    on a benchmark: two runs are two entrants, and their names say so."""
    name = frame["model"] + " · " + frame["scaffold"]
    if frame.empty:
        return name
    runs = frame.groupby(["model", "scaffold", "benchmark"])["run"].transform("nunique")
    return name.where(runs <= 1, name + " · run " + frame["run"].astype(str))


def frames(records: Sequence[LogRecord], skipped: dict[str, str] | None = None) -> LoadedLogs:
    """Tidy frames from log records, each entrant named once for all (``entrant_labels``)."""
    runs = _frame((r.run for r in records), RUN_COLUMNS)
    samples = _frame((s for r in records for s in r.samples), SAMPLE_COLUMNS)
    runs["entrant"] = entrant_labels(runs)
    samples["entrant"] = entrant_labels(samples)
    return LoadedLogs(runs=runs, samples=samples, skipped=dict(skipped or {}))


def pool_runs(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every run of a model × scaffold pooled into one entrant (asked for only)."""
    return frame.assign(run=POOLED, entrant=frame["model"] + " · " + frame["scaffold"])


def _local(name: str) -> str:
    return name.removeprefix("file://")


CACHE_ENV = "SANDMLE_LEADERBOARD_CACHE"
"""File the app keeps its parsed logs in between runs (default under ``~/.cache/sandmle``)."""
CACHE_FORMAT = (4, tuple(RUN_COLUMNS), tuple(SAMPLE_COLUMNS))
"""A cache file written with other columns is ignored, never misread."""


def default_cache_file() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache/sandmle/leaderboard.pkl"


@dataclass
class LogCache:
    """Records of logs read so far, keyed by path with (mtime, size) to spot rewrites.

    With a ``file``, the records also persist between processes, so a restarted app reads
    only logs that are new or changed since.
    """

    entries: dict[str, tuple[tuple[float, int], LogRecord | str]] = field(default_factory=dict)
    """Path -> (mtime, size) and its record, or the reason it was skipped."""
    file: Path | None = None
    """Where the entries are kept between processes (None: this process only)."""
    _last: tuple[tuple, LoadedLogs] | None = None

    @classmethod
    def persistent(cls, file: Path | None = None) -> LogCache:
        """A cache that starts from (and saves to) ``file``; an unreadable file starts empty."""
        path = file or default_cache_file()
        try:
            with path.open("rb") as handle:
                stored = pickle.load(handle)  # our own file, written by ``save``
            entries = stored["entries"] if stored.get("format") == CACHE_FORMAT else {}
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, KeyError, TypeError):
            entries = {}
        return cls(entries=entries, file=path)

    def save(self) -> None:
        """Write the entries of logs that still exist to ``file`` (atomically)."""
        if self.file is None:
            return
        alive = {p: e for p, e in self.entries.items() if "://" in p or Path(p).exists()}
        self.file.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.file.with_suffix(f".{os.getpid()}.tmp")
        with tmp.open("wb") as handle:
            pickle.dump({"format": CACHE_FORMAT, "entries": alive}, handle)
        tmp.replace(self.file)

    def _refresh(self, listing: dict[str, tuple[float, int]]) -> None:
        """Read the listed logs that are new or changed since they were last read."""
        stale = [p for p, stamp in listing.items() if self.entries.get(p, (None,))[0] != stamp]
        for path, entry in zip(stale, read_log_records(stale), strict=True):
            self.entries[path] = (listing[path], entry)
        for path in listing:  # every skipped log is named on each load, cached or not
            entry = self.entries[path][1]
            if isinstance(entry, str):
                warnings.warn(f"skipped {path}: {entry}", SkippedLogWarning, stacklevel=3)
        if stale:
            try:
                self.save()
            except OSError as exc:  # a read-only home must not stop the leaderboard
                warnings.warn(f"leaderboard cache not saved: {exc}", stacklevel=3)

    def load(self, log_dirs: Sequence[str | Path]) -> LoadedLogs:
        """Every log under ``log_dirs`` (recursively), reading only new or changed files."""
        listing: dict[str, tuple[float, int]] = {}
        for log_dir in log_dirs:
            if Path(log_dir).exists() or "://" in str(log_dir):
                for info in list_eval_logs(str(log_dir)):
                    listing[_local(info.name)] = (info.mtime or 0.0, info.size)
        key = tuple(sorted(listing.items()))
        if self._last is not None and self._last[0] == key:
            return self._last[1]
        self._refresh(listing)
        entries = {path: self.entries[path][1] for path in listing}
        records = [e for e in entries.values() if isinstance(e, LogRecord)]
        skipped = {path: e for path, e in entries.items() if isinstance(e, str)}
        loaded = frames(records, skipped)
        self._last = (key, loaded)
        return loaded


def load_logs(log_dirs: Sequence[str | Path], cache: LogCache | None = None) -> LoadedLogs:
    """Load every log under ``log_dirs``; pass a ``LogCache`` to reuse earlier reads."""
    return (cache or LogCache()).load(log_dirs)
