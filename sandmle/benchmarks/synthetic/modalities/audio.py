"""Audio tasks: one short mono 16-bit PCM WAV clip per row (``audio/<id>.wav``), calls in noise.

As in the audio seeds (right whale up-calls: binary ROC AUC; bird species in field
recordings: multi-label ROC AUC), the hidden rule is acoustic. A clip is background noise
(white hiss, low rumble or a babble of faint tones) in which calls are placed at random
times. A call is a pattern from a library (``upsweep``, ``downsweep``, ``tone``, ``trill``,
``warble``, ``double``, ``chord``, ``clicks``) in a frequency band; the strategist's form
``calls=...`` is a randomised permutation of the patterns, so which pattern carries a class
changes from task to task:

* binary: positive iff the first pattern's call is present; negatives carry a look-alike
  (the second or third pattern) in the same band, so "energy in the band" is not enough;
* multi-label: label j is present iff the j-th pattern's call is present;
* multi-class: class c is the c-th pattern's call.

All class calls share one band, so only their time-frequency shape tells them apart.

Spare patterns are played as distractors, calls vary in pitch, length, onset and loudness
(some are faint), and a ``label_noise`` share of labels is redrawn. ``rule.params["structure"]``
records each class's pattern and band (not the loudness): the structure-aware learner
matches a time-frequency template of each call against the clip's spectrogram; the generic
learner sees a pooled log spectrogram.
"""

from __future__ import annotations

import numpy as np

from sandmle.benchmarks.media import pcm16, wav_bytes
from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.artifacts import DevelopedTask, HiddenRule
from sandmle.benchmarks.synthetic.blueprint import Blueprint, TaskRequest
from sandmle.benchmarks.synthetic.domains import DomainPool
from sandmle.benchmarks.synthetic.modalities.audio_calls import (
    FAMILY,
    PATTERNS,
    Call,
    bandpass,
    call_wave,
)
from sandmle.benchmarks.synthetic.modalities.audio_features import (
    AUDIO_DIR,
    features,
    structure_features,
)
from sandmle.benchmarks.synthetic.modalities.contract import Modality
from sandmle.benchmarks.synthetic.planning import Params, draw_domain, draw_noise, new_blueprint
from sandmle.benchmarks.synthetic.rows import file_rows_task, make_ids
from sandmle.benchmarks.synthetic.streams import STRATEGIST, role_rng

BACKGROUNDS = ("hiss", "rumble", "babble")
SAMPLE_RATES = (2000, 3000)
SECONDS = (1.0, 1.25)
TRAIN_ROWS = (300, 450)
TEST_ROWS = (550, 850)

POOLS = (
    DomainPool(
        "reef-hydrophones",
        "Reef Hydrophone Calls",
        "hydrophone clip",
        (),
        ("grouper", "snapper", "dolphin", "shrimp", "damselfish"),
        "",
    ),
    DomainPool(
        "canopy-recorders",
        "Canopy Recorder Birdsong",
        "recorder clip",
        (),
        ("warbler", "thrush", "wren", "finch", "oriole"),
        "",
    ),
    DomainPool(
        "bat-detectors",
        "Bat Detector Passes",
        "detector clip",
        (),
        ("pipistrelle", "noctule", "myotis", "serotine", "barbastelle"),
        "",
    ),
    DomainPool(
        "pump-acoustics",
        "Pump Acoustic Monitoring",
        "pump recording",
        (),
        ("cavitation", "bearing_wear", "misalignment", "loose_mount", "impeller_rub"),
        "",
    ),
    DomainPool(
        "pond-chorus",
        "Pond Frog Chorus",
        "pond clip",
        (),
        ("tree_frog", "bullfrog", "toad", "peeper", "leopard_frog"),
        "",
    ),
)


# ---------------------------------------------------------------- planning


def plan(request: TaskRequest, backend: str) -> Blueprint:
    """Blueprint: a pool, clip length and rate, the call<->class mapping and the background."""
    rng = role_rng(request.entropy, STRATEGIST)
    dna = request.dna
    pool = POOLS[int(rng.integers(len(POOLS)))]
    noise = draw_noise(dna, rng)
    params: Params = {
        "sample_rate": int(rng.choice(SAMPLE_RATES)),
        "seconds": float(rng.choice(SECONDS)),
    }
    n_train = int(rng.integers(TRAIN_ROWS[0], TRAIN_ROWS[1] + 1))
    many = dna.task_type == "multilabel" or dna.n_outputs > 3
    n_test = int(rng.integers(*TEST_ROWS)) + (250 if many else 0)
    calls = ",".join(str(p) for p in rng.permutation(PATTERNS))
    form = [f"calls={calls}", f"background={rng.choice(BACKGROUNDS)}"]
    domain = draw_domain(dna, pool, noise, rng)
    return new_blueprint(request, backend, domain, noise, (n_train, n_test), params, form)


def _form(bp: Blueprint) -> tuple[list[str], str]:
    calls, background = list(PATTERNS), "hiss"
    for item in bp.form:
        key, _, value = item.partition("=")
        if key == "calls":
            calls = value.split(",")
        elif key == "background":
            background = value
    return calls, background


# ---------------------------------------------------------------- data


def build(bp: Blueprint, rng: np.random.Generator) -> DevelopedTask:
    n = bp.n_train + bp.n_test
    rate, seconds = int(bp.params["sample_rate"]), float(bp.params["seconds"])
    mapping, background = _form(bp)
    calls = _class_calls(bp, mapping, rate, rng)
    truth, plan_rows, rule = _plan(bp, mapping, calls, rate, rng)
    rule.params["structure"].update(sample_rate=rate, seconds=seconds)
    length = int(rate * seconds)
    clips = [_clip(row, length, rate, background, rng) for row in plan_rows]
    y, oracle = _observe(bp, truth, rng)
    ids = make_ids(bp.dna.id_scheme, n, rng, prefix="clip")
    files = {f"{AUDIO_DIR}/{ids[i]}.wav": wav_bytes(pcm16(clips[i]), rate) for i in range(n)}
    return file_rows_task(bp, rule, ids, y, oracle, files)


def _class_calls(
    bp: Blueprint, mapping: list[str], rate: int, rng: np.random.Generator
) -> list[Call]:
    """The class-bearing patterns (binary: the target, then its two look-alikes), all in one
    shared band with their own lengths: telling them apart takes their time-frequency shape."""
    k = 3 if bp.dna.task_type == "binary" else bp.dna.n_outputs
    low, high = _band(rate / 2, rng)
    return [
        {
            "pattern": pattern,
            "low": round(low, 1),
            "high": round(high, 1),
            "length": round(float(rng.uniform(0.25, 0.4)), 3),
        }
        for pattern in _class_patterns(bp, mapping)[:k]
    ]


def _class_patterns(bp: Blueprint, mapping: list[str]) -> list[str]:
    """Binary: the target first, then patterns of its family (same spectral footprint) before
    the others, so the look-alikes really look alike; otherwise the mapping as drawn."""
    if bp.dna.task_type != "binary":
        return list(mapping)
    target, rest = mapping[0], mapping[1:]
    same = [p for p in rest if FAMILY[p] == FAMILY[target]]
    return [target, *same, *(p for p in rest if p not in same)]


def _band(nyquist: float, rng: np.random.Generator) -> tuple[float, float]:
    width = float(rng.uniform(0.15, 0.3)) * nyquist
    low = float(rng.uniform(0.1 * nyquist, 0.85 * nyquist - width))
    return low, low + width


def _plan(
    bp: Blueprint,
    mapping: list[str],
    calls: list[Call],
    rate: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, list[list[Call]], HiddenRule]:
    """True targets and, per clip, the calls to play."""
    n, k, task = bp.n_train + bp.n_test, bp.dna.n_outputs, bp.dna.task_type
    used = {c["pattern"] for c in calls}
    spare = [p for p in mapping if p not in used]

    def distract() -> list[Call]:
        """A spare pattern, half the time in the classes' band."""
        if not spare or rng.random() >= 0.4:
            return []
        low, high = (
            (calls[0]["low"], calls[0]["high"]) if rng.random() < 0.5 else _band(rate / 2, rng)
        )
        return [{"pattern": str(rng.choice(spare)), "low": low, "high": high, "length": 0.3}]

    if task == "multilabel":
        truth = (rng.random((n, k)) < bp.dna.balance).astype(np.int64)
        rows = [[calls[j] for j in range(k) if row[j]] + distract() for row in truth]
        summary = "label j is present iff the j-th call pattern is heard"
        return truth, rows, _rule("call-labels", summary, calls)
    if task == "binary":
        prior = np.array([1 - bp.dna.balance, bp.dna.balance])
        truth = tg.sample_classes(np.tile(prior, (n, 1)), 0.0, rng)
        rows = [([calls[0]] if c else [calls[int(rng.integers(1, 3))]]) + distract() for c in truth]
        summary = f"positive iff a {calls[0]['pattern']} call is heard (look-alikes share its band)"
        return truth, rows, _rule("call-presence", summary, calls)
    if task == "multiclass":
        truth = tg.sample_classes(np.full((n, k), 1.0 / k), 0.0, rng)
        rows = [[calls[c]] + distract() for c in truth]
        return truth, rows, _rule("call-class", "class c is the c-th call pattern", calls)
    raise ValueError(f"audio tasks do not support task type {task!r}")


def _rule(kind: str, summary: str, calls: list[Call]) -> HiddenRule:
    """``calls``: the class-bearing calls (binary: the target, then its look-alikes)."""
    structure: dict[str, object] = {"kind": kind, "calls": [dict(c) for c in calls]}
    return HiddenRule(kind=f"audio-{kind}", summary=summary, params={"structure": structure})


def _clip(
    calls: list[Call],
    length: int,
    rate: int,
    background: str,
    rng: np.random.Generator,
) -> np.ndarray:
    """Background noise plus each call at a random onset, pitch and loudness; peak-normalised."""
    out = _background(background, length, rate, rng)
    for call in calls:
        low, high = (float(call[b]) * float(rng.uniform(0.94, 1.06)) for b in ("low", "high"))
        duration = float(call["length"]) * float(rng.uniform(0.85, 1.15))
        n = min(length - 1, int(duration * rate))
        start = int(rng.integers(0, length - n))
        loudness = float(rng.choice([0.5, 1.0, 1.6], p=[0.3, 0.4, 0.3]))
        out[start : start + n] += loudness * call_wave(
            str(call["pattern"]), low, high, n, rate, rng
        )
    return out / (np.abs(out).max() or 1.0) * 0.8


def _background(kind: str, length: int, rate: int, rng: np.random.Generator) -> np.ndarray:
    level = float(rng.uniform(0.25, 0.6))
    noise = rng.standard_normal(length)
    if kind == "rumble":  # low-frequency weighted noise, like wind or engines
        noise = noise + 2.0 * bandpass(rng.standard_normal(length), 20, rate / 10, rate)
    elif kind == "babble":  # faint tones at random pitches
        for _ in range(int(rng.integers(2, 5))):
            f = float(rng.uniform(0.05, 0.45)) * rate
            noise += 0.5 * np.sin(2 * np.pi * f * np.arange(length) / rate + rng.uniform(0, 6))
    return level * noise


def _observe(
    bp: Blueprint, truth: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    return tg.observe_labels(bp, truth, rng)


MODALITY = Modality(
    name="audio",
    build=build,
    features=features,
    structure_features=structure_features,
    plan=plan,
)
