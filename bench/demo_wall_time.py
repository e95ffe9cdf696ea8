"""``sandmle demo`` wall time with warm Python on and off, side by side in one run. Prints JSON.

Each run is the real command (``python -m sandmle.cli demo --log-dir <fresh dir>``, with
``--no-warm-python`` for cold) in a subprocess, in ABBA order (cold, warm, warm, cold, ...) so a
load that drifts during the run weighs on both alike. Per run: wall seconds; CPU seconds of
the whole demo process tree, sandboxed runs included (``tree_cpu_s``: a cgroup-v1 ``cpuacct``
group of its own, which the sample cgroups leave alone; null where there is none or not as
root), far less noisy than wall time on a shared machine; and where the time went, from the
eval logs: summed over samples, seconds in sandbox set-up,
``python`` execs, other execs, model calls and scoring; for the demo, the seconds before the
first eval started (imports, pack check, preflight) and after the last one ended (report).

``--baseline-src DIR`` adds a third mode, ``warm@baseline``: the demo run from another copy of
the sandmle package (``DIR/sandmle``, e.g. this tree with an older warm Python), for a
before/after comparison; ``--src DIR`` runs cold and warm from such a copy too, so a tree that
others edit during the run cannot tilt it.

Usage: python bench/demo_wall_time.py [--pairs 2] [--task ID ... | --demo-tasks N] [--src DIR]
       [--baseline-src DIR] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

MODES = ("cold", "warm")
PHASES = ("setup", "python_exec", "other_exec", "model", "scoring", "rest")


def _seconds(stamp: Any) -> float:
    if isinstance(stamp, datetime):
        return stamp.timestamp()
    return datetime.fromisoformat(str(stamp)).timestamp()


CPUACCT = Path("/sys/fs/cgroup/cpuacct")


class CpuGroup:
    """A cgroup-v1 cpuacct group the run's whole process tree starts in (None: unavailable)."""

    def __init__(self, name: str) -> None:
        self.path: Path | None = None
        if os.geteuid() == 0 and (CPUACCT / "cpuacct.usage").is_file():
            self.path = CPUACCT / name
            self.path.mkdir()

    def wrap(self, cmd: list[str]) -> list[str]:
        if self.path is None:
            return cmd
        join = 'echo $$ > "$0/cgroup.procs" && exec "$@"'
        return ["sh", "-c", join, str(self.path), *cmd]

    def seconds(self) -> float | None:
        if self.path is None:
            return None
        return int((self.path / "cpuacct.usage").read_text()) / 1e9

    def remove(self) -> None:
        for _ in range(50):  # the demo's last sandboxes may still be dying
            try:
                if self.path is not None:
                    self.path.rmdir()
                return
            except OSError:
                time.sleep(0.2)


def run_demo(mode: str, log_dir: Path, tasks: list[str], src: Path | None) -> dict:
    """One demo run in a subprocess (sandmle from `src` when given): wall and CPU seconds."""
    cmd = [sys.executable, "-m", "sandmle.cli", "demo", "--log-dir", str(log_dir)]
    cmd += [arg for task in tasks for arg in ("--task", task)]
    if mode == "cold":
        cmd.append("--no-warm-python")
    env, cwd = dict(os.environ), None
    if src is not None:  # before the editable install; and -m puts the cwd first: be there
        env["PYTHONPATH"] = os.pathsep.join([str(src), env.get("PYTHONPATH", "")])
        cwd = str(src)
    load = os.getloadavg()[0]
    group = CpuGroup(f"sandmle-bench-{os.getpid()}-{log_dir.name}")
    try:
        start = time.perf_counter()
        proc = subprocess.run(group.wrap(cmd), capture_output=True, text=True, env=env, cwd=cwd)
        wall = time.perf_counter() - start
        cpu = group.seconds()
    finally:
        group.remove()
    result = {
        "mode": mode,
        "wall_s": round(wall, 2),
        "tree_cpu_s": round(cpu, 2) if cpu is not None else None,
        "load_1min_before": round(load, 2),
        "exit": proc.returncode,
        "started_at": time.time() - wall,
    }
    if proc.returncode != 0:
        result["error"] = (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]
    return result


def profile(log_dir: Path, started_at: float, wall_s: float) -> dict:
    """Where the demo's time went, from its eval logs (seconds summed over samples)."""
    from inspect_ai.log import read_eval_log

    phases: dict[str, float] = defaultdict(float)
    first_python: list[float] = []
    starts, ends, samples, python_execs = [], [], 0, 0
    for path in sorted(log_dir.glob("*.eval")):
        log = read_eval_log(str(path))
        starts.append(_seconds(log.stats.started_at))
        ends.append(_seconds(log.stats.completed_at))
        for sample in log.samples or []:
            samples += 1
            spent, firsts = _sample_phases(sample)
            python_execs += len(firsts)
            if firsts:
                first_python.append(firsts[0])
            for name, seconds in spent.items():
                phases[name] += seconds
    if not starts:
        return {}
    return {
        "samples": samples,
        "python_execs": python_execs,
        "before_evals_s": round(min(starts) - started_at, 2),
        "evals_s": round(max(ends) - min(starts), 2),
        "after_evals_s": round(started_at + wall_s - max(ends), 2),
        "sample_seconds": {name: round(phases[name], 1) for name in PHASES},
        "first_python_exec_median_s": _median(first_python),
    }


def _sample_phases(sample: Any) -> tuple[dict[str, float], list[float]]:
    """(seconds per phase, each python exec's seconds in order) of one sample."""
    spent: dict[str, float] = defaultdict(float)
    python: list[float] = []
    opened: dict[str, float] = {}
    for event in sample.events:
        kind = event.event
        if kind == "span_begin" and event.name in ("init", "scorers"):
            opened[event.name] = _seconds(event.timestamp)
        elif kind == "span_end" and "init" in opened and "setup" not in spent:
            spent["setup"] = _seconds(event.timestamp) - opened["init"]
        elif kind == "score" and "scorers" in opened:
            spent["scoring"] += _seconds(event.timestamp) - opened.pop("scorers")
        elif kind == "model" and event.completed is not None:
            spent["model"] += _seconds(event.completed) - _seconds(event.timestamp)
        elif kind == "sandbox" and event.action == "exec" and event.completed is not None:
            seconds = _seconds(event.completed) - _seconds(event.timestamp)
            if "python" in (event.cmd or ""):
                spent["python_exec"] += seconds
                python.append(seconds)
            else:
                spent["other_exec"] += seconds
    spent["rest"] = max((sample.total_time or 0.0) - sum(spent.values()), 0.0)
    return spent, python


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def order(pairs: int, modes: tuple[str, ...]) -> list[str]:
    """ABBA...: each pair of rounds runs the modes forwards, then backwards."""
    rounds = []
    for i in range(pairs):
        rounds += list(modes) if i % 2 == 0 else list(reversed(modes))
    return rounds


def summary(runs: list[dict], modes: tuple[str, ...]) -> dict:
    ok = [r for r in runs if r["exit"] == 0]
    med = {
        mode: {
            key: _median([r[key] for r in ok if r["mode"] == mode])
            for key in ("wall_s", "tree_cpu_s")
        }
        for mode in modes
    }
    out: dict[str, Any] = {"median": med}
    cold, warm = med["cold"]["wall_s"], med["warm"]["wall_s"]
    if cold and warm:
        out["warm_wall_saving"] = round(1 - warm / cold, 3)
        out["headline"] = (
            f"demo wall median cold {cold:.1f} s, warm {warm:.1f} s "
            f"({100 * (1 - warm / cold):.0f}% less; CPU {med['cold']['tree_cpu_s']} -> "
            f"{med['warm']['tree_cpu_s']} s)"
        )
    if (base := med.get("warm@baseline", {}).get("wall_s")) and cold:
        out["baseline_wall_saving"] = round(1 - base / cold, 3)
        out["headline"] = out.get("headline", "") + f"; warm@baseline {base:.1f} s"
    return out


def first_demo_tasks(n: int) -> list[str]:
    from sandmle.benchmarks.synthetic.builtin import builtin_pack_dir
    from sandmle.study.demo import demo_tasks

    return demo_tasks(builtin_pack_dir())[:n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2, help="rounds of every mode")
    parser.add_argument("--task", action="append", default=[], help="built-in task id")
    parser.add_argument("--demo-tasks", type=int, help="only the first N of the demo's tasks")
    parser.add_argument("--src", type=Path, help="dir holding the sandmle package to run")
    parser.add_argument("--baseline-src", type=Path, help="the same, for warm@baseline")
    parser.add_argument("--keep", type=Path, help="keep the demo logs under this dir")
    args = parser.parse_args()
    if args.demo_tasks:
        args.task += first_demo_tasks(args.demo_tasks)
    modes = MODES + (("warm@baseline",) if args.baseline_src else ())
    root = (args.keep or Path(tempfile.mkdtemp(prefix="demo-wall-"))).resolve()
    runs = []
    try:
        for i, mode in enumerate(order(args.pairs, modes)):
            log_dir = root / f"{i:02d}-{mode.replace('@', '-')}"
            print(f"run {i}: {mode} ...", file=sys.stderr, flush=True)
            src = args.baseline_src if mode == "warm@baseline" else args.src
            run = run_demo(mode, log_dir, args.task, src)
            run["profile"] = profile(log_dir, run.pop("started_at"), run["wall_s"])
            print(json.dumps(run), file=sys.stderr, flush=True)
            runs.append(run)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    result = {
        "machine": {
            "cores": os.cpu_count(),
            "load_avg_end": [round(x, 2) for x in os.getloadavg()],
        },
        "tasks": args.task or "the demo's default",
        "runs": runs,
        **summary(runs, modes),
    }
    print(json.dumps(result, indent=2))
    if any(r["exit"] != 0 for r in runs):
        sys.exit("some demo runs failed")


if __name__ == "__main__":
    main()
