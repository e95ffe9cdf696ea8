"""MLE-Dojo's layout of the micro replicas (``sandmle synth replicas --out DIR --dojo``).

MLE-Dojo's ``prepare/mle.py`` runs each competition's ``utils/prepare.py`` into
``<out>/<id>/data/{public,private}``. Those scripts follow MLE-bench's with a few changes, and
each replica here applies exactly those changes to the MLE-bench replica's files (read from
``mledojo/competitions/<id>/utils/prepare.py`` against ``mlebench/competitions/<id>/prepare.py``):

* the answers are ``private/test_answer.csv`` (for insults, MLE-bench's gold submission);
* the sample submission is ``public/sample_submission.csv`` (renamed from ``sampleSubmission.csv``,
  ``sample_submission_null.csv``, ``<lang>_sample_submission_2.csv``); for ranzcr it is the whole
  test table with every class column set to the first class's values, as Dojo writes it;
* folders MLE-bench zips stay folders: ``train/``, ``test/`` (aerial, dogs-vs-cats),
  ``train2/``, ``test2/`` (whale), and text-normalization's CSVs are plain files;
* ``public/description.txt`` instead of ``description.md``;
* private holds only the answers and the boards (no MLE-bench private extras);
* two small leaderboards (``rank,score``, best first) whose best entry a perfect submission
  ties, so HumanRank spans 0 to 1 on them.

SIIM-ISIC is not in MLE-Dojo, and the two tabular-playground competitions' Dojo ``prepare.py``
are empty stubs (no Dojo data exists for them), so none of the three gets a Dojo replica.
"""

from __future__ import annotations

import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from sandmle.benchmarks.mle_bench.competitions import get_competition, lite_competitions
from sandmle.benchmarks.mle_bench.replicas.build import (
    BUILDERS,
    MARKER,
    build_replicas,
    clear_replica,
)
from sandmle.benchmarks.mle_bench.replicas.files import write_csv
from sandmle.benchmarks.mle_dojo.competitions import ANSWERS, BOARDS, PRIVATE, PUBLIC
from sandmle.harness.grading.reading import read_csv_reference

NOT_IN_DOJO = {
    "siim-isic-melanoma-classification": "not among MLE-Dojo's competitions",
    "tabular-playground-series-dec-2021": "MLE-Dojo's prepare.py for it is an empty stub",
    "tabular-playground-series-may-2022": "MLE-Dojo's prepare.py for it is an empty stub",
}
DOJO_SUBDIR = "mle-dojo"
"""Where ``--dojo`` writes Dojo's layout, inside the folder of the MLE-bench replicas."""
SAMPLE = "sample_submission.csv"
BOARD_ROWS = 20
PERFECT = {True: 0.0, False: 1.0}
"""The best score of each direction (keyed by is_lower_better) on the micro boards."""


@dataclass(frozen=True)
class DojoLayout:
    """Where MLE-Dojo's prepare differs from MLE-bench's for one competition."""

    answers: str | None = None
    """The MLE-bench private file Dojo writes as ``test_answer.csv``; None: the lite answers."""
    sample: str | None = None
    """The MLE-bench public file Dojo writes as ``sample_submission.csv``; None: the lite one."""
    unzip: tuple[str, ...] = ()
    """Public zips whose contents Dojo leaves unzipped (the zips are not written)."""


def _text_normalization(lang: str) -> DojoLayout:
    return DojoLayout(
        sample=f"{lang}_sample_submission_2.csv",
        unzip=(
            f"{lang}_train.csv.zip",
            f"{lang}_test_2.csv.zip",
            f"{lang}_sample_submission_2.csv.zip",
        ),
    )


LAYOUTS: dict[str, DojoLayout] = {
    "aerial-cactus-identification": DojoLayout(unzip=("train.zip", "test.zip")),
    "detecting-insults-in-social-commentary": DojoLayout(answers="gold_submission.csv"),
    "dogs-vs-cats-redux-kernels-edition": DojoLayout(unzip=("train.zip", "test.zip")),
    "text-normalization-challenge-english-language": _text_normalization("en"),
    "text-normalization-challenge-russian-language": _text_normalization("ru"),
    "the-icml-2013-whale-challenge-right-whale-redux": DojoLayout(
        unzip=("train2.zip", "test2.zip")
    ),
}
"""Competitions whose Dojo layout differs beyond the renames every competition gets."""


def board(is_lower_better: bool, offset: float) -> pd.DataFrame:
    """A best-first board of ``BOARD_ROWS`` scores from a perfect score towards a poor one."""
    step = np.arange(BOARD_ROWS) * 0.025 + offset
    scores = step * 2 if is_lower_better else 1.0 - step
    return pd.DataFrame({"rank": np.arange(1, BOARD_ROWS + 1), "score": np.round(scores, 6)})


def _unzip(public: Path, names: tuple[str, ...]) -> None:
    """Extract each zip where Dojo leaves its folder: members without a ``<stem>/`` prefix
    (MLE-bench's ``compress``) go into ``<stem>/``; the zip itself is not kept."""
    for name in names:
        stem = name.removesuffix(".zip")
        with zipfile.ZipFile(public / name) as archive:
            members = [m for m in archive.namelist() if not m.endswith("/")]
            nested = all(m.startswith(f"{stem}/") for m in members)
            single_file = members == [stem]
            archive.extractall(public if nested or single_file else public / stem)
        (public / name).unlink()


def _ranzcr_sample(answers: Path) -> pd.DataFrame:
    """Dojo's ranzcr sample: the test table, every class column a copy of the first class's."""
    frame = read_csv_reference(answers)
    classes = get_competition("ranzcr-clip-catheter-line-classification").target_columns
    for column in classes:
        frame[column] = frame[classes[0]]
    return frame


def write_dojo_replica(mlebench_root: Path, out: Path, competition_id: str) -> Path:
    """Write one MLE-bench replica (``mlebench_root/<id>``) in Dojo's layout under ``out``."""
    lite = get_competition(competition_id)
    layout = LAYOUTS.get(competition_id, DojoLayout())
    prepared = mlebench_root / competition_id / "prepared"
    folder = out / competition_id
    clear_replica(folder)
    public, private = folder / PUBLIC, folder / PRIVATE
    shutil.copytree(prepared / "public", public)
    private.mkdir(parents=True)
    _unzip(public, layout.unzip)
    (public / "description.md").rename(public / "description.txt")
    answers = (
        prepared / "private" / layout.answers if layout.answers else prepared.parent / lite.answers
    )
    shutil.copyfile(answers, private / ANSWERS)
    if competition_id == "ranzcr-clip-catheter-line-classification":
        write_csv(public / SAMPLE, _ranzcr_sample(answers))
    else:
        name = layout.sample or Path(lite.sample_submission).name
        copied = public / name
        if not copied.is_file():  # MLE-bench keeps this one in private only
            shutil.copyfile(prepared.parent / lite.sample_submission, public / SAMPLE)
        elif name != SAMPLE:
            copied.rename(public / SAMPLE)
    for name, offset in zip(BOARDS, (0.0, 0.01), strict=True):
        write_csv(private / name, board(lite.is_lower_better, offset))
    (folder / MARKER).write_text("mle-dojo layout\n", encoding="utf-8")
    return folder


def write_dojo_replicas(mlebench_root: Path, out: Path, competition_ids: list[str]) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    ids = [cid for cid in competition_ids if cid not in NOT_IN_DOJO]
    return [write_dojo_replica(mlebench_root, out, cid) for cid in ids]


def build_replicas_with_dojo(
    out: Path, competitions: list[str] | None = None, seed: int = 0
) -> list[Path]:
    """``build_replicas`` into ``out``, then MLE-Dojo's layout of the lite ones among them
    (not the ``dev`` ones) under ``out/mle-dojo``; returns the MLE-bench replicas' folders."""
    ids = competitions or list(lite_competitions())
    roots = build_replicas(out, ids, seed)
    write_dojo_replicas(out, out / DOJO_SUBDIR, [cid for cid in ids if cid in BUILDERS])
    return roots
