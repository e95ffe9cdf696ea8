"""The environment server's cost, on this machine. Prints JSON.

1. Per-step overhead of the server path: the same cheap step (a turn without a tool call, which
   react answers with its nudge: no sandbox command runs) timed in-process
   (``sandmle.env.environment.Environment``) and through ``sandmle env serve`` with OpenEnv's
   client; medians side by side and their difference (the goal: at most 20 ms).
2. Episodes per minute at 1, 4 and 8 concurrent clients (each episode: reset, list the data,
   copy the sample submission, submit), with the server's ``max_episodes`` set to the
   concurrency: the time to first observation (worker start and sandbox setup) and the whole
   episode, medians.

Usage: python bench/env_server.py [--steps N] [--concurrency 1,4,8] [--pack DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from sandmle.env.environment import Environment, PackTasks, Slots
from sandmle.specs.environment import EnvSettings
from sandmle.specs.episode import EpisodeSpec

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "competitions"
NUDGE = {"text": "thinking, no tool call yet"}
COPY = "cp /home/data/sample_submission.csv /home/submission/submission.csv"
EPISODE = [
    {"text": '<tool_call>{"name": "bash", "arguments": {"command": "ls /home/data"}}</tool_call>'},
    {"text": '<tool_call>{"name": "bash", "arguments": {"command": "%s"}}</tool_call>' % COPY},  # noqa: UP031
    {"text": '<tool_call>{"name": "submit", "arguments": {"answer": "x"}}</tool_call>'},
]


def _pack(out: Path) -> Path:
    for name in ("plant-watering", "bike-rentals"):
        shutil.copytree(FIXTURES / name, out / name)
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def in_process_steps(settings: EnvSettings, steps: int) -> list[float]:
    async def run() -> list[float]:
        env = Environment(settings, PackTasks(settings), Slots(1, 0, 60))
        await env.reset(index=0)
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            await env.step(NUDGE)
            times.append(time.perf_counter() - start)
        await env.aclose()
        return times

    return asyncio.run(run())


def serve(pack: Path, logs: Path, episodes: int, max_turns: int) -> tuple[subprocess.Popen, str]:
    config = logs.parent / f"env-{episodes}.yaml"
    config.write_text(
        json.dumps(
            {
                "pack": str(pack),
                "log_dir": str(logs),
                "max_episodes": episodes,
                "episode": {"max_turns": max_turns},
            }
        )  # fmt: skip
    )  # JSON is YAML
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandmle.cli", "env", "serve", "--config", str(config),
         "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2):
                return proc, url
        except OSError:
            time.sleep(1)
    proc.kill()
    raise RuntimeError("the server did not start in 600 s")


def server_steps(url: str, steps: int) -> list[float]:
    from openenv.core.generic_client import GenericEnvClient

    with GenericEnvClient(base_url=url, message_timeout_s=600).sync() as env:
        env.reset(index=0)
        times = []
        for _ in range(steps):
            start = time.perf_counter()
            env.step(NUDGE)
            times.append(time.perf_counter() - start)
    return times


def one_episode(url: str, index: int) -> dict[str, float]:
    from openenv.core.generic_client import GenericEnvClient

    start = time.perf_counter()
    with GenericEnvClient(base_url=url, message_timeout_s=900).sync() as env:
        env.reset(index=index % 2)
        first = time.perf_counter() - start
        for action in EPISODE:
            if env.step(action).done:
                break
    return {"first_observation_s": first, "episode_s": time.perf_counter() - start}


def throughput(url: str, concurrency: int) -> dict[str, Any]:
    episodes = 2 * concurrency
    start = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        runs = list(pool.map(lambda i: one_episode(url, i), range(episodes)))
    wall = time.perf_counter() - start
    return {
        "concurrency": concurrency,
        "episodes": episodes,
        "episodes_per_minute": round(60 * episodes / wall, 2),
        "median_first_observation_s": round(
            statistics.median(r["first_observation_s"] for r in runs), 2
        ),
        "median_episode_s": round(statistics.median(r["episode_s"] for r in runs), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--concurrency", default="1,4,8")
    parser.add_argument("--pack", type=Path, default=None)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-env-"))
    pack = args.pack or _pack(work / "pack")
    turns = args.steps + 5
    settings = EnvSettings(pack=str(pack), log_dir=str(work / "inproc"),
                           episode=EpisodeSpec(max_turns=turns))  # fmt: skip
    local = in_process_steps(settings, args.steps)
    proc, url = serve(pack, work / "served", 1, turns)
    try:
        remote = server_steps(url, args.steps)
    finally:
        proc.terminate()
        proc.wait()
    report: dict[str, Any] = {
        "machine_cpus": __import__("os").cpu_count(),
        "per_step": {
            "steps": args.steps,
            "in_process_median_ms": round(1000 * statistics.median(local), 2),
            "server_median_ms": round(1000 * statistics.median(remote), 2),
            "server_overhead_ms": round(
                1000 * (statistics.median(remote) - statistics.median(local)), 2
            ),
            "goal_overhead_ms": 20,
        },
        "throughput": [],
    }
    for concurrency in (int(c) for c in args.concurrency.split(",")):
        proc, url = serve(pack, work / f"served-{concurrency}", concurrency, 8)
        try:
            report["throughput"].append(throughput(url, concurrency))
        finally:
            proc.terminate()
            proc.wait()
    shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
