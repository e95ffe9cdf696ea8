"""What the bwrap sandbox costs per exec: median wall time vs a bare subprocess, as JSON.

Usage: python bench/sandbox_exec_overhead.py [--runs 50]
"""

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

from sandmle.harness.sandbox import BwrapConfig, BwrapSandboxEnvironment

COMMANDS = {"true": ["true"], "python_pass": [sys.executable, "-c", "pass"]}


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def bare_ms(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return _median_ms(times)


async def _timed(action: Callable[[], Awaitable[object]], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        await action()
        times.append(time.perf_counter() - start)
    return _median_ms(times)


async def sandbox_ms(runs: int) -> dict[str, object]:
    config = BwrapConfig()
    setups, teardowns = [], []
    for _ in range(runs):
        start = time.perf_counter()
        envs = await BwrapSandboxEnvironment.sample_init("bench", config, {})
        setups.append(time.perf_counter() - start)
        start = time.perf_counter()
        await BwrapSandboxEnvironment.sample_cleanup("bench", config, envs, False)
        teardowns.append(time.perf_counter() - start)
    envs = await BwrapSandboxEnvironment.sample_init("bench", config, {})
    sandbox = envs["default"]
    try:
        execs = {
            name: await _timed(lambda cmd=cmd: sandbox.exec(cmd), runs)
            for name, cmd in COMMANDS.items()
        }
    finally:
        await BwrapSandboxEnvironment.sample_cleanup("bench", config, envs, False)
    return {"exec": execs, "setup_ms": _median_ms(setups), "teardown_ms": _median_ms(teardowns)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    runs = parser.parse_args().runs
    sandboxed = asyncio.run(sandbox_ms(runs))
    report: dict[str, object] = {"runs": runs}
    for name, cmd in COMMANDS.items():
        bare, boxed = bare_ms(cmd, runs), sandboxed["exec"][name]  # type: ignore[index]
        report[name] = {
            "bare_ms": bare,
            "bwrap_ms": boxed,
            "overhead_ms": round(boxed - bare, 2),
            "ratio": round(boxed / bare, 2),
        }
    report["sample_setup_ms"] = sandboxed["setup_ms"]
    report["sample_teardown_ms"] = sandboxed["teardown_ms"]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
