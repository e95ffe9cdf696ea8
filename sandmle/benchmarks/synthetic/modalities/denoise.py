"""Image-to-image tasks: clean small scanned pages from their noisy scans, pixel by pixel.

As in Kaggle's denoising-dirty-documents: ``train/`` holds noisy grayscale PNGs,
``train_cleaned/`` their clean versions and ``test/`` the noisy test pages; a submission
has one row per test pixel, ``id`` = ``<image>_<row>_<col>`` (1-based) and ``value`` the
clean grey level in [0, 1], scored by RMSE. ``train.csv`` and ``test.csv`` list the same
pixels as tables (``value`` only in train).

A clean page is rows of glyphs from a per-task alphabet of 3x5 bitmaps (drawn with 2-pixel
strokes), dark ink on light paper, with each page's own ink and paper levels; the clean
target also carries a faint paper texture no model can see, so the rule is not the answers.
The hidden rule is the degradation, composed from the strategist's form: ``stains`` (smooth
dark blotches), ``blur`` (a Gaussian point spread), ``salt-pepper`` (impulse pixels) and
``gradient`` (uneven illumination), always over sensor noise.

``rule.params["structure"]`` records the degradation kinds (not their strengths); the
learners and their restoration features are in :mod:`.denoise_features`.

The description is the Technical Writer's (:mod:`..writer`), from this module's
:func:`description_specifics`; it says nothing about the degradation.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import ndimage

from sandmle.benchmarks.media import png_bytes
from sandmle.benchmarks.synthetic.artifacts import DevelopedTask, HiddenRule, Specifics
from sandmle.benchmarks.synthetic.blueprint import Blueprint, MutatedDomain, TaskRequest
from sandmle.benchmarks.synthetic.domains import DomainPool
from sandmle.benchmarks.synthetic.modalities.contract import Modality
from sandmle.benchmarks.synthetic.modalities.denoise_features import (
    features,
    ladder,
    structure_features,
)
from sandmle.benchmarks.synthetic.planning import Params, draw_noise, new_blueprint
from sandmle.benchmarks.synthetic.rows import make_ids
from sandmle.benchmarks.synthetic.streams import STRATEGIST, role_rng

NOISES = ("stains", "blur", "salt-pepper", "gradient")
WIDE_NOISES = ("stains", "gradient")
FOLDERS = ("train", "train_cleaned", "test")
SIZES = (16, 20, 24)
GLYPH_H, GLYPH_W = 5, 3

POOLS = (
    DomainPool("archive-scans", "Archive Scan Cleanup", "scanned archive page", (), (), ""),
    DomainPool("receipt-restoration", "Faded Receipt Restoration", "receipt scan", (), (), ""),
    DomainPool("ledger-pages", "Ledger Page Denoising", "ledger page", (), (), ""),
    DomainPool("microfilm-frames", "Microfilm Frame Cleaning", "microfilm frame", (), (), ""),
    DomainPool("field-forms", "Field Form Scan Repair", "field form scan", (), (), ""),
)
COLUMNS = ("image", "row", "col")


# ---------------------------------------------------------------- planning


def plan(request: TaskRequest, backend: str) -> Blueprint:
    """Blueprint for a denoising task: image size and counts, the degradation kinds (form)."""
    rng = role_rng(request.entropy, STRATEGIST)
    pool = POOLS[int(rng.integers(len(POOLS)))]
    noise = draw_noise(request.dna, rng)
    size = int(rng.choice(SIZES))
    per_image = size * size
    n_train_images = int(rng.integers(8, 15))
    n_test_images = int(rng.integers(96, 145))  # pages, not pixels, are the unit of test noise
    # one page-wide degradation always: a 3x3 filter cannot see it, so the structure-aware
    # learner's lead over the generic one stays several test-noise sds wide
    wide = str(rng.choice(WIDE_NOISES))
    rest = [k for k in NOISES if k != wide]
    chosen = [wide, *rng.choice(rest, int(rng.integers(1, 3)), replace=False)]
    domain = MutatedDomain(
        title=pool.title,
        slug=pool.slug,
        entity=pool.entity,
        id_column="id",
        feature_columns=list(COLUMNS),
        target_columns=["value"],
        unit="grey level in [0, 1]",
    )
    sizes = (n_train_images * per_image, n_test_images * per_image)
    params: Params = {
        "size": size,
        "n_train_images": n_train_images,
        "n_test_images": n_test_images,
    }
    form = sorted(str(c) for c in chosen)
    return new_blueprint(request, backend, domain, noise, sizes, params, form)


# ---------------------------------------------------------------- pages and degradations


def _alphabet(rng: np.random.Generator, n: int = 12) -> np.ndarray:
    """``n`` random 3x5 glyph bitmaps, each with enough ink to read."""
    glyphs: list[np.ndarray] = []
    while len(glyphs) < n:
        glyph = rng.random((GLYPH_H, GLYPH_W)) < 0.5
        if 5 <= glyph.sum() <= 11:
            glyphs.append(glyph)
    return np.array(glyphs)


def _page(size: int, alphabet: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Ink mask of one page: lines of glyphs drawn at twice their bitmap size (2-pixel
    strokes, as on a scan), with spaces and margins of 1-2 pixels."""
    ink = np.zeros((size, size), dtype=bool)
    height, width = 2 * GLYPH_H, 2 * GLYPH_W
    for y in range(int(rng.integers(1, 3)), size - height, height + 2):
        x = int(rng.integers(1, 3))
        while x + width < size:
            if rng.random() < 0.82:
                glyph = alphabet[int(rng.integers(len(alphabet)))]
                ink[y : y + height, x : x + width] |= np.kron(glyph, np.ones((2, 2), bool))
            x += width + 2
    return ink


def _degrade(
    clean: np.ndarray, kinds: list[str], strength: dict[str, float], rng: np.random.Generator
) -> np.ndarray:
    """The hidden rule: the form's degradations over sensor noise, as a scanner would."""
    size = clean.shape[0]
    page = clean.copy()
    if "blur" in kinds:
        page = ndimage.gaussian_filter(page, strength["blur"], mode="nearest")
    if "gradient" in kinds:
        angle = rng.uniform(0, 2 * np.pi)
        yy, xx = np.mgrid[0:size, 0:size] / (size - 1)
        ramp = np.cos(angle) * xx + np.sin(angle) * yy
        ramp = (ramp - ramp.min()) / (np.ptp(ramp) or 1.0)
        page = page * (1 - strength["gradient"] * ramp)
    if "stains" in kinds:
        yy, xx = np.mgrid[0:size, 0:size]
        for _ in range(int(rng.integers(1, 4))):
            cy, cx = rng.uniform(0, size, 2)
            radius = rng.uniform(size / 8, size / 4)
            bump = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * radius**2))
            page = page * (1 - strength["stains"] * bump)
    page = page + rng.normal(0, strength["sensor"], page.shape)
    if "salt-pepper" in kinds:
        hit = rng.random(page.shape) < strength["salt-pepper"]
        page = np.where(hit, (rng.random(page.shape) < 0.5).astype(float), page)
    return np.clip(page, 0, 1)


def _strengths(rng: np.random.Generator) -> dict[str, float]:
    return {
        "blur": round(float(rng.uniform(0.5, 0.8)), 3),
        "gradient": round(float(rng.uniform(0.3, 0.55)), 3),
        "stains": round(float(rng.uniform(0.3, 0.55)), 3),
        "salt-pepper": round(float(rng.uniform(0.02, 0.05)), 3),
        "sensor": round(float(rng.uniform(0.03, 0.06)), 3),
    }


def _to_uint8(values: np.ndarray) -> np.ndarray:
    return np.clip(np.round(values * 255), 0, 255).astype(np.uint8)


def pixel_frame(stem: str, size: int) -> pd.DataFrame:
    """One row per pixel of image ``stem``, row-major, with 1-based rows and columns."""
    rows, cols = np.mgrid[1 : size + 1, 1 : size + 1]
    rows, cols = rows.ravel(), cols.ravel()
    ids = [f"{stem}_{r}_{c}" for r, c in zip(rows, cols, strict=True)]
    return pd.DataFrame({"id": ids, "image": int(stem), "row": rows, "col": cols})


# ---------------------------------------------------------------- building


def build(bp: Blueprint, rng: np.random.Generator) -> DevelopedTask:
    size = int(bp.params["size"])
    n_train, n_test = int(bp.params["n_train_images"]), int(bp.params["n_test_images"])
    kinds = [k for k in bp.form if k in NOISES] or ["stains", "blur"]
    strength = _strengths(rng)
    texture = float(np.clip(0.01 + bp.noise.label_noise / 4, 0.01, 0.03))
    alphabet = _alphabet(rng)
    stems = [str(v) for v in make_ids("int", n_train + n_test, rng)]
    files: dict[str, bytes] = {}
    frames, values, oracle = [], [], []
    for i, stem in enumerate(stems):
        # Each page has its own paper and ink: a pixel's value alone does not say which it is.
        paper, ink_level = float(rng.uniform(0.72, 0.99)), float(rng.uniform(0.05, 0.42))
        render = np.where(_page(size, alphabet, rng), ink_level, paper)
        clean = _to_uint8(render + rng.normal(0, texture, render.shape))
        noisy = _to_uint8(_degrade(render, kinds, strength, rng))
        split = "train" if i < n_train else "test"
        files[f"{split}/{stem}.png"] = png_bytes(noisy)
        if split == "train":
            files[f"train_cleaned/{stem}.png"] = png_bytes(clean)
        frames.append(pixel_frame(stem, size))
        values.append(np.round(clean.ravel() / 255, 6))
        oracle.append(render.ravel())
    cut = n_train
    train = pd.concat(frames[:cut], ignore_index=True).assign(value=np.concatenate(values[:cut]))
    test = pd.concat(frames[cut:], ignore_index=True)
    answers = pd.DataFrame({"id": test["id"], "value": np.concatenate(values[cut:])})
    rule = HiddenRule(
        kind="denoise-" + "+".join(kinds),
        summary=f"pages degraded by {', '.join(kinds)} over sensor noise; "
        f"clean targets carry a paper texture of sd {texture:.3f}",
        params={
            "structure": {"kinds": kinds},
            "strength": strength,
            "texture": round(texture, 4),
        },
    )
    sample = pd.DataFrame({"id": test["id"], "value": 1})  # as Kaggle's: every pixel white
    return DevelopedTask(
        rule=rule,
        train=train,
        test=test,
        answers=answers,
        files=files,
        oracle=np.concatenate(oracle[cut:]).reshape(-1, 1),
        sample=sample,
    )


# ---------------------------------------------------------------- description


def description_specifics(bp: Blueprint, task: DevelopedTask, sample: pd.DataFrame) -> Specifics:
    """What the writer states exactly for a denoising task (it draws the wording); nothing
    about the degradation: which kinds a task has is its hidden rule."""
    size = int(bp.params["size"])
    n_train, n_test = int(bp.params["n_train_images"]), int(bp.params["n_test_images"])
    entity = bp.domain.entity
    return Specifics(
        row=f"one pixel of a {size}x{size} grayscale {entity}",
        task=(
            f"the clean grey level (0 black, 1 white) of every pixel of the {n_test} noisy "
            f"test images; each image is a {size}x{size} grayscale {entity} as the scanner "
            "degraded it",
            f"what each pixel of the {n_test} test images looked like before scanning: its "
            f"clean grey level, from 0 (black) to 1 (white), on {size}x{size} grayscale "
            f"{entity}s that came out of the scanner noisy",
        ),
        sizes=(
            f"The {n_train} training images come with their clean versions; the {n_test} test "
            "images do not.",
            f"You get {n_train} noisy training images with their clean versions, and "
            f"{n_test} noisy test images.",
        ),
        files=(
            ("train/", (f"{n_train} noisy training images, `<image>.png`",)),
            (
                "train_cleaned/",
                (
                    "the clean version of each training image, same names",
                    "clean training images, named as in `train/`",
                ),
            ),
            ("test/", (f"{n_test} noisy test images, `<image>.png`",)),
            (
                "train.csv",
                (
                    "one row per training pixel with its clean grey level",
                    f"the training pixels ({len(task.train)} rows) and their clean grey levels",
                ),
            ),
            (
                "test.csv",
                (
                    "one row per test pixel",
                    f"the {len(task.test)} test pixels to predict",
                ),
            ),
            (
                "sample_submission.csv",
                (
                    "a valid submission (every pixel white)",
                    "the submission format, with every pixel set to white (1)",
                ),
            ),
        ),
        columns=(
            ("id", "`<image>_<row>_<col>`, unique per pixel"),
            ("image", "the image the pixel belongs to (its PNG is `<image>.png`)"),
            ("row", "the pixel's row, 1-based from the top"),
            ("col", "the pixel's column, 1-based from the left"),
            ("value", "the clean grey level in [0, 1] (train only)"),
        ),
        id_scheme="`<image>_<row>_<col>` (the image, then the pixel's 1-based row and column)",
        value_kind="the clean grey level in [0, 1] (0 black, 1 white)",
        metric_text="root mean squared error between the predicted and the clean grey levels "
        "over all test pixels",
        notes=(
            "Pixels of one image share `image`; their neighbours in the PNG are part of "
            "their context.",
        ),
    )


MODALITY = Modality(
    name="image-to-image",
    build=build,
    features=features,
    structure_features=structure_features,
    plan=plan,
    ladder=ladder,
    describe=description_specifics,
)
