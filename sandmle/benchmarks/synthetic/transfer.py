"""The pack-level transfer gate: a task must not be solvable by what the pack's other tasks teach.

For binary tasks of a modality whose inputs share one feature space (images: a bank of
template matches over all eight shapes, so "is there a circle" transfers between tasks whose
target is a circle; text: words; audio: every call pattern matched at fixed relative bands),
a linear model is trained on the *other* tasks' training
rows (label: the positive class) and graded on this task's test set with the real grader. A task it
already solves at bronze or better is a near-duplicate in disguise (the same rule under new
names), and the pack regenerates it.

Up to ``LEAVE_ONE_OUT_MAX`` tasks of a modality, each task's model is trained on all the others
(one fit per task). A larger group is split into ``FOLDS`` folds by position and each task is
graded by the model of the tasks outside its fold (still nine tenths of the others): one fit
per task made the gate quadratic, and a 1,000-task pack spent hours in it.
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.artifacts import PublicData
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.modalities.audio_features import call_bank_features
from sandmle.benchmarks.synthetic.modalities.image import shape_bank_features
from sandmle.benchmarks.synthetic.task_files import BLUEPRINT_FILE, load_blueprint
from sandmle.harness.competition import PUBLIC_DIR, load_competition
from sandmle.harness.grading.report import grade_frame

MODALITIES = ("image", "text", "audio")
LEAVE_ONE_OUT_MAX = 24
FOLDS = 10
Member = tuple[str, Blueprint, PublicData]
"""A task of the pack: its id, blueprint and public files."""


def transfer_failures(
    pack: Path, task_ids: list[str], progress: bool = False, workers: int = 1
) -> dict[str, str]:
    """Task id -> reason, for tasks a model trained on the other tasks reaches bronze on.

    Shared features (template matches over every image or call: most of the gate's time)
    are computed over ``workers`` processes, and kept between calls for tasks whose files
    did not change, so a later round pays only for the tasks it regenerated."""
    groups: dict[str, list[Member]] = {}
    for task_id in task_ids:
        bp = load_blueprint(pack / task_id)
        if bp.dna.modality in MODALITIES and bp.dna.task_type == "binary":
            data = PublicData.from_folder(pack / task_id / PUBLIC_DIR)
            groups.setdefault(bp.dna.modality, []).append((task_id, bp, data))
    failures: dict[str, str] = {}
    for modality, members in groups.items():
        if len(members) < 2:
            continue
        # each member's features once (not once per other task: a large pack has hundreds)
        features = _features(pack, modality, [task_id for task_id, _, _ in members], workers)
        if progress:
            print(f"transfer gate: {modality}, features of {len(members)} task(s)",
                  file=sys.stderr, flush=True)  # fmt: skip
        train, test = [f[0] for f in features], [f[1] for f in features]
        labels = [tg.encode_train_targets(bp, data.train) for _, bp, data in members]
        held_out = held_out_sets(len(members))
        start = time.monotonic()
        for fit, held in enumerate(held_out, 1):
            others = [j for j in range(len(members)) if j not in held]
            # one model per fit: every task it holds out is graded by the same model
            predict = _transfer_model(
                modality, [train[j] for j in others], [labels[j] for j in others]
            )
            for i in held:
                task_id, bp, data = members[i]
                proba = predict(test[i])
                report = grade_frame(
                    tg.submission_frame(
                        bp, data.test[bp.domain.id_column], np.column_stack([1 - proba, proba])
                    ),
                    load_competition(pack / task_id),
                )
                if report.any_medal:
                    failures[task_id] = (
                        f"a model trained on {len(others)} other {modality} task(s) scores "
                        f"{report.score} (bronze {report.bronze_threshold})"
                    )
            if progress:
                print(
                    f"transfer gate: {modality}, {fit}/{len(held_out)} fit(s) over "
                    f"{len(members)} task(s), {time.monotonic() - start:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
    return failures


_CACHE: dict[tuple[str, str], tuple[Inputs, Inputs]] = {}
"""(task folder, digest of its files) -> its train and test inputs, for this process's runs."""


def _features(
    pack: Path, modality: str, task_ids: list[str], workers: int
) -> list[tuple[Inputs, Inputs]]:
    keys = [(str(pack / task_id), _digest(pack / task_id)) for task_id in task_ids]
    missing = [i for i, key in enumerate(keys) if key not in _CACHE]
    jobs = [(pack / task_ids[i], modality) for i in missing]
    if workers > 1 and len(jobs) > 1 and modality != "text":
        with ProcessPoolExecutor(max_workers=workers) as pool:
            found = list(pool.map(_task_features, *zip(*jobs, strict=True)))
    else:
        found = [_task_features(folder, m) for folder, m in jobs]
    for i, inputs in zip(missing, found, strict=True):
        _CACHE[keys[i]] = inputs
    return [_CACHE[key] for key in keys]


def _digest(task: Path) -> str:
    """What a task's features depend on: its blueprint and public files (a regenerated slot
    may reuse its task id with other contents)."""
    digest = hashlib.sha256((task / BLUEPRINT_FILE).read_bytes())
    for path in sorted((task / PUBLIC_DIR).rglob("*")):
        if path.is_file():
            digest.update(path.name.encode() + path.read_bytes())
    return digest.hexdigest()


def _task_features(task: Path, modality: str) -> tuple[Inputs, Inputs]:
    """A task's train and test inputs (in a worker process, for a large pack)."""
    bp = load_blueprint(task)
    data = PublicData.from_folder(task / PUBLIC_DIR)
    return _inputs(modality, bp, data, data.train), _inputs(modality, bp, data, data.test)


def held_out_sets(n: int) -> list[list[int]]:
    """The members each fit leaves out: one at a time, or ``FOLDS`` folds past the limit.

    >>> held_out_sets(3)
    [[0], [1], [2]]
    >>> [len(h) for h in held_out_sets(25)]
    [3, 3, 3, 3, 3, 2, 2, 2, 2, 2]
    """
    if n <= LEAVE_ONE_OUT_MAX:
        return [[i] for i in range(n)]
    return [list(range(k, n, FOLDS)) for k in range(FOLDS)]


Inputs = pd.Series | np.ndarray
"""A task's texts (text) or its shared-feature matrix (images, audio)."""


def _inputs(modality: str, bp: Blueprint, data: PublicData, frame: pd.DataFrame) -> Inputs:
    return _texts(bp, frame) if modality == "text" else _matrix(modality, bp, data, frame)


def _transfer_model(
    modality: str, train: list[Inputs], labels: list[np.ndarray]
) -> Callable[[Inputs], np.ndarray]:
    """P(positive) for a task's test rows, from a model fit on the others' training rows."""
    y = np.concatenate(labels)
    vectorizer = TfidfVectorizer(min_df=2) if modality == "text" else None
    if vectorizer is not None:
        x = vectorizer.fit_transform(pd.concat([pd.Series(t) for t in train], ignore_index=True))
    else:
        x = np.vstack(train)
    model = make_pipeline(
        StandardScaler(with_mean=modality != "text"), LogisticRegression(max_iter=1000)
    )
    model.fit(x, y)

    def predict(target: Inputs) -> np.ndarray:
        rows = vectorizer.transform(pd.Series(target)) if vectorizer is not None else target
        return np.asarray(model.predict_proba(rows)[:, 1])

    return predict


def _texts(bp: Blueprint, frame: pd.DataFrame) -> pd.Series:
    return frame[bp.domain.text_column].astype(str)


def _matrix(modality: str, bp: Blueprint, data: PublicData, frame: pd.DataFrame) -> np.ndarray:
    """Features shared by every task of the modality: call or shape template matches."""
    if modality == "audio":
        return call_bank_features(data.files, frame[bp.domain.id_column])
    return shape_bank_features(data.files, frame[bp.domain.id_column], int(bp.params["size"]))
