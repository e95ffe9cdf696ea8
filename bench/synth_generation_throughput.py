"""Generation throughput: tasks per minute, sanity checks included (prints JSON).

Usage: python bench/synth_generation_throughput.py [N] [WORKERS]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from sandmle.benchmarks.synthetic.packs import PackSpec, generate_pack


def main(n: int = 100, workers: int = 2) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        outcomes = generate_pack(
            PackSpec(n=n, seed=123, secret="throughput-bench-secret"),
            Path(tmp) / "pack",
            workers=workers,
            progress=False,
        )
        seconds = time.perf_counter() - start
    return {
        "tasks": n,
        "workers": workers,
        "cpus": os.cpu_count(),
        "seconds": round(seconds, 2),
        "tasks_per_minute": round(60 * n / seconds, 1),
        "rejected_attempts": sum(len(o.rejections) for o in outcomes),
        "empty_slots": sum(o.task_id is None for o in outcomes),
        "aim": "100 tasks < 120 s on 2 cores",
    }


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    print(json.dumps(main(*args), indent=2))
