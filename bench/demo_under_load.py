"""``sandmle demo`` on a busy machine: wall time, exit code and verdict. Prints JSON.

Starts ``--load N`` busy-loop processes (each ends by itself after ``--load-s`` seconds, so
a killed bench leaves no load behind), then runs ``python -m sandmle.cli demo --log-dir
<fresh dir> [ARGS]`` with its output in a file (no terminal, as issue #40's check does) and
reports: wall seconds; the exit code; the load average before, during (sampled) and after;
the widest output line; the ranking lines of the leaderboard; the "missing:" lines of a demo
cut short; and whether ``report.html`` holds the search-tree nodes' code.

Usage: python bench/demo_under_load.py [--load 2] [--load-s 900] [--keep DIR] [-- DEMO ARGS]
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def busy(seconds: float) -> None:
    """One core's worth of load, for ``seconds`` at most."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def start_load(n: int, seconds: float) -> list[multiprocessing.Process]:
    procs = [multiprocessing.Process(target=busy, args=(seconds,), daemon=True) for _ in range(n)]
    for proc in procs:
        proc.start()
    return procs


class LoadSampler:
    """The 1-minute load average every ``every`` seconds while the demo runs."""

    def __init__(self, every: float = 15.0) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every,), daemon=True)

    def _run(self, every: float) -> None:
        while not self._stop.wait(every):
            self.samples.append(os.getloadavg()[0])

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def verdict(out: str, log_dir: Path) -> dict:
    """What the demo's output and report say, in a few fields."""
    lines = out.splitlines()
    report = log_dir / "report.html"
    html = report.read_text(encoding="utf-8", errors="replace") if report.exists() else ""
    return {
        "widest_line": max((len(line) for line in lines), default=0),
        "rank_lines": [line.strip() for line in lines if " · " in line and "[" in line],
        "missing_lines": [line for line in lines if line.startswith("missing:")],
        "last_lines": lines[-4:],
        "report_written": report.exists(),
        "report_has_node_code": has_node_code(html),
    }


def has_node_code(html: str) -> bool:
    """Whether the export shows a search-tree node with code: its drill-downs are packed
    (gzip + base64, ``export_drill.packed``), so look inside the packs too."""
    texts = [html]
    for pack in re.findall(r"H4sI[A-Za-z0-9+/=]+", html):  # base64 of gzip's magic bytes
        try:
            texts.append(gzip.decompress(base64.b64decode(pack)).decode("utf-8", "replace"))
        except (OSError, ValueError):
            continue
    return any("class='node'" in text and "<pre" in text for text in texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load", type=int, default=2, help="busy-loop processes")
    parser.add_argument("--load-s", type=float, default=900, help="their lifetime, seconds")
    parser.add_argument("--keep", type=Path, help="write the demo's logs and output here")
    parser.add_argument("demo_args", nargs="*", help="after --: extra `sandmle demo` arguments")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="demo-load-"))
    log_dir, out_file = root / "logs", root / "out.txt"
    root.mkdir(parents=True, exist_ok=True)
    load = start_load(args.load, args.load_s)
    before = os.getloadavg()
    cmd = [sys.executable, "-m", "sandmle.cli", "demo", "--log-dir", str(log_dir), *args.demo_args]
    started = time.monotonic()
    with LoadSampler() as sampler, out_file.open("w") as out:
        rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=no_terminal()).returncode
    wall = time.monotonic() - started
    for proc in load:
        proc.terminate()
    result = {
        "cmd": " ".join(cmd[2:]),
        "load_procs": args.load,
        "cpus": os.cpu_count(),
        "rc": rc,
        "wall_s": round(wall, 1),
        "loadavg_before": [round(x, 2) for x in before],
        "loadavg_during_max": max(sampler.samples, default=None),
        "loadavg_during_mean": (
            round(sum(sampler.samples) / len(sampler.samples), 2) if sampler.samples else None
        ),
        "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        "out": str(out_file),
        **verdict(out_file.read_text(encoding="utf-8"), log_dir),
    }
    print(json.dumps(result, indent=2, ensure_ascii=False))


def no_terminal() -> dict[str, str]:
    """The environment of ``sandmle demo > out.txt``: no COLUMNS a terminal would set."""
    return {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}


if __name__ == "__main__":
    main()
