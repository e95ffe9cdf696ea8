"""MLE-Dojo's layout of the micro replicas (``sandmle synth replicas --out DIR --dojo``).

For each lite competition MLE-Dojo carries (all but siim-isic-melanoma-classification), the
MLE-bench replica's files are copied into ``<out>/<id>/data/{public,private}`` as MLE-Dojo's
``prepare/mle.py`` lays them out: ``public/description.txt``, ``public/sample_submission.csv``,
``private/test_answer.csv``, and two small leaderboards (``rank,score``, best first) whose best
entry a perfect submission ties, so HumanRank spans 0 to 1 on them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from sandmle.benchmarks.mle_bench_lite.competitions import get_competition
from sandmle.benchmarks.mle_bench_lite.replica_files import write_csv
from sandmle.benchmarks.mle_bench_lite.replicas import MARKER, clear_replica
from sandmle.benchmarks.mle_dojo.competitions import ANSWERS, BOARDS, PRIVATE, PUBLIC

NOT_IN_DOJO = frozenset({"siim-isic-melanoma-classification"})
BOARD_ROWS = 20
PERFECT = {True: 0.0, False: 1.0}
"""The best score of each direction (keyed by is_lower_better) on the micro boards."""


def board(is_lower_better: bool, offset: float) -> pd.DataFrame:
    """A best-first board of ``BOARD_ROWS`` scores from a perfect score towards a poor one."""
    step = np.arange(BOARD_ROWS) * 0.025 + offset
    scores = step * 2 if is_lower_better else 1.0 - step
    return pd.DataFrame({"rank": np.arange(1, BOARD_ROWS + 1), "score": np.round(scores, 6)})


def write_dojo_replica(mlebench_root: Path, out: Path, competition_id: str) -> Path:
    """Copy one MLE-bench replica (``mlebench_root/<id>``) into Dojo's layout under ``out``."""
    lite = get_competition(competition_id)
    source = mlebench_root / competition_id
    folder = out / competition_id
    clear_replica(folder)
    public, private = folder / PUBLIC, folder / PRIVATE
    shutil.copytree(source / "prepared" / "public", public)
    private.mkdir(parents=True)
    (public / "description.md").rename(public / "description.txt")
    sample = source / lite.sample_submission
    if sample.name != "sample_submission.csv" or sample.parent.name != "public":
        shutil.copyfile(sample, public / "sample_submission.csv")
    shutil.copyfile(source / lite.answers, private / ANSWERS)
    for name, offset in zip(BOARDS, (0.0, 0.01), strict=True):
        write_csv(private / name, board(lite.is_lower_better, offset))
    (folder / MARKER).write_text("mle-dojo layout\n", encoding="utf-8")
    return folder


def write_dojo_replicas(mlebench_root: Path, out: Path, competition_ids: list[str]) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    ids = [cid for cid in competition_ids if cid not in NOT_IN_DOJO]
    return [write_dojo_replica(mlebench_root, out, cid) for cid in ids]
