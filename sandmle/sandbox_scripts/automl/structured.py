"""The AutoML program's structured tasks: sequence-to-sequence, image-to-image and ranking,
which one row-per-sample model misses.

A part of the one program ``policies/automl.py`` joins (see ``automl/__init__.py``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .features import build_features, wants
from .models import make_model
from .output import write_submission
from .settings import (
    DATA_DIR,
    FAMILY,
    IMAGE_SUFFIXES,
    LEVEL,
    LEVEL_NAMES,
    MAX_PIXEL_ROWS,
    RANKING_METRIC,
    SEED,
    Spec,
)
from .task import read_description

# ---------------------------------------------------------------- structured tasks


def is_seq2seq(train: pd.DataFrame, test: pd.DataFrame, targets: list[str]) -> bool:
    """Token normalization: one text target that train pairs with a `before` column in test."""
    return (
        len(targets) == 1
        and targets[0] in train.columns
        and "before" in test.columns
        and "before" in train.columns
        and not pd.api.types.is_numeric_dtype(train[targets[0]])
    )


def solve_seq2seq(train: pd.DataFrame, test: pd.DataFrame, target: str) -> np.ndarray:
    """Each token's most frequent training output (above LEVEL 0), else the token itself.

    Prints the hold-out accuracy of the same rule, fit on four fifths of the sentences.
    """
    group = train["sentence_id"] if "sentence_id" in train.columns else pd.Series(train.index)
    held = pd.factorize(group)[0] % 5 == 0  # whole sentences held out, deterministically

    def predict(fit: pd.DataFrame, rows: pd.DataFrame) -> np.ndarray:
        before = rows["before"].astype(str)
        if LEVEL <= 0:
            return before.to_numpy(dtype=object)
        table = (
            fit.assign(before=fit["before"].astype(str), out=fit[target].astype(str))
            .groupby(["before", "out"], sort=False)
            .size()
            .sort_values(ascending=False, kind="stable")
            .reset_index()
            .drop_duplicates("before")
            .set_index("before")["out"]
        )
        return before.map(table).fillna(before).to_numpy(dtype=object)

    truth = train.loc[held, target].astype(str).to_numpy()
    value = float(np.mean(predict(train[~held], train[held]) == truth)) if held.any() else 0.0
    print(
        f"Task: sequence-to-sequence (text) | targets: {target} | metric: accuracy (higher is better)"
    )
    print(f"Model: {'copy' if LEVEL <= 0 else 'token lookup with copy fallback'} (level {LEVEL})")
    print(f"Validation metric: {value:.6f}")
    return predict(train, test).reshape(-1, 1)


def pixel_images(frame: pd.DataFrame) -> dict[str, Path] | None:
    """Noisy image files for a per-pixel table (`image`, `row`, `col`); None if it is not one."""
    if not {"image", "row", "col"} <= set(frame.columns):
        return None
    index = {
        path.stem: path
        for path in sorted(DATA_DIR.rglob("*"), reverse=True)
        if path.suffix.lower() in IMAGE_SUFFIXES and "clean" not in path.parent.name.lower()
    }
    stems = frame["image"].astype(str).unique()
    return index if all(s in index for s in stems) else None


def pixel_features(frame: pd.DataFrame, index: dict[str, Path]) -> np.ndarray:
    """Per pixel: its 3x3 neighbourhood, a 3x3 median, the local paper level and the pixel's
    place between the page's dark level and it."""
    from PIL import Image
    from scipy import ndimage

    out = np.zeros((len(frame), 15))
    image = frame["image"].astype(str).to_numpy()
    rows, cols = frame["row"].to_numpy(int) - 1, frame["col"].to_numpy(int) - 1
    for stem in pd.unique(image):
        with Image.open(index[stem]) as handle:
            page = np.asarray(handle.convert("L"), dtype=float) / 255
        padded = np.pad(page, 1, mode="edge")
        h, w = page.shape
        maps = [padded[dy : dy + h, dx : dx + w] for dy in range(3) for dx in range(3)]
        median = ndimage.median_filter(page, 3, mode="nearest")
        window = max(5, min(h, w) // 3)
        paper = ndimage.gaussian_filter(ndimage.grey_dilation(median, size=window), 1.5)
        ratio = median / np.maximum(paper, 0.05)
        # pages differ in ink and paper: the page's own dark level, and the pixel between them
        dark = np.quantile(median, 0.05)
        level = np.clip((median - dark) / np.maximum(paper - dark, 0.05), 0, 1.5)
        maps += [median, ratio, paper, np.full(page.shape, dark), level, paper * (ratio > 0.7)]
        at = image == stem
        out[at] = np.column_stack([m[rows[at], cols[at]] for m in maps])
    return out


def solve_pixels(
    train: pd.DataFrame, test: pd.DataFrame, target: str, index: dict[str, Path]
) -> np.ndarray:
    """Image-to-image regression: a model of LEVEL over pixel features, validated by image."""
    from sklearn.model_selection import GroupKFold

    if len(train) > MAX_PIXEL_ROWS:  # neighbouring pixels repeat each other: a sample will do
        keep = np.random.default_rng(SEED).choice(len(train), MAX_PIXEL_ROWS, replace=False)
        train = train.iloc[np.sort(keep)].reset_index(drop=True)
    x, x_test = pixel_features(train, index), pixel_features(test, index)
    y = train[target].to_numpy(float)
    info: dict[str, Any] = {"time": None}
    groups = train["image"].astype(str).to_numpy()
    folds = list(GroupKFold(min(3, len(set(groups)))).split(x, y, groups))
    level = min(LEVEL, 3)
    errors = []
    for fit_idx, val_idx in folds:
        model = make_model(level, False, info).fit(x[fit_idx], y[fit_idx])
        errors.append((np.clip(model.predict(x[val_idx]), 0, 1) - y[val_idx]) ** 2)
    value = float(np.sqrt(np.mean(np.concatenate(errors))))
    print(f"Task: image-to-image regression | targets: {target} | metric: rmse (lower is better)")
    print(f"Features: {x.shape[1]} per-pixel columns from {len(set(groups))} training images")
    print(f"Model: {LEVEL_NAMES[level]} (level {level})")
    print(f"Validation metric: {value:.6f}")
    model = make_model(level, False, info).fit(x, y)
    return np.clip(model.predict(x_test), 0, 1).reshape(-1, 1)


def ranking_cutoff(train: pd.DataFrame, sample: pd.DataFrame, targets: list[str]) -> int | None:
    """k of a ranking task (MAP@k), else None: the sample lists several ids per row, all of
    them ids that train rows list too. The description's ``map_at_<k>`` wins if it names one."""
    if len(targets) != 1 or targets[0] not in train.columns:
        return None
    listed = sample[targets[0]].astype(str).str.split()
    taken = train[targets[0]].dropna().astype(str).str.split()
    catalogue = {item for row in taken for item in row}
    if listed.map(len).min() < 2 or len(catalogue) > max(200, len(train) // 2):
        return None
    if not all(item in catalogue for row in listed.head(50) for item in row):
        return None
    named = re.search(RANKING_METRIC, read_description().lower())
    return int(named.group(1)) if named else int(listed.map(len).max())


def average_precision(actual: set[str], predicted: list[str], k: int) -> float:
    """Kaggle's AP@k: precision at each new relevant id in the top k, over min(|actual|, k)."""
    hits, total = 0, 0.0
    for rank, item in enumerate(predicted[:k]):
        if item in actual and item not in predicted[:rank]:
            hits += 1
            total += hits / (rank + 1)
    return total / min(len(actual), k) if actual else 0.0


def rank_scores(level: int, x: np.ndarray, y: np.ndarray, x_test: np.ndarray) -> np.ndarray:
    """A score per (row, item): popularity (level 0), a logistic model per item (1), or one
    multi-output random forest over all items (2+), plus popularity to break ties."""
    from sklearn.ensemble import RandomForestClassifier

    popularity = y.mean(axis=0)
    scores = np.tile(popularity, (len(x_test), 1))
    if level <= 0:
        return scores
    if level == 1:
        for j in np.flatnonzero((y.sum(axis=0) > 1) & (y.sum(axis=0) < len(y) - 1)):
            model = make_model(1, True, {"time": None}).fit(x, y[:, j])
            scores[:, j] = model.predict_proba(x_test)[:, 1]
        return scores + 1e-3 * popularity
    forest = RandomForestClassifier(
        n_estimators=300, min_samples_leaf=3, random_state=SEED, n_jobs=1
    ).fit(x, y)
    for item, proba in enumerate(forest.predict_proba(x_test)):
        if proba.shape[1] == 2:
            scores[:, item] = proba[:, 1]
    return scores + 1e-3 * popularity


def solve_ranking(train: pd.DataFrame, test: pd.DataFrame, spec: Spec, k: int) -> np.ndarray:
    """Ranking (MAP@k): items each train row took -> per-item scores -> the k best ids."""
    from sklearn.model_selection import KFold

    target = spec.targets[0]
    train = train.dropna(subset=[target]).reset_index(drop=True)
    taken = train[target].astype(str).str.split()
    items = sorted({item for row in taken for item in row})
    index = {item: j for j, item in enumerate(items)}
    y = np.zeros((len(train), len(items)), dtype=int)
    for row, listed in enumerate(taken):
        y[row, [index[item] for item in listed]] = 1
    x, x_test, info = build_features(train, test, spec)
    names = np.array(items, dtype=object)

    def validate(level: int) -> float:
        folds = KFold(min(5, max(2, len(train) // 20)), shuffle=True, random_state=SEED)
        scores = []
        for fit, held in folds.split(x):
            order = np.argsort(-rank_scores(level, x[fit], y[fit], x[held]), axis=1, kind="stable")
            for row, ranked in zip(held, order, strict=True):
                actual = set(names[y[row] == 1])
                scores.append(average_precision(actual, list(names[ranked[:k]]), k))
        return float(np.mean(scores))

    levels = (1, 2) if LEVEL >= 4 else (min(LEVEL, 2),)
    results = [(level, validate(level)) for level in levels]
    level, value = max(results, key=lambda r: r[1])
    print(f"Task: ranking (top {k} of {len(items)} ids) | targets: {target} | metric: map_at_{k}")
    print(
        f"Features: {x.shape[1]} columns from {info['numeric']} numeric, {info['categorical']} categorical"
    )
    print(f"Model: {LEVEL_NAMES[level]} (level {level})")
    print(f"Validation metric: {value:.6f}")
    order = np.argsort(-rank_scores(level, x, y, x_test), axis=1, kind="stable")[:, :k]
    return np.array([" ".join(names[row]) for row in order], dtype=object).reshape(-1, 1)


def wrong_family(what: str) -> None:
    """A toolkit family that cannot read such a task fails at once: as rows of a table, a
    text-to-text or pixel task takes minutes to fit and scores nothing."""
    raise SystemExit(
        f"automl.py {FAMILY}: this task {what}; run it with the family that matches the data"
    )


def solve_structured(
    train: pd.DataFrame, test: pd.DataFrame, test_ids: pd.DataFrame, sample: pd.DataFrame
) -> Path | None:
    """Sequence-to-sequence and image-to-image tasks, which one row-per-sample model misses."""
    ids = [c for c in sample.columns if c in test.columns] or [sample.columns[0]]
    targets = [c for c in sample.columns if c not in ids]
    spec = Spec(ids, targets, "structured", "value", targets, "")
    if is_seq2seq(train, test, targets):
        if not wants("text"):
            wrong_family("maps text to text (token normalization)")
        values = solve_seq2seq(train, test, targets[0])
    elif (k := ranking_cutoff(train, sample, targets)) is not None:
        values = solve_ranking(train, test, Spec(ids, targets, "ranking", "ids", targets, ""), k)
    elif len(targets) == 1 and targets[0] in train and (index := pixel_images(test)) is not None:
        if pixel_images(train) is None:
            return None
        if not wants("image"):
            wrong_family("predicts the pixels of images")
        values = solve_pixels(train, test, targets[0], index)
    else:
        return None
    return write_submission(sample, test_ids, spec, values)
