"""Run every figure script of the project; write one JSON file and a short markdown table.

Each script prints one JSON object (its last stdout line) and measures its comparison side by
side in its own process. Usage: python bench/run_all.py [--out DIR] [--full]
(default: quick settings that finish in a few minutes on 2 cores; --full: the scripts' own).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent

# name, script, quick args, what the headline figure is
FIGURES: list[tuple[str, str, list[str], str]] = [
    (
        "sandbox exec overhead",
        "sandbox_exec_overhead.py",
        ["--runs", "20"],
        "bwrap vs bare subprocess",
    ),
    (
        "SandMLE step time (warm Python)",
        "synth_step_time.py",
        ["--full-rows", "200000", "--runs", "5", "--full-runs", "1"],
        "baseline script in the sandbox: micro cold / warm vs 200k rows",
    ),
    (
        "demo wall time (warm Python)",
        "demo_wall_time.py",
        ["--pairs", "1", "--demo-tasks", "2"],
        "sandmle demo on 2 tasks, --no-warm-python vs warm, side by side",
    ),
    (
        "grading throughput",
        "grading_throughput.py",
        ["--rows", "100000", "--runs", "3"],
        "vs pandas+sklearn",
    ),
    ("generation throughput", "synth_generation_throughput.py", ["20"], "tasks per minute"),
    ("pack difficulty", "synth_difficulty.py", ["@builtin"], "baselines' tiers, built-in pack"),
    (
        "rollout throughput",
        "training_rollouts.py",
        ["--episodes", "4", "--parallel", "1,2", "--steps", "2", "--warm-pairs", "1"],
        "episodes per minute; step time split",
    ),
    (
        "environment server",
        "env_server.py",
        ["--steps", "10", "--concurrency", "1,4"],
        "per-step overhead vs in-process; episodes per minute",
    ),
    (
        "leaderboard load and export",
        "leaderboard_load.py",
        ["--logs", "300"],
        "a real 24-sample log copied: export, drill-downs reachable, app warm reload",
    ),
    (
        "Ray pool",
        "ray_pool.py",
        ["--episodes", "4", "--sim-episodes", "32", "--overhead-episodes", "10"],
        "episodes per minute on 1 and 2 worker nodes; simulated up to 4; overhead per episode",
    ),
    ("bounded grading", "bounded_grading.py", ["--runs", "10"], "capped subprocess vs in-process"),
    ("CLI start-up", "cli_import_time.py", ["--repeat", "2"], "help time per command"),
]


def run_figure(script: str, args: list[str], timeout: int) -> dict:
    path = HERE / script
    if not path.is_file():
        return {"error": f"{script} is missing"}
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, str(path), *args], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    result = _last_json(proc.stdout)
    if proc.returncode != 0 or result is None:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit {proc.returncode}: {tail}"}
    result["_wall_s"] = round(time.perf_counter() - start, 1)
    return result


def _last_json(stdout: str) -> dict | None:
    """The script's JSON: its whole output, or else its last one-line object."""
    try:
        return json.loads(stdout)
    except json.JSONDecodeError:
        lines = [ln for ln in stdout.splitlines() if ln.strip().startswith("{")]
        return json.loads(lines[-1]) if lines else None


def _headline(result: dict) -> str:
    if "error" in result:
        return f"error: {result['error']}"
    if "headline" in result:  # the script's own summary of its figure
        return str(result["headline"])
    flat = json.dumps({k: v for k, v in result.items() if not k.startswith("_")})
    return flat if len(flat) <= 160 else flat[:157] + "..."


def machine_line() -> str:
    """Cores and load: every figure here is measured on this machine, with this load."""
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"Machine: {os.cpu_count()} cores, load average {load} (1, 5, 15 min) at the end."


def markdown(results: dict[str, dict]) -> str:
    rows = [machine_line(), "", "| figure | what | result |", "|---|---|---|"]
    for name, _, _, what in FIGURES:
        rows.append(f"| {name} | {what} | `{_headline(results[name])}` |")
    rows.append("")
    for name, script, _, _ in FIGURES:  # every figure in full, not only its headline
        rows += ["", f"## {name} (`bench/{script}`)", "", "```json"]
        rows += [json.dumps(results[name], indent=2), "```"]
    return "\n".join(rows) + "\n"


def _resolve(args: list[str]) -> list[str]:
    if "@builtin" not in args:
        return args
    from sandmle.benchmarks.synthetic.builtin import builtin_pack_dir

    return [str(builtin_pack_dir()) if a == "@builtin" else a for a in args]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--full", action="store_true", help="the scripts' own (long) settings")
    parser.add_argument("--timeout", type=int, default=900)
    args = parser.parse_args()
    results: dict[str, dict] = {}
    for name, script, quick, _ in FIGURES:
        print(f"running {name} ({script}) ...", file=sys.stderr, flush=True)
        results[name] = run_figure(script, [] if args.full else _resolve(quick), args.timeout)
    args.out.mkdir(parents=True, exist_ok=True)
    results["_machine"] = {"cores": os.cpu_count(), "load_avg": list(os.getloadavg())}
    (args.out / "figures.json").write_text(json.dumps(results, indent=2) + "\n")
    table = markdown(results)
    (args.out / "figures.md").write_text(table)
    print(table)
    failed = [name for name, result in results.items() if "error" in result]  # _machine has none
    if failed:
        sys.exit(f"figures that failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
