"""The AutoML program's features: numbers, categories, text, images, audio, dates, time trends.

A part of the one program ``policies/automl.py`` joins (see ``automl/__init__.py``).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .settings import (
    AUDIO_FRAME,
    AUDIO_SUFFIXES,
    DATA_DIR,
    FAMILY,
    FAMILY_INPUTS,
    IMAGE_SIZE,
    IMAGE_SUFFIXES,
    LEVEL,
    SAFE,
    TIME_NAME,
    Spec,
)
from .task import is_integral

# ---------------------------------------------------------------- features


def wants(kind: str) -> bool:
    """Whether this run's inputs include ``kind`` (text, image, audio, date or time): all of
    them by default, none under SAFE, one with a toolkit family (dates are the table's)."""
    if SAFE:
        return False
    return FAMILY == "all" or kind == "date" or FAMILY_INPUTS.get(FAMILY) == kind


def require(kind: str, info: dict[str, Any]) -> None:
    """A toolkit family whose inputs the task lacks fails, saying what the task has."""
    if FAMILY in FAMILY_INPUTS and FAMILY_INPUTS[FAMILY] == kind and not info.get(kind):
        found = ", ".join(f"{info[k]} {k}" for k in ("numeric", "categorical", "text", "image",
                                                     "audio", "date") if info.get(k))  # fmt: skip
        raise SystemExit(
            f"automl.py {FAMILY}: this task has no {kind} inputs (found: {found or 'none'});"
            " run it with the family that matches the data"
        )


def image_index() -> dict[str, Path]:
    """Image files under DATA_DIR by file stem (``images/<id>.png`` layouts)."""
    found: dict[str, Path] = {}
    for path in sorted(DATA_DIR.rglob("*")):
        if path.suffix.lower() in IMAGE_SUFFIXES:
            found.setdefault(path.stem, path)
    return found


def image_features(paths: list[Path | None]) -> np.ndarray:
    from PIL import Image

    rows = []
    for path in paths:
        if path is None or not path.is_file():
            rows.append(np.full(IMAGE_SIZE * IMAGE_SIZE + 3, np.nan))
            continue
        with Image.open(path) as image:
            pixels = np.asarray(image.convert("L").resize((IMAGE_SIZE, IMAGE_SIZE)), float) / 255
        bright = (pixels > (np.median(pixels) + pixels.max()) / 2).mean()
        rows.append(np.concatenate([pixels.ravel(), [pixels.mean(), pixels.std(), bright]]))
    return np.array(rows)


def audio_index() -> dict[str, Path]:
    """WAV files under DATA_DIR by file stem (``audio/<id>.wav`` layouts)."""
    found: dict[str, Path] = {}
    for path in sorted(DATA_DIR.rglob("*")):
        if path.suffix.lower() in AUDIO_SUFFIXES:
            found.setdefault(path.stem, path)
    return found


def read_wav(path: Path) -> np.ndarray:
    """Mono samples in [-1, 1] of a 16-bit PCM WAV (channels averaged)."""
    import wave

    with wave.open(str(path), "rb") as handle:
        channels, frames = handle.getnchannels(), handle.readframes(handle.getnframes())
    samples = np.frombuffer(frames, dtype="<i2").astype(float) / 32768
    return samples.reshape(-1, channels).mean(axis=1)


def audio_features(
    paths: list[Path | None], freq_groups: int = 11, time_groups: int = 5
) -> np.ndarray:
    """A log spectrogram per clip, pooled to a coarse grid, plus each bin's mean and peak."""
    bins = AUDIO_FRAME // 2 + 1
    width = freq_groups * time_groups + 3 * bins + 2 * (bins - 1)
    rows = []
    for path in paths:
        if path is None or not path.is_file():
            rows.append(np.full(width, np.nan))
            continue
        clip = read_wav(path)
        clip = np.pad(clip, (0, max(0, AUDIO_FRAME - len(clip))))
        starts = np.arange(0, len(clip) - AUDIO_FRAME + 1, AUDIO_FRAME // 2)
        frames = clip[starts[:, None] + np.arange(AUDIO_FRAME)] * np.hanning(AUDIO_FRAME)
        spec = np.log(np.abs(np.fft.rfft(frames, axis=1)) ** 2 + 1e-8).T
        spec -= np.median(spec)
        f_cuts = np.array_split(np.arange(spec.shape[0]), freq_groups)
        t_cuts = np.array_split(np.arange(spec.shape[1]), time_groups)
        grid = [spec[np.ix_(f, t)].mean() if len(t) else 0.0 for f in f_cuts for t in t_cuts]
        rows.append(np.concatenate([grid, spec.mean(axis=1), spec.max(axis=1), motion(spec)]))
    return np.array(rows)


def motion(spec: np.ndarray) -> np.ndarray:
    """Where-invariant time-frequency shape: per bin, how much the level changes frame to
    frame (pulses), and per pair of neighbouring bins, the peak of rising and of falling
    diagonals (pitch going up or down)."""
    loud = np.clip(spec - np.median(spec, axis=1, keepdims=True), 0, None)
    pulses = np.abs(np.diff(loud, axis=1)).mean(axis=1)
    up = (loud[:-1, :-1] * loud[1:, 1:]).max(axis=1)
    down = (loud[1:, :-1] * loud[:-1, 1:]).max(axis=1)
    return np.concatenate([pulses, up - down, up + down])


def date_parts(values: pd.Series) -> pd.DataFrame | None:
    if not values.astype(str).str.contains(r"\d[-/:]\d", regex=True).mean() > 0.9:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = pd.to_datetime(values, errors="coerce", format="mixed")
    if parsed.notna().mean() < 0.9:
        return None
    parts = {"year": parsed.dt.year, "month": parsed.dt.month, "day": parsed.dt.day,
             "dow": parsed.dt.dayofweek, "hour": parsed.dt.hour}  # fmt: skip
    return pd.DataFrame({f"{values.name}_{k}": v for k, v in parts.items()}).astype(float)


def time_column(train: pd.DataFrame, test: pd.DataFrame, numeric: list[str]) -> str | None:
    """An integer time index whose test values lie after the training ones (forecasting)."""
    for col in numeric:
        if TIME_NAME.search(col.lower()) and is_integral(train[col]) and train[col].notna().all():
            if test[col].min() > train[col].median():
                return col
    return None


def build_features(
    train: pd.DataFrame, test: pd.DataFrame, spec: Spec
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """One dense matrix for train and test rows; transforms see features only, never labels."""
    both = pd.concat([train, test], ignore_index=True)
    n = len(train)
    skip = set(spec.ids) | set(spec.label_cols) | set(spec.targets)
    cols = [c for c in test.columns if c in train.columns and c not in skip]
    blocks: list[pd.DataFrame | np.ndarray] = []
    info: dict[str, Any] = {
        "numeric": 0,
        "categorical": 0,
        "text": 0,
        "image": 0,
        "audio": 0,
        "date": 0,
        "time": None,
        "series": [],
    }
    numeric = [c for c in cols if pd.api.types.is_numeric_dtype(both[c])]
    for col in numeric:
        values = both[col].astype(float)
        low, high = float(values.quantile(0.01)), float(values.quantile(0.99))
        blocks.append(pd.DataFrame({col: values.clip(low, high).fillna(values.median())}))
        if values.isna().any():
            blocks.append(pd.DataFrame({f"{col}_missing": values.isna().astype(float)}))
        info["numeric"] += 1
    series: list[str] = []
    for col in [c for c in cols if c not in numeric]:
        values = both[col]
        text = values.fillna("").astype(str)
        if wants("image") and text.str.lower().str.endswith(IMAGE_SUFFIXES).mean() > 0.9:
            blocks.append(image_features([DATA_DIR / v for v in text]))
            info["image"] += 1
        elif wants("audio") and text.str.lower().str.endswith(AUDIO_SUFFIXES).mean() > 0.9:
            blocks.append(audio_features([DATA_DIR / v for v in text]))
            info["audio"] += 1
        elif wants("date") and (dates := date_parts(values)) is not None:
            blocks.append(dates.fillna(dates.median()).fillna(0))
            info["date"] += 1
        elif wants("text") and text.str.split().map(len).mean() >= 4:
            blocks.append(tfidf(text))
            info["text"] += 1
        elif values.nunique() <= max(50, len(both) // 4):
            blocks.append(
                pd.get_dummies(
                    values.astype(str).where(values.notna(), "<missing>"), prefix=col, dtype=float
                )
            )
            info["categorical"] += 1
            series.append(col)
    if wants("image"):
        add_image_ids(both, spec, blocks, info)
    if wants("audio"):
        add_audio_ids(both, spec, blocks, info)
    if wants("time"):
        add_time_features(train, test, both, numeric, series, blocks, info)
    for kind in ("text", "image", "audio", "time"):
        require(kind, info)
    if not blocks:
        blocks.append(np.zeros((len(both), 1)))
    matrix = np.hstack([np.asarray(b, dtype=float) for b in blocks])
    return matrix[:n], matrix[n:], info


def tfidf(text: pd.Series) -> np.ndarray:
    from sklearn.feature_extraction.text import TfidfVectorizer

    ngrams = (1, 2) if LEVEL >= 3 else (1, 1)
    vectorizer = TfidfVectorizer(sublinear_tf=True, ngram_range=ngrams, max_features=3000, min_df=1)
    return vectorizer.fit_transform(text).toarray()


def add_image_ids(
    both: pd.DataFrame, spec: Spec, blocks: list[pd.DataFrame | np.ndarray], info: dict[str, Any]
) -> None:
    """Images named after the row id (``images/<id>.png``)."""
    index = image_index()
    if not index or spec.ids[0] not in both:
        return
    keys = both[spec.ids[0]].astype(str)
    if keys.isin(list(index)).mean() > 0.9:
        blocks.append(image_features([index.get(k) for k in keys]))
        info["image"] += 1


def add_audio_ids(
    both: pd.DataFrame, spec: Spec, blocks: list[pd.DataFrame | np.ndarray], info: dict[str, Any]
) -> None:
    """Recordings named after the row id (``audio/<id>.wav``)."""
    index = audio_index()
    if not index or spec.ids[0] not in both:
        return
    keys = both[spec.ids[0]].astype(str)
    if keys.isin(list(index)).mean() > 0.9:
        blocks.append(audio_features([index.get(k) for k in keys]))
        info["audio"] += 1


def add_time_features(
    train: pd.DataFrame,
    test: pd.DataFrame,
    both: pd.DataFrame,
    numeric: list[str],
    series: list[str],
    blocks: list[pd.DataFrame | np.ndarray],
    info: dict[str, Any],
) -> None:
    """Forecasting: weekday of the time index and a trend per series, so models can extrapolate."""
    col = time_column(train, test, numeric)
    if col is None:
        return
    t = both[col].astype(float)
    blocks.append(pd.get_dummies((t % 7).astype(int), prefix=f"{col}_dow", dtype=float))
    scaled = (t - t.mean()) / (t.std() or 1.0)
    blocks.append(pd.DataFrame({f"{col}_trend": scaled}))
    for name in series:
        dummies = pd.get_dummies(both[name].astype(str), dtype=float)
        blocks.append(dummies.mul(scaled, axis=0).add_prefix(f"{name}_trend_"))
    info["time"], info["series"] = col, series
