"""What the bwrap sandbox costs: per exec and per sample setup/teardown, vs a bare subprocess.

Bare and sandboxed runs alternate in one loop, so machine load hits both alike; medians
in ms, as JSON, for execs back to back and spaced by 100 ms (as agent turns are). The sandbox is the full one this host supports (cgroup, tmpfs quota,
seccomp; see "isolation" in the output). The agent's Python is the sandbox's default.

Usage: python bench/sandbox_exec_overhead.py [--runs 50]
"""

import argparse
import asyncio
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from sandmle.harness.sandbox import BwrapConfig, BwrapSandboxEnvironment
from sandmle.harness.sandbox._isolation import host_isolation


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def _commands(python: Path) -> dict[str, tuple[list[str], list[str]]]:
    """name: (bare argv, sandboxed argv) running the same program."""
    return {
        "true": (["true"], ["true"]),
        "python_pass": ([str(python), "-c", "pass"], ["python", "-c", "pass"]),
    }


def _bare(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - start


async def exec_overhead(config: BwrapConfig, runs: int, gap_s: float) -> dict[str, object]:
    """Per command, medians; `gap_s` of idle time precedes each sandboxed exec (untimed):
    agents' execs are spaced by model calls, which lets the next exec's bwrap, started
    one exec ahead, finish joining the sample's cgroup."""
    envs = await BwrapSandboxEnvironment.sample_init("bench", config, {})
    sandbox = envs["default"]
    report: dict[str, object] = {}
    try:
        for name, (bare_argv, boxed_argv) in _commands(config.python).items():
            bare, boxed = [], []
            await sandbox.exec(boxed_argv)  # warm the page cache for both
            for _ in range(runs):
                bare.append(await asyncio.to_thread(_bare, bare_argv))
                await asyncio.sleep(gap_s)
                start = time.perf_counter()
                result = await sandbox.exec(boxed_argv)
                boxed.append(time.perf_counter() - start)
                assert result.success, result.stderr
            overheads = [b - a for a, b in zip(bare, boxed, strict=True)]
            report[name] = {
                "bare_ms": _median_ms(bare),
                "sandbox_ms": _median_ms(boxed),
                "overhead_ms": _median_ms(overheads),
            }
    finally:
        await BwrapSandboxEnvironment.sample_cleanup("bench", config, envs, False)
    return report


async def sample_setup(config: BwrapConfig, runs: int) -> dict[str, float]:
    await BwrapSandboxEnvironment.sample_cleanup(  # the first layout probe is not per sample
        "bench", config, await BwrapSandboxEnvironment.sample_init("bench", config, {}), False
    )
    setups, teardowns = [], []
    for _ in range(runs):
        start = time.perf_counter()
        envs = await BwrapSandboxEnvironment.sample_init("bench", config, {})
        setups.append(time.perf_counter() - start)
        start = time.perf_counter()
        await BwrapSandboxEnvironment.sample_cleanup("bench", config, envs, False)
        teardowns.append(time.perf_counter() - start)
    return {"setup_ms": _median_ms(setups), "teardown_ms": _median_ms(teardowns)}


async def preflight_ms(config: BwrapConfig) -> float:
    BwrapSandboxEnvironment._preflown.clear()
    start = time.perf_counter()
    await BwrapSandboxEnvironment.preflight(config)
    return round((time.perf_counter() - start) * 1000, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory(prefix="sandmle-bench-") as base:
        config = BwrapConfig(base_dir=Path(base))
        report: dict[str, object] = {
            "runs": runs,
            "python": str(config.python),
            "isolation": host_isolation().as_metadata(),
            "exec_back_to_back": asyncio.run(exec_overhead(config, runs, 0.0)),
            "exec_spaced_100ms": asyncio.run(exec_overhead(config, runs, 0.1)),
            "sample": asyncio.run(sample_setup(config, runs)),
            "preflight_ms_once_per_task": asyncio.run(preflight_ms(config)),
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
