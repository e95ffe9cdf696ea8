"""Redrawing a rejected slot: a design that can clear the gate, then another seed if none can.

The gate's bands need the structure-aware learner's lead over the generic one to be several
test-noise sds wide (:mod:`.mlops`). A slot rejected for its bands (or its ladder) is drawn
again with fresh entropy *and* a design that widens them: more test rows (the sd shrinks as
1/sqrt(rows)), less noise (label noise for probabilities and values, hard labels keep
theirs; blank, corrupted and drifted cells; a table's value spread), then a stronger rule.
The next design is a function of the rejections alone, so the same secret and seed still
give the same bytes.

Only when a seed family's every attempt is rejected does the slot go to another seed of the
same task type (:func:`substitutes`), recorded in ``pack.yaml``.
"""

from __future__ import annotations

import math

from sandmle.benchmarks.synthetic.blueprint import Blueprint, Design, StructuralDNA

TEST_STEP, MAX_TEST_FACTOR = 2.0, 4.0
NOISE_STEP, MIN_NOISE_FACTOR = 0.5, 0.2
SIGNAL_STEP, MAX_SIGNAL_FACTOR = 1.25, 2.0
WIDENED_BY = ("noise_bands", "ladder_medals")
"""Rejections a wider design answers; others (a crash, a leak) are redrawn as they are."""
MAX_SUBSTITUTES = 3


def next_design(design: Design, rules: set[str]) -> Design:
    """The design of the next attempt after one the gate rejected on ``rules``."""
    if not rules & set(WIDENED_BY):
        return design
    tests = min(design.test_factor * TEST_STEP, MAX_TEST_FACTOR)
    signal = design.signal_factor
    if tests == design.test_factor:  # test rows at their cap: strengthen the rule instead
        signal = min(signal * SIGNAL_STEP, MAX_SIGNAL_FACTOR)
    return Design(
        test_factor=round(tests, 3),
        noise_factor=round(max(design.noise_factor * NOISE_STEP, MIN_NOISE_FACTOR), 3),
        signal_factor=round(signal, 3),
    )


def apply_design(bp: Blueprint, design: Design) -> Blueprint:
    """``bp`` with the design's test rows, label noise and rule strength."""
    if design == Design():
        return bp
    params = dict(bp.params)
    if "signal" in params:
        params["signal"] = round(float(params["signal"]) * design.signal_factor, 3)
    if bp.dna.modality == "tabular" and bp.dna.task_type == "regression":
        # a table's values carry noise beyond the label share: the rule's own spread
        params["noise_scale"] = design.noise_factor
    n_train, n_test = _sizes(bp, params, design.test_factor)
    # Hard labels keep their noise: without it the oracle's labels are the answers file
    # (the gate's oracle_not_answers rule), and their sharpness is the rule's signal.
    factor = 1.0 if bp.dna.target_kind == "label" else design.noise_factor
    # blanks, corrupted cells and drift hurt the rule's basis more than a tree ensemble
    rates = {
        k: round(getattr(bp.noise, k) * design.noise_factor, 3)
        for k in ("missing_rate", "outlier_rate", "shift")
    }
    noise = bp.noise.model_copy(
        update={"label_noise": round(bp.noise.label_noise * factor, 3), **rates}
    )
    return bp.model_copy(
        update={
            "n_train": n_train,
            "n_test": n_test,
            "params": params,
            "noise": noise,
            "design": design,
        }
    )


def _sizes(bp: Blueprint, params: dict[str, float | int | str], factor: float) -> tuple[int, int]:
    """Train and test sizes with ``factor`` times the test units (rows, series or pages)."""
    if bp.dna.modality == "time-series":  # a series is the unit: more series, same shape
        n_series = math.ceil(int(params["n_series"]) * factor)
        params["n_series"] = n_series
        horizon, length = int(params["horizon"]), int(params["length"])
        return n_series * (length - horizon), n_series * horizon
    if bp.dna.task_type == "image-to-image":  # pages are the unit of test noise
        pages = math.ceil(int(params["n_test_images"]) * factor)
        params["n_test_images"] = pages
        return bp.n_train, pages * int(params["size"]) ** 2
    return bp.n_train, math.ceil(bp.n_test * factor)


def substitutes(dna: StructuralDNA, seeds: list[StructuralDNA]) -> list[StructuralDNA]:
    """Other seeds of ``dna``'s task type, same modality first, in seed-table order after it."""
    same_type = [s for s in seeds if s.task_type == dna.task_type and s != dna]
    start = next((i for i, s in enumerate(seeds) if s == dna), 0)
    order = sorted(
        same_type,
        key=lambda s: (s.modality != dna.modality, (seeds.index(s) - start) % len(seeds)),
    )
    return order[:MAX_SUBSTITUTES]
