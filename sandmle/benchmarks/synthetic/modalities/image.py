"""Image tasks: small grayscale PNGs of procedurally drawn shapes on noisy backgrounds.

The hidden rule is visual, over a randomised class<->shape mapping (the strategist's form
``shapes=...`` is a permutation of eight shapes): which shape is present (binary: the first
shape of the mapping, against look-alikes), which shape a tile shows (class k is the k-th
shape), which shapes are present (labels), or how many small target shapes there are among
look-alikes (ordinal grade, or a value). Low contrast, pixel noise, distractor shapes and specks keep
it from being trivial. ``rule.params["structure"]`` records the mapping; the
structure-aware learner matches each shape's template against the image.
"""

from __future__ import annotations

import io
from collections.abc import Mapping

import numpy as np
import pandas as pd
from PIL import Image, ImageDraw
from scipy import ndimage, signal

from sandmle.benchmarks.media import png_bytes
from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.artifacts import DevelopedTask, HiddenRule, PublicData
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.modalities.contract import Matrices, Modality
from sandmle.benchmarks.synthetic.rows import file_rows_task, make_ids

Box = tuple[int, int, int, int]

SHAPES = ("circle", "square", "triangle", "cross", "ring", "bar")
ALL_SHAPES = (*SHAPES, "diamond", "frame")
IMAGE_DIR = "images"
FEATURE_SIZE = 16


def build(bp: Blueprint, rng: np.random.Generator) -> DevelopedTask:
    n, size = bp.n_train + bp.n_test, int(bp.params["size"])
    mapping = _mapping(bp)
    truth, draw_plan, rule = _plan(bp, mapping, n, rng)
    pixels, coverage = zip(*(_scene(size, shapes, rng) for shapes in draw_plan), strict=True)
    y, oracle = _observe(bp, truth, np.array(coverage), rng)
    ids = make_ids(bp.dna.id_scheme, n, rng, prefix="img")
    files = {f"{IMAGE_DIR}/{ids[i]}.png": png_bytes(pixels[i]) for i in range(n)}
    return file_rows_task(bp, rule, ids, y, oracle, files)


def _mapping(bp: Blueprint) -> list[str]:
    for item in bp.form:
        if item.startswith("shapes="):
            return item.split("=", 1)[1].split(",")
    return list(ALL_SHAPES)


def _plan(
    bp: Blueprint, mapping: list[str], n: int, rng: np.random.Generator
) -> tuple[np.ndarray, list[list[str]], HiddenRule]:
    """True targets and, per image, the shapes to draw."""
    k, task = bp.dna.n_outputs, bp.dna.task_type
    spare = (
        mapping[3:] if task == "binary" else mapping[2:] if task == "regression" else mapping[k:]
    )

    def distract() -> list[str]:
        return [str(rng.choice(spare))] if spare and rng.random() < 0.35 else []

    if task == "multilabel":
        truth = (rng.random((n, k)) < bp.dna.balance).astype(np.int64)
        plan = [[mapping[j] for j in range(k) if row[j]] + distract() for row in truth]
        return (
            truth,
            plan,
            _rule("shape-labels", "label j is present iff shape j is drawn", mapping[:k]),
        )
    if task == "regression":  # how many target shapes, among look-alikes
        counts = rng.integers(0, 5, n)
        plan = [
            [f"small-{mapping[0]}"] * int(c)
            + [f"small-{s}" for s in rng.choice(mapping[1:3], int(rng.integers(0, 3)))]
            for c in counts
        ]
        summary = f"target is the number of small {mapping[0]}s (small {mapping[1]}s and {mapping[2]}s distract)"
        shapes = [f"small-{s}" for s in mapping[:3]]
        return counts.astype(float), plan, _rule("shape-count-value", summary, shapes)
    prior = (
        np.full(k, 1 / k)
        if task == "multiclass"
        else np.array([1 - bp.dna.balance, bp.dna.balance])
    )
    truth = tg.sample_classes(np.tile(prior, (n, 1)), 0.0, rng)
    if bp.dna.ordinal:
        plan = [["dot"] * int(c) + distract() for c in truth]
        return (
            truth,
            plan,
            _rule("blob-count", "the class is the number of small blobs", ["dot", *spare]),
        )
    if task == "binary":  # negatives show a look-alike shape, positives the target shape
        plan = [
            ([mapping[0]] if c else [str(rng.choice(mapping[1:3]))]) + distract() for c in truth
        ]
        return (
            truth,
            plan,
            _rule("shape-presence", f"positive iff a {mapping[0]} is drawn", mapping[:3]),
        )
    plan = [[mapping[c]] + distract() for c in truth]
    return (
        truth,
        plan,
        _rule("shape-class", "class k is the k-th shape of the mapping", mapping[:k]),
    )


def _rule(kind: str, summary: str, shapes: list[str]) -> HiddenRule:
    return HiddenRule(
        kind=f"image-{kind}",
        summary=summary,
        params={"structure": {"kind": kind, "shapes": list(shapes)}},
    )


def _scene(size: int, shapes: list[str], rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """One tile: shapes on a noisy background (moderate contrast, so shapes stay legible)."""
    return render(size, shapes, rng, contrast=(60, 140), noise=(6, 20))


def render(
    size: int,
    shapes: list[str],
    rng: np.random.Generator,
    contrast: tuple[float, float] = (35, 140),
    noise: tuple[float, float] = (8, 28),
) -> tuple[np.ndarray, float]:
    """Shapes drawn on a noisy background; returns the tile and the share of inked pixels."""
    base = float(rng.uniform(20, 90))
    mask = Image.new("L", (size, size), 0)
    draw = ImageDraw.Draw(mask)
    for shape in shapes:
        _draw(draw, shape, size, rng)
    for _ in range(int(rng.integers(0, 3))):  # distractor specks
        cx, cy = rng.integers(0, size, 2)
        draw.point((int(cx), int(cy)), fill=255)
    ink = np.asarray(mask, dtype=np.float64) / 255
    scale = float(rng.uniform(*contrast))
    noisy = base + scale * ink + rng.normal(0, rng.uniform(*noise), ink.shape)
    return np.clip(noisy, 0, 255).astype(np.uint8), float(ink.mean())


def _draw(draw: ImageDraw.ImageDraw, shape: str, size: int, rng: np.random.Generator) -> None:
    if shape.startswith("small-"):  # counted shapes: a fixed small radius
        shape, r = shape.removeprefix("small-"), max(3, size // 7)
    else:
        r = (
            int(rng.integers(max(2, size // 6), size // 3 + 1))
            if shape != "dot"
            else max(1, size // 10)
        )
    cx, cy = (int(v) for v in rng.integers(r, size - r, 2))
    box = (cx - r, cy - r, cx + r, cy + r)
    width = max(1, size // 12)
    _draw_at(draw, shape, box, cx, cy, r, width)


def _observe(
    bp: Blueprint, truth: np.ndarray, coverage: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    if bp.dna.task_type == "regression":
        y = np.round(truth + rng.normal(0, 0.15 + bp.noise.label_noise, len(truth)), 4)
        return y.reshape(-1, 1), truth.astype(float).reshape(-1, 1)
    return tg.observe_labels(bp, truth, rng)


def features(bp: Blueprint, data: PublicData) -> Matrices:
    """Raw pixels at 16x16, scaled to [0, 1]."""
    column = bp.domain.id_column
    return pixel_features(data.files, data.train[column]), pixel_features(
        data.files, data.test[column]
    )


def pixel_features(files: Mapping[str, bytes], ids: pd.Series) -> np.ndarray:
    """Each id's image, resized to 16x16, as a row of pixels in [0, 1]."""
    rows = []
    for value in ids:
        image = Image.open(io.BytesIO(files[f"{IMAGE_DIR}/{value}.png"]))
        rows.append(
            np.asarray(image.resize((FEATURE_SIZE, FEATURE_SIZE)), dtype=np.float64).ravel()
        )
    return np.array(rows) / 255


def shape_bank_features(files: Mapping[str, bytes], ids: pd.Series, size: int) -> np.ndarray:
    """Template matches for every shape (not one task's mapping): comparable across tasks."""
    templates = [_template(shape, r, size) for shape in ALL_SHAPES for r in _radii(size, shape)]
    return _describe(_stack(files, ids), templates)


def _stack(files: Mapping[str, bytes], ids: pd.Series) -> np.ndarray:
    return np.stack(
        [
            np.asarray(Image.open(io.BytesIO(files[f"{IMAGE_DIR}/{value}.png"])), dtype=np.float64)
            for value in ids
        ]
    )


def structure_features(bp: Blueprint, rule: HiddenRule, data: PublicData) -> Matrices:
    """Per shape of the mapping, the best template match; plus blob count and ink share."""
    shapes = rule.params["structure"]["shapes"]
    size = int(bp.params["size"])
    templates = [_template(shape, r, size) for shape in shapes for r in _radii(size, shape)]
    column = bp.domain.id_column

    def encode(ids: pd.Series) -> np.ndarray:
        return _describe(_stack(data.files, ids), templates)

    return encode(data.train[column]), encode(data.test[column])


def _radii(size: int, shape: str) -> list[int]:
    if shape == "dot":
        return [max(1, size // 10)]
    if shape.startswith("small-"):
        return [max(3, size // 7)]
    low, high = max(2, size // 6), size // 3
    return sorted({low, (low + high) // 2, high})


def _template(shape: str, r: int, tile: int) -> np.ndarray:
    shape = shape.removeprefix("small-")
    side = 2 * r + 3
    mask = Image.new("L", (side, side), 0)
    draw = ImageDraw.Draw(mask)
    cx = cy = side // 2
    box = (cx - r, cy - r, cx + r, cy + r)
    width = max(1, tile // 12)  # line widths follow the tile size, as when drawing
    _draw_at(draw, shape, box, cx, cy, r, width)
    t = np.asarray(mask, dtype=np.float64) / 255
    t = t - t.mean()
    return t / (np.linalg.norm(t) or 1.0)


def _draw_at(
    draw: ImageDraw.ImageDraw, shape: str, box: Box, cx: int, cy: int, r: int, width: int
) -> None:
    if shape in ("circle", "dot"):
        draw.ellipse(box, fill=255)
    elif shape == "square":
        draw.rectangle(box, fill=255)
    elif shape == "triangle":
        draw.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], fill=255)
    elif shape == "cross":
        draw.line((cx - r, cy, cx + r, cy), fill=255, width=width)
        draw.line((cx, cy - r, cx, cy + r), fill=255, width=width)
    elif shape == "ring":
        draw.ellipse(box, outline=255, width=width)
    elif shape == "diamond":
        draw.polygon([(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)], fill=255)
    elif shape == "frame":
        draw.rectangle(box, outline=255, width=width)
    else:
        draw.line((cx - r, cy - r, cx + r, cy + r), fill=255, width=width + 1)


def _describe(stack: np.ndarray, templates: list[np.ndarray]) -> np.ndarray:
    """Template matches (one FFT correlation per template over the whole stack), blobs, ink."""
    flat = stack.reshape(len(stack), -1)
    centre = np.median(flat, axis=1)[:, None, None]
    spread = flat.std(axis=1)[:, None, None]
    smooth = ndimage.gaussian_filter(
        (stack - centre) / np.where(spread > 0, spread, 1.0), (0, 0.7, 0.7)
    )
    matches = []
    for t in templates:
        response = signal.fftconvolve(smooth, t[None, ::-1, ::-1], mode="same", axes=(1, 2))
        response = response.reshape(len(stack), -1)
        matches.append(response.max(axis=1))
        matches.append(np.clip(response - 2.0, 0, None).mean(axis=1))  # how much matches
    ink = smooth > 0.5 * smooth.max(axis=(1, 2), keepdims=True)
    blobs = [float(ndimage.label(ndimage.binary_opening(m))[1]) for m in ink]
    return np.column_stack(
        [*matches, blobs, ink.mean(axis=(1, 2)), (smooth > 1.0).mean(axis=(1, 2))]
    )


MODALITY = Modality(
    name="image", build=build, features=features, structure_features=structure_features
)
