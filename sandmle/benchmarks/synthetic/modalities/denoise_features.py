"""What the denoising learners see, and their ladder (image-to-image tasks).

The generic learner fits a ridge or gradient boosting on each pixel's noisy 3x3
neighbourhood, chosen by cross-validation over folds of whole pages. The structure-aware
learner is told the degradation kinds (``rule.params["structure"]["kinds"]``, not their
strengths) and builds the matching restoration features: impulse repair; under stains or
uneven light, the page divided by the light on its paper and scaled back to its best-lit
paper; sharpening; the page's ink and paper levels times its ink/paper masks. A ridge fits
them.
"""

from __future__ import annotations

import io
from collections.abc import Mapping

import numpy as np
import pandas as pd
from PIL import Image
from scipy import ndimage
from sklearn.ensemble import HistGradientBoostingRegressor
from threadpoolctl import threadpool_limits

from sandmle.benchmarks.synthetic.artifacts import HiddenRule, PublicData
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.learners import best_model, ridge
from sandmle.benchmarks.synthetic.modalities.contract import Matrices


def _images(files: Mapping[str, bytes], frame: pd.DataFrame, folder: str) -> dict[int, np.ndarray]:
    out = {}
    for stem in pd.unique(frame["image"]):
        raw = files[f"{folder}/{int(stem)}.png"]
        out[int(stem)] = np.asarray(Image.open(io.BytesIO(raw)), dtype=np.float64) / 255
    return out


def _per_pixel(frame: pd.DataFrame, maps: dict[int, list[np.ndarray]]) -> np.ndarray:
    """Stack each image's feature maps and read them at the frame's pixels, in row order."""
    out = np.empty((len(frame), len(next(iter(maps.values())))))
    image = frame["image"].to_numpy()
    row, col = frame["row"].to_numpy() - 1, frame["col"].to_numpy() - 1
    for stem, layers in maps.items():
        at = image == stem
        out[at] = np.column_stack([layer[row[at], col[at]] for layer in layers])
    return out


def neighbourhood(page: np.ndarray) -> list[np.ndarray]:
    """The 3x3 neighbourhood of every pixel (edges repeated), one map per offset."""
    padded = np.pad(page, 1, mode="edge")
    h, w = page.shape
    return [padded[dy : dy + h, dx : dx + w] for dy in range(3) for dx in range(3)]


def features(bp: Blueprint, data: PublicData) -> Matrices:
    """Generic: each pixel's noisy 3x3 neighbourhood (a learned linear filter)."""

    def encode(frame: pd.DataFrame, folder: str) -> np.ndarray:
        pages = _images(data.files, frame, folder)
        return _per_pixel(frame, {k: neighbourhood(v) for k, v in pages.items()})

    return encode(data.train, "train"), encode(data.test, "test")


def restoration_maps(page: np.ndarray, kinds: list[str]) -> list[np.ndarray]:
    """Features that undo the named degradations: impulses median-filtered; under uneven
    light or stains, the page divided by the light on its paper and scaled back by its
    best-lit paper, so a pixel reads in the page's own grey levels; sharpened (blur). The
    page's ink and paper levels and the ink/paper masks times those levels let a ridge
    write a pixel as ink or paper of its own page."""
    base = unimpulse(page) if "salt-pepper" in kinds else page
    if {"gradient", "stains"} & set(kinds):
        light = paper_light(base)
    else:
        light = np.full(page.shape, float(np.quantile(base, 0.9)))
    paper = float(np.quantile(light, 0.98))
    even = base / np.maximum(light, 0.03) * paper
    ink = float(np.quantile(even, 0.05))
    maps = neighbourhood(even) + [np.full(page.shape, ink), np.full(page.shape, paper)]
    sharp = even
    if "blur" in kinds:
        sharp = even + 1.5 * (even - ndimage.gaussian_filter(even, 1.0, mode="nearest"))
        maps.append(sharp)
    masks = [(sharp < t * paper).astype(float) for t in (0.5, 0.65, 0.8)]
    return maps + [m * ink for m in masks] + [(1 - m) * paper for m in masks]


def paper_light(base: np.ndarray) -> np.ndarray:
    """The light falling on the paper: a local average of the pixels classed as paper
    (brighter than halfway to the page's ink), refined from a first local-percentile guess.
    A local maximum would be biased by the sensor noise, and by a lot on these small pages."""
    window = max(7, base.shape[0] // 3)
    local = ndimage.percentile_filter(base, 75, size=window, mode="nearest")
    light = ndimage.gaussian_filter(local, 1.5, mode="nearest")
    for _ in range(3):
        contrast = base / np.maximum(light, 0.03)
        paper = (contrast > 0.5 * (1 + np.quantile(contrast, 0.05))).astype(float)
        num = ndimage.gaussian_filter(base * paper, 1.5, mode="nearest")
        den = ndimage.gaussian_filter(paper, 1.5, mode="nearest")
        light = np.where(den > 1e-3, num / np.maximum(den, 1e-3), light)
    return light


def unimpulse(page: np.ndarray) -> np.ndarray:
    """Impulses are pure black or white: each becomes the median of its other neighbours."""
    impulse = (page <= 0.0) | (page >= 1.0)
    masked = np.where(impulse, np.nan, page)
    with np.errstate(all="ignore"):
        fill = ndimage.generic_filter(masked, _nanmedian, size=3, mode="nearest")
    fill = np.where(np.isnan(fill), np.nanmedian(masked), fill)
    return np.where(impulse, fill, page)


def _nanmedian(values: np.ndarray) -> float:
    kept = values[~np.isnan(values)]
    return float(np.median(kept)) if kept.size else float("nan")


def structure_features(bp: Blueprint, rule: HiddenRule, data: PublicData) -> Matrices:
    kinds = list(rule.params["structure"]["kinds"])

    def encode(frame: pd.DataFrame, folder: str) -> np.ndarray:
        pages = _images(data.files, frame, folder)
        return _per_pixel(frame, {k: restoration_maps(v, kinds) for k, v in pages.items()})

    return encode(data.train, "train"), encode(data.test, "test")


def ladder(bp: Blueprint, rule: HiddenRule, data: PublicData) -> dict[str, np.ndarray]:
    """Constant (mean grey), generic (ridge or gradient boosting on each pixel's 3x3
    neighbourhood, chosen by 3-fold CV over whole pages), structure (a ridge on the
    restoration features of the rule's degradation kinds)."""
    y = data.train["value"].to_numpy(dtype=np.float64)
    pages = data.train["image"].to_numpy()
    out = {"constant": np.full((len(data.test), 1), float(y.mean()))}

    def boost() -> HistGradientBoostingRegressor:
        return HistGradientBoostingRegressor(max_iter=100, random_state=0)

    with threadpool_limits(1):
        x, x_test = features(bp, data)
        # folds of whole pages: pixels of one page share its levels
        model = best_model([ridge(0.3), ridge(10.0), boost()], x, y, "value", 0, groups=pages)
        out["generic"] = np.clip(model.fit(x, y).predict(x_test), 0, 1)[:, None]
        if "structure" in rule.params:
            s, s_test = structure_features(bp, rule, data)
            # a ridge: the features already restore the page; boosting splits on the page-level
            # levels, i.e. memorises the 8-14 training pages, and scored worse on new pages
            out["structure"] = np.clip(ridge(1.0).fit(s, y).predict(s_test), 0, 1)[:, None]
    return out


def noisy_copy(data: PublicData) -> np.ndarray:
    """Each test pixel's noisy value: the do-nothing baseline."""
    pages = _images(data.files, data.test, "test")
    return _per_pixel(data.test, {k: [v] for k, v in pages.items()})
