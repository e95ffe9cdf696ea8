"""Step time through the real sandbox: one standard pandas + scikit-learn baseline script, run
as the scaffolds run it (``bash -c "python solution.py > output.log 2>&1"`` in the bwrap
sandbox), on a micro task cold (no warm Python), on the same micro task warm, and on the same
generator's task at full scale (warm too, so only the data size differs). Medians of runs
interleaved in one process, plus the per-exec cost of a bare ``python -c pass``. A sample's
first step, warm vs cold, is measured on fresh samples, the order alternating (the first of
a pair fills the page cache for the second). Prints JSON, with warm/cold ratios.

Usage: python bench/synth_step_time.py [--full-rows 200000] [--runs 7] [--full-runs 3]
  [--first-runs 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from sandmle.benchmarks.synthetic.blueprint import TaskRequest
from sandmle.benchmarks.synthetic.developer import develop
from sandmle.benchmarks.synthetic.seeds import get_seed
from sandmle.benchmarks.synthetic.strategist import plan
from sandmle.harness.sandbox import BwrapConfig, BwrapSandboxEnvironment
from sandmle.harness.sandbox.warm import WarmPythonConfig

SEED = "tabular-playground-series-may-2022"
READY_TIMEOUT_S = 300
NODE_DIR = "nodes/0"

# What an agent's first script on a tabular task looks like: read, encode, hold out, fit a
# forest, score, predict, write the submission.
BASELINE = """
import sys
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

target, key = sys.argv[1], sys.argv[2]
train = pd.read_csv("/home/data/train.csv")
test = pd.read_csv("/home/data/test.csv")
y = train.pop(target)
features = pd.get_dummies(pd.concat([train, test]).drop(columns=[key]), dummy_na=True)
features = features.fillna(features.median(numeric_only=True))
x_train, x_test = features.iloc[: len(train)], features.iloc[len(train) :]
x_fit, x_val, y_fit, y_val = train_test_split(x_train, y, test_size=0.2, random_state=0)
model = RandomForestClassifier(n_estimators=100, n_jobs=1, random_state=0).fit(x_fit, y_fit)
print("validation AUC", round(roc_auc_score(y_val, model.predict_proba(x_val)[:, 1]), 4))
submission = pd.DataFrame({key: test[key], target: model.predict_proba(x_test)[:, 1]})
submission.to_csv("/home/submission/submission.csv", index=False)
"""
RUN = "python solution.py {target} {key} > output.log 2>&1"


def _blueprint(rows: int):
    bp = plan(TaskRequest(index=0, dna=get_seed(SEED), entropy=[1, 0, 0]))
    if rows:
        n_test = rows // 5
        bp = bp.model_copy(update={"n_train": rows - n_test, "n_test": n_test})
    return bp


def write_public(bp, folder: Path) -> tuple[str, str, int]:
    """The task's public CSVs, world-readable; returns (target, id column, rows)."""
    task = develop(bp)
    folder.mkdir(parents=True)
    task.train.to_csv(folder / "train.csv", index=False)
    task.test.to_csv(folder / "test.csv", index=False)
    for path in (folder, *folder.iterdir()):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return bp.domain.target_columns[0], "id", len(task.train) + len(task.test)


@asynccontextmanager
async def sample(config: BwrapConfig) -> AsyncIterator[BwrapSandboxEnvironment]:
    envs = await BwrapSandboxEnvironment.sample_init("bench", config, {})
    sandbox = envs["default"].as_type(BwrapSandboxEnvironment)
    try:
        if sandbox.warm is not None:
            ready = await asyncio.to_thread(sandbox.warm.ready.wait, READY_TIMEOUT_S)
            if not ready:
                raise SystemExit("error: the warm Python server did not start")
        yield sandbox
    finally:
        await BwrapSandboxEnvironment.sample_cleanup("bench", config, envs, False)


async def step_seconds(sandbox: BwrapSandboxEnvironment, run: str) -> float:
    """One scaffold step's exec: the script run, its output to a log."""
    await sandbox.exec(["bash", "-c", f"mkdir -p {NODE_DIR} && rm -f /home/submission/*"])
    await sandbox.write_file(f"{NODE_DIR}/solution.py", BASELINE)
    start = time.perf_counter()
    result = await sandbox.exec(["bash", "-c", run], cwd=NODE_DIR, timeout=3600)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        log = await sandbox.read_file(f"{NODE_DIR}/output.log")
        raise SystemExit(f"error: the baseline script failed: {log.strip()[-500:]}")
    await sandbox.read_file("/home/submission/submission.csv")  # it must have written one
    return elapsed


async def exec_ms(sandbox: BwrapSandboxEnvironment, cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = await sandbox.exec(cmd)
        times.append(time.perf_counter() - start)
        if result.returncode != 0:
            raise SystemExit(f"error: {cmd} failed: {result.stderr.strip()[-300:]}")
    return round(statistics.median(times) * 1000, 1)


async def paired_exec_ms(
    cold: BwrapSandboxEnvironment, warm: BwrapSandboxEnvironment, cmd: list[str], runs: int
) -> tuple[float, float]:
    """Median ms of `cmd` in each sandbox, interleaved (who goes first alternating), so a
    load change on the host hits both alike."""
    times: dict[str, list[float]] = {"cold": [], "warm": []}
    for i in range(runs):
        order = (("cold", cold), ("warm", warm)) if i % 2 == 0 else (("warm", warm), ("cold", cold))
        for kind, box in order:
            start = time.perf_counter()
            result = await box.exec(cmd)
            times[kind].append(time.perf_counter() - start)
            if result.returncode != 0:
                raise SystemExit(f"error: {cmd} failed: {result.stderr.strip()[-300:]}")
    cold_ms, warm_ms = (round(statistics.median(times[k]) * 1000, 1) for k in ("cold", "warm"))
    return cold_ms, warm_ms


def bare_ms(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1000, 1)


def _config(public: Path, base: Path, warm: bool) -> BwrapConfig:
    return BwrapConfig(public_dir=public, base_dir=base, warm_python=WarmPythonConfig(enabled=warm))


async def first_steps(public: Path, base: Path, run: str, pairs: int) -> dict[str, list[float]]:
    """A fresh sample's first step, warm and cold, `pairs` times, who goes first alternating."""
    firsts: dict[str, list[float]] = {"warm": [], "cold": []}
    for i in range(pairs):
        order = ("warm", "cold") if i % 2 == 0 else ("cold", "warm")
        for kind in order:
            async with sample(_config(public, base, kind == "warm")) as box:
                firsts[kind].append(await step_seconds(box, run))
    return firsts


async def measure(full_rows: int, runs: int, full_runs: int, first_runs: int, work: Path) -> dict:
    micro_bp, full_bp = _blueprint(0), _blueprint(full_rows)
    target, key, micro_rows = write_public(micro_bp, work / "micro")
    _, _, full_n = write_public(full_bp, work / "full")
    run = RUN.format(target=target, key=key)
    base = work / "sandboxes"
    firsts = await first_steps(work / "micro", base, run, first_runs)
    first_warm, first_cold = (statistics.median(firsts[k]) for k in ("warm", "cold"))
    cold_steps, warm_steps = [], []
    async with (
        sample(_config(work / "micro", base, False)) as cold,
        sample(_config(work / "micro", base, True)) as warm,
    ):
        await step_seconds(warm, run)  # the server imports what the script names
        for _ in range(runs):  # interleaved, so load changes hit both alike
            cold_steps.append(await step_seconds(cold, run))
            warm_steps.append(await step_seconds(warm, run))
        cold_pass, warm_pass = await paired_exec_ms(cold, warm, ["python", "-c", "pass"], runs * 6)
        overhead = {
            "bare_python_pass_ms": bare_ms([sys.executable, "-c", "pass"], runs * 3),
            "bare_true_ms": bare_ms(["true"], runs * 3),
            "sandbox_true_ms": await exec_ms(cold, ["true"], runs * 3),
            "sandbox_cold_python_pass_ms": cold_pass,
            "sandbox_warm_python_pass_ms": warm_pass,
        }
    async with sample(_config(work / "full", base, True)) as full:
        full_steps = [await step_seconds(full, run) for _ in range(full_runs)]
    cold_s, warm_s = statistics.median(cold_steps), statistics.median(warm_steps)
    full_s = statistics.median(full_steps)
    overhead["sandbox_exec_overhead_ms"] = round(
        overhead["sandbox_true_ms"] - overhead["bare_true_ms"], 1
    )
    headline = (
        f"micro warm {warm_s:.2f} s, cold {cold_s:.2f} s, {full_n} rows {full_s:.1f} s: "
        f"warm {cold_s / warm_s:.1f}x faster than cold, {full_s / warm_s:.0f}x than full; "
        f"sandbox exec overhead {overhead['sandbox_exec_overhead_ms']} ms"
    )
    return {
        "headline": headline,
        "seed_task": SEED,
        "script": "pandas read/get_dummies + RandomForest(100) holdout + submission",
        "cores": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "micro_rows": micro_rows,
        "full_rows": full_n,
        "runs": runs,
        "full_runs": full_runs,
        "micro_cold_median_s": round(cold_s, 3),
        "micro_warm_median_s": round(warm_s, 3),
        "micro_first_step_s": {
            "cold": round(first_cold, 3),
            "warm": round(first_warm, 3),
            "warm_over_cold": round(first_warm / first_cold, 3),
            "runs": {k: [round(v, 3) for v in vs] for k, vs in firsts.items()},
        },
        "python_pass_warm_over_cold": round(
            overhead["sandbox_warm_python_pass_ms"] / overhead["sandbox_cold_python_pass_ms"], 3
        ),
        "full_median_s": round(full_s, 2),
        "warm_speedup_vs_cold": round(cold_s / warm_s, 1),
        "warm_speedup_vs_full": round(full_s / warm_s, 1),
        "cold_speedup_vs_full": round(full_s / cold_s, 1),
        "exec": overhead,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full-rows", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--full-runs", type=int, default=3)
    parser.add_argument("--first-runs", type=int, default=4)
    args = parser.parse_args()
    if args.full_rows < 200_000:
        print("note: full scale below 200k rows is not the SandMLE comparison", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="sandmle-step-") as tmp:
        work = Path(tmp)
        work.chmod(0o755)
        report = asyncio.run(
            measure(args.full_rows, args.runs, args.full_runs, args.first_runs, work)
        )
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
