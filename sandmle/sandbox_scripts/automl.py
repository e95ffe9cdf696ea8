"""sandmle AutoML baseline: a stand-alone script the ``sandmle/heuristic`` policy hands in.

It reads the competition in DATA_DIR, infers the task from the sample submission and the
training table, builds features (numbers, categories, text, images, WAV recordings as pooled
log spectrograms, dates, time trends), fits a scikit-learn model of strength LEVEL (ranking
tasks, whose cells list ids best first: a score per catalogue id, top k kept), prints ``Validation metric: <value>`` from
cross-validation (or a time hold-out), and writes SUBMISSION_DIR/submission.csv in the
sample's exact shape. It only needs numpy, pandas, scikit-learn and (for images) Pillow.
"""

from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

LEVEL = 2  # 0 dummy, 1 linear, 2 random forest, 3 gradient boosting, 4 tuned (best by CV)
SAFE = False  # True: numbers and categories only (no text, image or time features)
SEED = 0
DATA_DIR = Path(os.environ.get("SANDMLE_DATA_DIR", "/home/data"))
SUBMISSION_DIR = Path(os.environ.get("SANDMLE_SUBMISSION_DIR", "/home/submission"))

LEVEL_NAMES = ("dummy", "linear", "random forest", "gradient boosting", "tuned")
PROB_EPS = 0.01  # shrink probabilities off 0 and 1 so log loss stays finite
IMAGE_SIZE = 16
MAX_PIXEL_ROWS = 6000  # training pixels per image-to-image fit
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")
AUDIO_SUFFIXES = (".wav",)
AUDIO_FRAME = 64  # spectrogram frame (samples); half-overlapping Hann windows
TIME_NAME = re.compile(r"day|time|step|week|period|date|month|hour")
LOWER_IS_BETTER = {
    "binary_log_loss", "multiclass_log_loss", "rmse", "mae", "rmsle",
    "mean_columnwise_rmse", "mean_columnwise_rmsle",
}  # fmt: skip
REGRESSION_METRICS = {"rmse", "mae", "rmsle", "r2", "mean_columnwise_rmse", "mean_columnwise_rmsle"}
LABEL_METRICS = {"accuracy", "macro_f1", "quadratic_weighted_kappa"}
# Most specific first: "mean columnwise RMSLE" also matches the RMSLE pattern.
METRIC_PATTERNS = (
    (
        "mean_columnwise_roc_auc",
        r"columnwise.?roc|column-wise roc|target columns of the area under",
    ),
    ("mean_columnwise_rmsle", r"columnwise.?rmsle|target columns of the rmsle"),
    ("mean_columnwise_rmse", r"columnwise.?rmse\b|target columns of the rmse\b"),
    ("multiclass_log_loss", r"multi.?class.?log.?loss|class probabilities|categorical cross"),
    ("binary_log_loss", r"log.?loss|logarithmic loss|cross.?entropy"),
    ("roc_auc", r"roc.?auc|area under the roc|\bauc\b"),
    ("quadratic_weighted_kappa", r"kappa|\bqwk\b"),
    ("rmsle", r"rmsle|root mean squared log"),
    ("rmse", r"\brmse\b|root mean squared? error"),
    ("mae", r"\bmae\b|mean absolute error"),
    ("macro_f1", r"macro.?f1|\bf1\b"),
    ("accuracy", r"accuracy"),
    ("r2", r"\br2\b|r-squared|coefficient of determination"),
)


@dataclass
class Spec:
    """What the task asks for, read from the files."""

    ids: list[str]
    targets: list[str]  # submission columns
    kind: str  # binary | multiclass | multilabel | regression
    output: str  # prob | label | onehot | value
    label_cols: list[str]  # train.csv columns holding y
    metric: str
    classes: list = field(default_factory=list)
    log_target: bool = False


# ---------------------------------------------------------------- reading the task


def find_file(patterns: list[str]) -> Path:
    for pattern in patterns:
        hits = sorted(p for p in DATA_DIR.glob(pattern) if p.is_file())
        if hits:
            return hits[0]
    raise FileNotFoundError(f"none of {patterns} in {DATA_DIR}")


def read_description() -> str:
    texts = [p.read_text(errors="ignore") for p in sorted(DATA_DIR.glob("*.md"))]
    texts += [p.read_text(errors="ignore") for p in sorted(DATA_DIR.glob("*.txt"))[:3]]
    return "\n".join(texts)


def find_metric(text: str) -> str | None:
    """The metric named in the description, its Evaluation section first."""
    lowered = text.lower()
    section = re.search(r"#+[^\n]*(evaluation|metric)[^\n]*\n(.*?)(?=\n#+ |\Z)", lowered, re.S)
    for scope in ([section.group(2)] if section else []) + [lowered]:
        for name in [m for m, _ in METRIC_PATTERNS]:
            if f"`{name}`" in scope:
                return name
        for name, pattern in METRIC_PATTERNS:
            if re.search(pattern, scope):
                return name
    return None


def is_integral(values: pd.Series) -> bool:
    numbers = pd.to_numeric(values, errors="coerce").dropna()
    return len(numbers) == len(values.dropna()) and bool((numbers == numbers.round()).all())


def infer_spec(
    train: pd.DataFrame, test: pd.DataFrame, sample: pd.DataFrame, metric: str | None
) -> Spec:
    ids = [c for c in sample.columns if c in test.columns] or [sample.columns[0]]
    targets = [c for c in sample.columns if c not in ids]
    if all(c in train.columns for c in targets):
        return spec_from_targets(train, sample, ids, targets, metric)
    names = {str(t) for t in targets}
    for col in [c for c in train.columns if c not in test.columns]:
        if set(train[col].dropna().astype(str)) & names:
            return Spec(
                ids, targets, "multiclass", "onehot", [col], metric or "multiclass_log_loss"
            )
    raise ValueError(
        f"cannot find the training labels for {targets} in train columns {list(train.columns)}"
    )


def spec_from_targets(train, sample, ids, targets, metric) -> Spec:
    y = train[targets].dropna()
    if len(targets) > 1:
        binary = all(set(pd.to_numeric(y[c], errors="coerce").unique()) <= {0, 1} for c in targets)
        if binary and metric not in REGRESSION_METRICS:
            return Spec(
                ids, targets, "multilabel", "prob", targets, metric or "mean_columnwise_roc_auc"
            )
        return Spec(ids, targets, "regression", "value", targets, metric or "mean_columnwise_rmse")
    values = y[targets[0]]
    numeric = pd.api.types.is_numeric_dtype(values)
    few = is_integral(values) and values.nunique() <= 20
    if metric in REGRESSION_METRICS or (metric is None and numeric and not few):
        return Spec(ids, targets, "regression", "value", targets, metric or "rmse")
    kind = "binary" if values.nunique() <= 2 else "multiclass"
    sample_values = pd.to_numeric(sample[targets[0]], errors="coerce")
    prob_sample = bool(sample_values.notna().all()) and not is_integral(sample_values)
    wants_labels = metric in LABEL_METRICS or (metric is None and not prob_sample)
    output = "label" if wants_labels or kind == "multiclass" else "prob"
    default = "accuracy" if output == "label" else "roc_auc"
    return Spec(ids, targets, kind, output, targets, metric or default)


# ---------------------------------------------------------------- features


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


def audio_features(paths: list[Path | None], freq_groups: int = 11, time_groups: int = 5):
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
) -> tuple[np.ndarray, np.ndarray, dict]:
    """One dense matrix for train and test rows; transforms see features only, never labels."""
    both = pd.concat([train, test], ignore_index=True)
    n = len(train)
    skip = set(spec.ids) | set(spec.label_cols) | set(spec.targets)
    cols = [c for c in test.columns if c in train.columns and c not in skip]
    blocks: list[pd.DataFrame | np.ndarray] = []
    info = {
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
        low, high = values.quantile(0.01), values.quantile(0.99)
        blocks.append(pd.DataFrame({col: values.clip(low, high).fillna(values.median())}))
        if values.isna().any():
            blocks.append(pd.DataFrame({f"{col}_missing": values.isna().astype(float)}))
        info["numeric"] += 1
    series: list[str] = []
    for col in [c for c in cols if c not in numeric]:
        values = both[col]
        text = values.fillna("").astype(str)
        if not SAFE and text.str.lower().str.endswith(IMAGE_SUFFIXES).mean() > 0.9:
            blocks.append(image_features([DATA_DIR / v for v in text]))
            info["image"] += 1
        elif not SAFE and text.str.lower().str.endswith(AUDIO_SUFFIXES).mean() > 0.9:
            blocks.append(audio_features([DATA_DIR / v for v in text]))
            info["audio"] += 1
        elif not SAFE and (dates := date_parts(values)) is not None:
            blocks.append(dates.fillna(dates.median()).fillna(0))
            info["date"] += 1
        elif not SAFE and text.str.split().str.len().mean() >= 4:
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
    if not SAFE:
        add_image_ids(both, spec, blocks, info)
        add_audio_ids(both, spec, blocks, info)
        add_time_features(train, test, both, numeric, series, blocks, info)
    if not blocks:
        blocks.append(np.zeros((len(both), 1)))
    matrix = np.hstack([np.asarray(b, dtype=float) for b in blocks])
    return matrix[:n], matrix[n:], info


def tfidf(text: pd.Series) -> np.ndarray:
    from sklearn.feature_extraction.text import TfidfVectorizer

    ngrams = (1, 2) if LEVEL >= 3 else (1, 1)
    vectorizer = TfidfVectorizer(sublinear_tf=True, ngram_range=ngrams, max_features=3000, min_df=1)
    return vectorizer.fit_transform(text).toarray()


def add_image_ids(both: pd.DataFrame, spec: Spec, blocks: list, info: dict) -> None:
    """Images named after the row id (``images/<id>.png``)."""
    index = image_index()
    if not index or spec.ids[0] not in both:
        return
    keys = both[spec.ids[0]].astype(str)
    if keys.isin(list(index)).mean() > 0.9:
        blocks.append(image_features([index.get(k) for k in keys]))
        info["image"] += 1


def add_audio_ids(both: pd.DataFrame, spec: Spec, blocks: list, info: dict) -> None:
    """Recordings named after the row id (``audio/<id>.wav``)."""
    index = audio_index()
    if not index or spec.ids[0] not in both:
        return
    keys = both[spec.ids[0]].astype(str)
    if keys.isin(list(index)).mean() > 0.9:
        blocks.append(audio_features([index.get(k) for k in keys]))
        info["audio"] += 1


def add_time_features(train, test, both, numeric, series, blocks, info) -> None:
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


# ---------------------------------------------------------------- models


def make_model(level: int, classify: bool, info: dict):
    from sklearn.dummy import DummyClassifier, DummyRegressor
    from sklearn.ensemble import (
        GradientBoostingClassifier,
        GradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if level <= 0:
        return DummyClassifier(strategy="prior") if classify else DummyRegressor()
    linear = make_pipeline(
        StandardScaler(), LogisticRegression(C=0.5, max_iter=3000) if classify else Ridge(alpha=3.0)
    )
    if level == 1:
        return linear
    if level == 2:
        forest = (RandomForestClassifier if classify else RandomForestRegressor)(
            n_estimators=300, min_samples_leaf=2, random_state=SEED, n_jobs=1
        )
        return forest if classify or not info["time"] else TrendPlus(linear, forest)
    boost = (GradientBoostingClassifier if classify else GradientBoostingRegressor)(
        n_estimators=150, learning_rate=0.05, max_depth=3, subsample=0.8, random_state=SEED
    )
    return boost if classify or not info["time"] else TrendPlus(linear, boost)


class TrendPlus:
    """A linear trend, then a tree model on its residuals (trees cannot extrapolate in time)."""

    def __init__(self, trend, residual):
        self.trend, self.residual = trend, residual

    def fit(self, x, y):
        self.trend.fit(x, y)
        self.residual.fit(x, y - self.trend.predict(x))
        return self

    def predict(self, x):
        return self.trend.predict(x) + 0.5 * self.residual.predict(x)


def fit_predict(level: int, spec: Spec, x_train, y, x_test, info: dict) -> np.ndarray:
    """Canonical predictions: class probabilities, label probabilities, or values."""
    if spec.kind in ("binary", "multiclass"):
        model = make_model(level, True, info).fit(x_train, y)
        proba = model.predict_proba(x_test)
        out = np.zeros((len(x_test), len(spec.classes)))
        for j, label in enumerate(model.classes_):
            out[:, spec.classes.index(label)] = proba[:, j]
        return out
    columns = []
    for j in range(y.shape[1]):
        target = y[:, j]
        if spec.kind == "multilabel":
            if len(np.unique(target)) < 2:
                columns.append(np.full(len(x_test), float(target.mean())))
            else:
                columns.append(
                    make_model(level, True, info).fit(x_train, target).predict_proba(x_test)[:, 1]
                )
        else:
            fitted = make_model(level, False, info).fit(
                x_train, np.log1p(target) if spec.log_target else target
            )
            pred = fitted.predict(x_test)
            columns.append(np.expm1(pred).clip(0) if spec.log_target else pred)
    return np.column_stack(columns)


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


def solve_pixels(train, test, target: str, index: dict[str, Path]) -> np.ndarray:
    """Image-to-image regression: a model of LEVEL over pixel features, validated by image."""
    from sklearn.model_selection import GroupKFold

    if len(train) > MAX_PIXEL_ROWS:  # neighbouring pixels repeat each other: a sample will do
        keep = np.random.default_rng(SEED).choice(len(train), MAX_PIXEL_ROWS, replace=False)
        train = train.iloc[np.sort(keep)].reset_index(drop=True)
    x, x_test = pixel_features(train, index), pixel_features(test, index)
    y = train[target].to_numpy(float)
    info = {"time": None}
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
    if listed.str.len().min() < 2 or len(catalogue) > max(200, len(train) // 2):
        return None
    if not all(item in catalogue for row in listed.head(50) for item in row):
        return None
    named = re.search(r"map(?:_at_|@)(\d+)", read_description().lower())
    return int(named.group(1)) if named else int(listed.str.len().max())


def average_precision(actual: set, predicted: list, k: int) -> float:
    """Kaggle's AP@k: precision at each new relevant id in the top k, over min(|actual|, k)."""
    hits, total = 0, 0.0
    for rank, item in enumerate(predicted[:k]):
        if item in actual and item not in predicted[:rank]:
            hits += 1
            total += hits / (rank + 1)
    return total / min(len(actual), k) if actual else 0.0


def rank_scores(level: int, x, y: np.ndarray, x_test) -> np.ndarray:
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
    for j, proba in enumerate(forest.predict_proba(x_test)):
        if proba.shape[1] == 2:
            scores[:, j] = proba[:, 1]
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


def solve_structured(train, test, test_ids, sample) -> Path | None:
    """Sequence-to-sequence and image-to-image tasks, which one row-per-sample model misses."""
    ids = [c for c in sample.columns if c in test.columns] or [sample.columns[0]]
    targets = [c for c in sample.columns if c not in ids]
    spec = Spec(ids, targets, "structured", "value", targets, "")
    if is_seq2seq(train, test, targets):
        values = solve_seq2seq(train, test, targets[0])
    elif (k := ranking_cutoff(train, sample, targets)) is not None:
        values = solve_ranking(train, test, Spec(ids, targets, "ranking", "ids", targets, ""), k)
    elif len(targets) == 1 and targets[0] in train and (index := pixel_images(test)) is not None:
        if pixel_images(train) is None:
            return None
        values = solve_pixels(train, test, targets[0], index)
    else:
        return None
    return write_submission(sample, test_ids, spec, values)


# ---------------------------------------------------------------- validation and output


def labels_of(spec: Spec, train: pd.DataFrame) -> np.ndarray:
    if spec.kind in ("binary", "multiclass"):
        values = train[spec.label_cols[0]].to_numpy()
        spec.classes = sorted(pd.unique(values).tolist(), key=lambda v: (str(type(v)), v))
        return values
    return train[spec.label_cols].astype(float).to_numpy()


def cells(spec: Spec, canon: np.ndarray) -> np.ndarray:
    """Canonical predictions → the submission's target cells."""
    if spec.output == "label":
        return np.array(spec.classes, dtype=object)[canon.argmax(axis=1)].reshape(-1, 1)
    if spec.output == "onehot":
        names = [str(c) for c in spec.classes]
        out = np.column_stack(
            [canon[:, names.index(t)] if t in names else np.zeros(len(canon)) for t in spec.targets]
        )
        out = (1 - PROB_EPS) * out + PROB_EPS / out.shape[1]
        return out / out.sum(axis=1, keepdims=True)
    if spec.kind == "binary":
        return ((1 - PROB_EPS) * canon[:, -1:] + PROB_EPS / 2).reshape(-1, 1)
    if spec.kind == "multilabel":
        return (1 - PROB_EPS) * canon + PROB_EPS / 2
    return canon


def truth_cells(spec: Spec, y: np.ndarray) -> np.ndarray:
    if spec.output == "onehot":
        return np.column_stack([(y.astype(str) == t).astype(float) for t in spec.targets])
    if spec.output == "prob" and spec.kind == "binary":
        return (y == spec.classes[-1]).astype(float).reshape(-1, 1)
    return y.reshape(len(y), -1)


def score(metric: str, truth: np.ndarray, pred: np.ndarray) -> float:
    from sklearn import metrics as m

    def per_column(fn) -> float:
        scores = [
            fn(truth[:, j], pred[:, j])
            for j in range(truth.shape[1])
            if len(np.unique(truth[:, j])) > 1 or fn is not m.roc_auc_score
        ]
        return float(np.mean(scores)) if scores else float("nan")

    def rmsle(t, p):
        return float(
            np.sqrt(np.mean((np.log1p(np.clip(p, 0, None)) - np.log1p(np.clip(t, 0, None))) ** 2))
        )

    if metric in ("roc_auc", "mean_columnwise_roc_auc"):
        return per_column(m.roc_auc_score)
    if metric == "binary_log_loss":
        return float(m.log_loss(truth[:, 0], pred[:, 0], labels=[0, 1]))
    if metric == "multiclass_log_loss":
        return float(m.log_loss(truth.argmax(axis=1), pred, labels=list(range(truth.shape[1]))))
    if metric == "quadratic_weighted_kappa":
        return float(
            m.cohen_kappa_score(
                truth[:, 0].astype(str), pred[:, 0].astype(str), weights="quadratic"
            )
        )
    if metric == "accuracy":
        return float(np.mean(truth[:, 0].astype(str) == pred[:, 0].astype(str)))
    if metric == "macro_f1":
        return float(m.f1_score(truth[:, 0].astype(str), pred[:, 0].astype(str), average="macro"))
    if metric in ("rmsle", "mean_columnwise_rmsle"):
        return per_column(rmsle)
    if metric == "mae":
        return per_column(m.mean_absolute_error)
    if metric == "r2":
        return per_column(m.r2_score)
    return per_column(lambda t, p: float(np.sqrt(m.mean_squared_error(t, p))))


def splits(
    spec: Spec, train: pd.DataFrame, y: np.ndarray, info: dict
) -> list[tuple[np.ndarray, np.ndarray]]:
    """A time hold-out (last steps of every series) for forecasting, else 5-fold CV."""
    from sklearn.model_selection import KFold, StratifiedKFold

    if info["time"]:
        t = train[info["time"]].to_numpy(float)
        cut = np.quantile(t, 0.8)
        return [(np.where(t <= cut)[0], np.where(t > cut)[0])]
    k = min(5, len(train) // 10) if len(train) >= 20 else 2
    if spec.kind in ("binary", "multiclass") and pd.Series(y).value_counts().min() >= k:
        return list(StratifiedKFold(k, shuffle=True, random_state=SEED).split(train, y))
    return list(KFold(k, shuffle=True, random_state=SEED).split(train))


def validate(level: int, spec: Spec, x, y, folds, info: dict) -> float:
    rows: list[np.ndarray] = []
    preds: list[np.ndarray] = []
    for fit_idx, val_idx in folds:
        preds.append(
            cells(spec, fit_predict(level, spec, x[fit_idx], y[fit_idx], x[val_idx], info))
        )
        rows.append(val_idx)
    order = np.concatenate(rows)
    oof = np.concatenate(preds)
    return score(spec.metric, truth_cells(spec, y[order]), oof)


def choose_level(spec: Spec, x, y, folds, info: dict) -> tuple[int, float]:
    """LEVEL, or at LEVEL 4 the candidate with the best cross-validated metric."""
    if LEVEL < 4:
        return LEVEL, validate(LEVEL, spec, x, y, folds, info)
    lower = spec.metric in LOWER_IS_BETTER
    results = [(level, validate(level, spec, x, y, folds, info)) for level in (1, 2, 3)]
    results = [r for r in results if np.isfinite(r[1])] or results
    for level, value in results:
        print(f"  candidate {LEVEL_NAMES[level]}: {value:.5f}")
    return (min if lower else max)(results, key=lambda r: r[1])


def write_submission(
    sample: pd.DataFrame, test_ids: pd.DataFrame, spec: Spec, values: np.ndarray
) -> Path:
    """The sample's ids and columns, in its row order, filled with our predictions."""
    out = sample.copy()
    keys = (
        test_ids[spec.ids].astype(str).agg("\x1f".join, axis=1) if spec.ids[0] in test_ids else None
    )
    wanted = sample[spec.ids].astype(str).agg("\x1f".join, axis=1)
    if keys is not None and wanted.isin(set(keys)).all():
        position = pd.Series(np.arange(len(keys)), index=keys.to_numpy())
        values = values[position.loc[wanted.to_numpy()].to_numpy()]
    elif len(values) != len(sample):
        raise ValueError(f"test has {len(values)} rows but the sample submission has {len(sample)}")
    for j, col in enumerate(spec.targets):
        out[col] = values[:, j]
    SUBMISSION_DIR.mkdir(parents=True, exist_ok=True)
    path = SUBMISSION_DIR / "submission.csv"
    out.to_csv(path, index=False)
    return path


def main() -> None:
    warnings.filterwarnings("ignore")
    sample_path = find_file(["*sample*submission*.csv", "*sample*.csv", "*submission*.csv"])
    train = pd.read_csv(find_file(["train.csv", "*train*.csv"]))
    test_path = find_file(["test.csv", "*test*.csv"])
    test = pd.read_csv(test_path)
    sample = pd.read_csv(sample_path, dtype=str, keep_default_na=False)
    test_ids = pd.read_csv(test_path, dtype=str, keep_default_na=False)
    if not SAFE and (path := solve_structured(train, test, test_ids, sample)) is not None:
        print(f"Wrote submission: {path} ({len(sample)} rows)")
        return
    spec = infer_spec(train, test, sample, find_metric(read_description()))
    train = train.dropna(subset=spec.label_cols).reset_index(drop=True)
    spec.log_target = spec.metric in ("rmsle", "mean_columnwise_rmsle")
    y = labels_of(spec, train)
    x_train, x_test, info = build_features(train, test, spec)
    direction = "lower" if spec.metric in LOWER_IS_BETTER else "higher"
    print(
        f"Task: {spec.kind} ({spec.output}) | targets: {', '.join(spec.targets)} | metric: {spec.metric} ({direction} is better)"
    )
    print(f"Features: {x_train.shape[1]} columns from {info['numeric']} numeric, {info['categorical']} categorical, "
          f"{info['text']} text, {info['image']} image, {info['audio']} audio, {info['date']} date; "
          f"time index: {info['time']}")  # fmt: skip
    level, value = choose_level(spec, x_train, y, splits(spec, train, y, info), info)
    print(f"Model: {LEVEL_NAMES[level]} (level {level})")
    print(f"Validation metric: {value:.6f}")
    path = write_submission(
        sample, test_ids, spec, cells(spec, fit_predict(level, spec, x_train, y, x_test, info))
    )
    print(f"Wrote submission: {path} ({len(sample)} rows)")


if __name__ == "__main__":
    main()
