"""Grading throughput: sandmle's grading core vs plain pandas + scikit-learn on the same file.

The peer reads the CSVs and calls scikit-learn's metric directly, with none of the grading
core's validation; the ratio is what exact MLE-bench semantics cost. Prints JSON.

Usage: python bench/grading_throughput.py [--rows N] [--runs R]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from sklearn.metrics import log_loss, roc_auc_score

from sandmle.harness.competition import load_competition
from sandmle.harness.grading.report import grade_csv


def _competition(root: Path, rows: int, metric: str, classes: int) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    ids = [f"row_{i:07d}" for i in range(rows)]
    comp = root / metric
    (comp / "prepared/public").mkdir(parents=True)
    (comp / "prepared/private").mkdir(parents=True)
    if classes == 2:
        targets = ["target"]
        answers = pd.DataFrame({"id": ids, "target": rng.integers(0, 2, rows)})
        sub = pd.DataFrame({"id": ids, "target": rng.uniform(size=rows)})
    else:
        targets = [f"c{k}" for k in range(classes)]
        onehot = np.eye(classes, dtype=int)[rng.integers(0, classes, rows)]
        answers = pd.DataFrame(onehot, columns=targets).assign(id=ids)[["id", *targets]]
        probs = rng.dirichlet(np.ones(classes), rows)
        sub = pd.DataFrame(probs, columns=targets).assign(id=ids)[["id", *targets]]
    answers.to_csv(comp / "prepared/private/answers.csv", index=False)
    answers.head(0).to_csv(comp / "prepared/public/sample_submission.csv", index=False)
    config = {
        "id": metric,
        "name": metric,
        "metric": metric,
        "target_columns": targets,
        "thresholds": {"gold": 0.0, "silver": 0.0, "bronze": 0.0, "median": 0.0},
        "is_lower_better": classes != 2,
    }
    (comp / "competition.yaml").write_text(yaml.safe_dump(config))
    sub.to_csv(root / f"{metric}-submission.csv", index=False)
    return comp, root / f"{metric}-submission.csv"


def _peer(answers: Path, submission: Path, classes: int) -> float:
    y = pd.read_csv(answers).sort_values("id")
    p = pd.read_csv(submission).sort_values("id")
    if classes == 2:
        return roc_auc_score(y["target"], p["target"])
    cols = [c for c in y.columns if c != "id"]
    return log_loss(y[cols].to_numpy(), p[cols].to_numpy())


def _median_s(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        for metric, classes in (("roc_auc", 2), ("multiclass_log_loss", 10)):
            comp_dir, sub = _competition(Path(tmp), args.rows, metric, classes)
            comp = load_competition(comp_dir)
            grade_csv(sub, comp)  # warm the answers cache, as in an eval
            ours = _median_s(lambda c=comp, s=sub: grade_csv(s, c), args.runs)
            peer = _median_s(
                lambda d=comp_dir, s=sub, k=classes: _peer(
                    d / "prepared/private/answers.csv", s, k
                ),
                args.runs,
            )
            figures[metric] = {
                "rows": args.rows,
                "sandmle_s": round(ours, 4),
                "peer_s": round(peer, 4),
                "ratio": round(ours / peer, 3),
                "sandmle_rows_per_s": round(args.rows / ours),
            }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
