"""Image tasks: small grayscale PNGs of procedurally drawn shapes on noisy backgrounds.

The hidden rule is visual: which shape is present (class), which shapes are present
(labels), how many blobs there are (ordinal), or how much of the tile is covered (value).
Low contrast, pixel noise and distractor dots keep it from being trivial.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
from PIL import Image, ImageDraw

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.developer import DevelopedTask, HiddenRule, make_ids, split_rows

SHAPES = ("circle", "square", "triangle", "cross", "ring", "bar")
IMAGE_DIR = "images"
FEATURE_SIZE = 16


def build(bp: Blueprint, rng: np.random.Generator) -> DevelopedTask:
    n, size = bp.n_train + bp.n_test, int(bp.params["size"])
    truth, draw_plan, rule = _plan(bp, n, rng)
    pixels, coverage = zip(*(_render(size, shapes, rng) for shapes in draw_plan), strict=True)
    y, oracle = _observe(bp, truth, np.array(coverage), rng)
    ids = make_ids(bp.dna.id_scheme, n, rng, prefix="img")
    frame = pd.DataFrame({bp.domain.id_column: ids})
    train, test = split_rows(bp, frame)
    train = pd.concat([train, tg.train_label_frame(bp, y[: bp.n_train])], axis=1)
    files = {f"{IMAGE_DIR}/{ids[i]}.png": _png(pixels[i]) for i in range(n)}
    return DevelopedTask(
        rule=rule,
        train=train,
        test=test,
        answers=tg.answers_frame(bp, test[bp.domain.id_column], y[bp.n_train :]),
        files=files,
        oracle=oracle[bp.n_train :],
    )


def _plan(bp: Blueprint, n: int, rng: np.random.Generator) -> tuple[np.ndarray, list, HiddenRule]:
    """True targets and, per image, the shapes to draw."""
    k, task = bp.dna.n_outputs, bp.dna.task_type
    if task == "multilabel":
        truth = (rng.random((n, k)) < bp.dna.balance).astype(np.int64)
        plan = [[SHAPES[j] for j in range(k) if row[j]] for row in truth]
        return truth, plan, _rule("shape-labels", "label j is present iff shape j is drawn", k)
    if task == "regression":
        plan = [list(rng.choice(SHAPES, int(rng.integers(1, 5)))) for _ in range(n)]
        return (
            np.zeros(n),
            plan,
            _rule("coverage", "target is the share of the tile covered by shapes", 0),
        )
    prior = (
        np.full(k, 1 / k)
        if task == "multiclass"
        else np.array([1 - bp.dna.balance, bp.dna.balance])
    )
    truth = tg.sample_classes(np.tile(prior, (n, 1)), 0.0, rng)
    if bp.dna.ordinal:
        plan = [["dot"] * int(c) for c in truth]
        return truth, plan, _rule("blob-count", "the class is the number of bright blobs", 0)
    if task == "binary":  # negatives show a look-alike shape, positives the target shape
        plan = [[SHAPES[0]] if c else [str(rng.choice(SHAPES[1:3]))] for c in truth]
        return truth, plan, _rule("shape-presence", f"positive iff a {SHAPES[0]} is drawn", 0)
    plan = [[SHAPES[c]] for c in truth]
    return truth, plan, _rule("shape-class", "class k is the k-th shape", k)


def _rule(kind: str, summary: str, k: int) -> HiddenRule:
    return HiddenRule(kind=kind, summary=summary, params={"shapes": list(SHAPES[:k])})


def _render(size: int, shapes: list[str], rng: np.random.Generator) -> tuple[np.ndarray, float]:
    base = float(rng.uniform(20, 90))
    mask = Image.new("L", (size, size), 0)
    draw = ImageDraw.Draw(mask)
    for shape in shapes:
        _draw(draw, shape, size, rng)
    for _ in range(int(rng.integers(0, 3))):  # distractor specks
        cx, cy = rng.integers(0, size, 2)
        draw.point((int(cx), int(cy)), fill=255)
    ink = np.asarray(mask, dtype=np.float64) / 255
    contrast = float(rng.uniform(35, 140))
    noisy = base + contrast * ink + rng.normal(0, rng.uniform(8, 28), ink.shape)
    return np.clip(noisy, 0, 255).astype(np.uint8), float(ink.mean())


def _draw(draw: ImageDraw.ImageDraw, shape: str, size: int, rng: np.random.Generator) -> None:
    r = (
        int(rng.integers(max(2, size // 6), size // 3 + 1))
        if shape != "dot"
        else max(1, size // 10)
    )
    cx, cy = (int(v) for v in rng.integers(r, size - r, 2))
    box = (cx - r, cy - r, cx + r, cy + r)
    width = max(1, size // 12)
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
    else:
        draw.line((cx - r, cy - r, cx + r, cy + r), fill=255, width=width + 1)


def _observe(
    bp: Blueprint, truth: np.ndarray, coverage: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    eps, k = bp.noise.label_noise, bp.dna.n_outputs
    if bp.dna.task_type == "regression":
        y = np.round(coverage + rng.normal(0, 0.01 + 0.1 * eps, len(coverage)), 5)
        return y.reshape(-1, 1), coverage.reshape(-1, 1)
    if bp.dna.task_type == "multilabel":
        flip = rng.random(truth.shape) < eps
        return np.where(flip, 1 - truth, truth), tg.oracle_labels(truth.astype(float), eps)
    y = truth.copy()
    flip = rng.random(len(y)) < eps
    y[flip] = rng.integers(0, k, int(flip.sum()))
    return y, tg.oracle_classes(np.eye(k)[truth], eps)


def _png(pixels: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def features(bp: Blueprint, task: DevelopedTask) -> tuple[np.ndarray, np.ndarray]:
    """Raw pixels at 16x16, scaled to [0, 1]."""
    column = bp.domain.id_column

    def load(ids: pd.Series) -> np.ndarray:
        rows = []
        for value in ids:
            image = Image.open(io.BytesIO(task.files[f"{IMAGE_DIR}/{value}.png"]))
            rows.append(
                np.asarray(image.resize((FEATURE_SIZE, FEATURE_SIZE)), dtype=np.float64).ravel()
            )
        return np.array(rows) / 255

    return load(task.train[column]), load(task.test[column])
