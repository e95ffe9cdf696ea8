"""Bounded grading's cost: a forked, capped child per grading vs grading in-process.

Grades one submission many times both ways (in-process with warm caches, and through
``grade_csv_bounded``) and reports wall times (median and min: on a shared machine the min is
the closest to idle) and CPU per call (ours plus the grading server's and its children's);
the difference is what the time and memory caps cost per call. Also times a 100k-column hostile header through the bounded path.
Prints JSON.

Usage: python bench/bounded_grading.py [--rows N] [--runs R]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from sandmle.harness.competition import Competition, load_competition
from sandmle.harness.grading import bounded
from sandmle.harness.grading.bounded import grade_csv_bounded
from sandmle.harness.grading.report import grade_csv


def _competition(root: Path, rows: int) -> tuple[Competition, Path]:
    rng = np.random.default_rng(0)
    ids = [f"row_{i:07d}" for i in range(rows)]
    (root / "prepared/public").mkdir(parents=True)
    (root / "prepared/private").mkdir(parents=True)
    answers = pd.DataFrame({"id": ids, "target": rng.integers(0, 2, rows)})
    answers.to_csv(root / "prepared/private/answers.csv", index=False)
    answers.head(0).to_csv(root / "prepared/public/sample_submission.csv", index=False)
    config = {
        "id": "bounded",
        "name": "bounded",
        "metric": "roc_auc",
        "target_columns": ["target"],
        "thresholds": {"gold": 0.9, "silver": 0.8, "bronze": 0.7, "median": 0.6},
    }
    (root / "competition.yaml").write_text(yaml.safe_dump(config))
    submission = root / "submission.csv"
    pd.DataFrame({"id": ids, "target": rng.uniform(size=rows)}).to_csv(submission, index=False)
    return load_competition(root), submission


def _times_ms(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    """(median, min) wall time; on a shared, busy machine the min is the closest to idle."""
    fn()  # warm: caches, the fork server
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, min(times) * 1000


def _server_cpu_s() -> float:
    """CPU of the grading server and its reaped children (fields 14-17 of /proc/PID/stat)."""
    pid = bounded._server()._process.pid
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _cpu_ms(fn: Callable[[], object], runs: int, server: bool) -> float:
    """Mean CPU per call: ours, plus the server's and its children's for the bounded path."""
    fn()
    time.sleep(1.5)  # the server reaps the warm-up child
    start = time.process_time(), _server_cpu_s() if server else 0.0
    for _ in range(runs):
        fn()
    time.sleep(1.5)  # and the last child
    end = time.process_time(), _server_cpu_s() if server else 0.0
    return ((end[0] - start[0]) + (end[1] - start[1])) / runs * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        competition, submission = _competition(Path(tmp) / "bounded", args.rows)
        start = time.perf_counter()
        grade_csv_bounded(submission, competition)
        first_call_s = time.perf_counter() - start  # starts the fork server
        in_process = _times_ms(lambda: grade_csv(submission, competition), args.runs)
        bounded = _times_ms(lambda: grade_csv_bounded(submission, competition), args.runs)
        cpu_in = _cpu_ms(lambda: grade_csv(submission, competition), args.runs, False)
        cpu_bounded = _cpu_ms(lambda: grade_csv_bounded(submission, competition), args.runs, True)
        wide = Path(tmp) / "wide.csv"
        wide.write_text(",".join(f"c{i}" for i in range(100_000)) + "\n" + "1," * 99_999 + "1\n")
        start = time.perf_counter()
        report = grade_csv_bounded(wide, competition)
        wide_ms = (time.perf_counter() - start) * 1000
    result = {
        "rows": args.rows,
        "runs": args.runs,
        "server_start_s": round(first_call_s, 3),
        "in_process_median_ms": round(in_process[0], 2),
        "bounded_median_ms": round(bounded[0], 2),
        "overhead_per_call_median_ms": round(bounded[0] - in_process[0], 2),
        "in_process_min_ms": round(in_process[1], 2),
        "bounded_min_ms": round(bounded[1], 2),
        "overhead_per_call_min_ms": round(bounded[1] - in_process[1], 2),
        "in_process_cpu_ms": round(cpu_in, 2),
        "bounded_cpu_ms": round(cpu_bounded, 2),
        "overhead_per_call_cpu_ms": round(cpu_bounded - cpu_in, 2),
        "wide_100k_columns_ms": round(wide_ms, 2),
        "wide_reason": report.invalid_reason,
        "load_average_1m": os.getloadavg()[0],
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
