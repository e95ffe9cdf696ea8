"""Step time: one standard pandas + scikit-learn script on a micro task vs the same generator at
full scale (200k rows). Prints JSON with medians and the SandMLE speed-up ratio.

Usage: python bench/synth_step_time.py [FULL_ROWS] [RUNS]
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import pandas as pd
from sklearn.ensemble import RandomForestClassifier

from sandmle.benchmarks.synthetic.developer import develop
from sandmle.benchmarks.synthetic.modalities.tabular import features
from sandmle.benchmarks.synthetic.seeds import get_seed
from sandmle.benchmarks.synthetic.strategist import TaskRequest, plan

SEED = "tabular-playground-series-may-2022"


def _blueprint(rows: int):
    bp = plan(TaskRequest(index=0, dna=get_seed(SEED), entropy=[1, 0, 0]))
    if rows:
        n_test = rows // 5
        bp = bp.model_copy(update={"n_train": rows - n_test, "n_test": n_test})
    return bp


def _script_seconds(bp) -> float:
    """What an agent's first script does: read, encode, fit a forest, predict, write."""
    task = develop(bp)
    start = time.perf_counter()
    x_train, x_test = features(bp, task)
    y = task.train[bp.domain.target_columns[0]]
    model = RandomForestClassifier(n_estimators=100, n_jobs=1, random_state=0).fit(x_train, y)
    pd.DataFrame({"p": model.predict_proba(x_test)[:, 1]}).to_csv("/dev/null", index=False)
    return time.perf_counter() - start


def main(full_rows: int = 200_000, runs: int = 3) -> dict:
    micro_bp, full_bp = _blueprint(0), _blueprint(full_rows)
    micro = statistics.median(_script_seconds(micro_bp) for _ in range(max(runs, 5)))
    full = statistics.median(_script_seconds(full_bp) for _ in range(runs))
    return {
        "seed_task": SEED,
        "micro_rows": micro_bp.n_train + micro_bp.n_test,
        "full_rows": full_rows,
        "micro_median_s": round(micro, 4),
        "full_median_s": round(full, 3),
        "speedup": round(full / micro, 1),
    }


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    print(json.dumps(main(*args), indent=2))
