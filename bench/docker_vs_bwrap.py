"""One heuristic sample under ``--sandbox docker`` and under bwrap: the grades must be equal.

The last step of ``.ci/docker_lane.sh``, so the one command that brings a fresh machine to a
working Docker sandbox also proves it: ``sandmle/heuristic`` on one built-in task, once per
sandbox, logs kept under ``--log-dir`` (``docker/`` and ``bwrap/``). Prints one line per
sandbox and a verdict; exits 1 when a run fails or the grades differ.

Usage: python bench/docker_vs_bwrap.py [--task parcel-route-000] [--log-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

SANDBOXES = ("docker", "bwrap")


def grade(task_id: str, sandbox: str, log_dir: Path) -> tuple[dict[str, Any], str]:
    """The sample's ``medal_scorer`` value under ``sandbox``, and its log's path."""
    from inspect_ai import eval as inspect_eval

    from sandmle.benchmarks.synthetic.builtin import builtin_pack_dir
    from sandmle.benchmarks.synthetic.task import synthetic

    task = synthetic(pack=str(builtin_pack_dir()), tasks=task_id, sandbox=sandbox)
    log = inspect_eval(task, model="sandmle/heuristic", log_dir=str(log_dir), display="none")[0]
    if log.status != "success" or not log.samples:
        raise SystemExit(f"{sandbox}: the eval did not finish ({log.status}): {log.error}")
    sample = log.samples[0]
    if sample.error is not None or sample.scores is None:
        raise SystemExit(f"{sandbox}: the sample errored: {sample.error}")
    return dict(sample.scores["medal_scorer"].value), log.location  # type: ignore[arg-type]


def summary(value: dict[str, Any]) -> str:
    keys = ("score", "valid_submission", "any_medal")
    return ", ".join(f"{k}={value[k]}" for k in keys if k in value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="parcel-route-000", help="built-in task id")
    parser.add_argument("--log-dir", type=Path, default=Path("logs/docker-vs-bwrap"))
    args = parser.parse_args()
    grades = {}
    for sandbox in SANDBOXES:
        grades[sandbox], location = grade(args.task, sandbox, args.log_dir / sandbox)
        print(f"{sandbox}: {summary(grades[sandbox])}; log {location}")
    same = grades["docker"] == grades["bwrap"]
    print(f"heuristic on {args.task}: docker grade {'==' if same else '!='} bwrap grade")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
