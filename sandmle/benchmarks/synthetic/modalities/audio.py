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

import io
import wave
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import signal as sps

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.developer import (
    DevelopedTask,
    HiddenRule,
    file_rows_task,
    make_ids,
)
from sandmle.benchmarks.synthetic.domains import DomainPool

if TYPE_CHECKING:  # the strategist imports the modalities lazily: no cycle at run time
    from sandmle.benchmarks.synthetic.strategist import TaskRequest

PATTERNS = ("upsweep", "downsweep", "tone", "trill", "warble", "double", "chord", "clicks")
BACKGROUNDS = ("hiss", "rumble", "babble")
# Spectral footprint of each pattern: the whole band, its centre, or its edges.
FAMILY = {
    "upsweep": "band",
    "downsweep": "band",
    "warble": "band",
    "clicks": "band",
    "tone": "centre",
    "trill": "centre",
    "double": "centre",
    "chord": "edges",
}
AUDIO_DIR = "audio"
SAMPLE_RATES = (2000, 3000)
SECONDS = (1.0, 1.25)
TRAIN_ROWS = (300, 450)
TEST_ROWS = (550, 850)
PITCH_SHIFTS = (0.92, 1.0, 1.08)
FRAME, HOP = 64, 32  # spectrogram frames: 32 ms at 2 kHz, half overlapping
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
    from sandmle.benchmarks.synthetic.strategist import _domain, _noise, new_blueprint, role_rng

    rng = role_rng(request.entropy, 0)
    dna = request.dna
    pool = POOLS[int(rng.integers(len(POOLS)))]
    noise = _noise(dna, rng)
    params: dict[str, float | int | str] = {
        "sample_rate": int(rng.choice(SAMPLE_RATES)),
        "seconds": float(rng.choice(SECONDS)),
    }
    n_train = int(rng.integers(TRAIN_ROWS[0], TRAIN_ROWS[1] + 1))
    many = dna.task_type == "multilabel" or dna.n_outputs > 3
    n_test = int(rng.integers(*TEST_ROWS)) + (250 if many else 0)
    calls = ",".join(str(p) for p in rng.permutation(PATTERNS))
    form = [f"calls={calls}", f"background={rng.choice(BACKGROUNDS)}"]
    domain = _domain(dna, pool, noise, rng)
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
    files = {f"{AUDIO_DIR}/{ids[i]}.wav": wav_bytes(clips[i], rate) for i in range(n)}
    return file_rows_task(bp, rule, ids, y, oracle, files)


def _class_calls(
    bp: Blueprint, mapping: list[str], rate: int, rng: np.random.Generator
) -> list[dict[str, Any]]:
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
    calls: list[dict[str, Any]],
    rate: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, list[list[dict[str, Any]]], HiddenRule]:
    """True targets and, per clip, the calls to play."""
    n, k, task = bp.n_train + bp.n_test, bp.dna.n_outputs, bp.dna.task_type
    used = {c["pattern"] for c in calls}
    spare = [p for p in mapping if p not in used]

    def distract() -> list[dict[str, Any]]:
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


def _rule(kind: str, summary: str, calls: list[dict[str, Any]]) -> HiddenRule:
    """``calls``: the class-bearing calls (binary: the target, then its look-alikes)."""
    structure: dict[str, Any] = {"kind": kind, "calls": [dict(c) for c in calls]}
    return HiddenRule(kind=f"audio-{kind}", summary=summary, params={"structure": structure})


def _clip(
    calls: list[dict[str, Any]],
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


def call_wave(
    pattern: str, low: float, high: float, n: int, rate: int, rng: np.random.Generator
) -> np.ndarray:
    """One call of ``n`` samples, unit amplitude, with soft edges."""
    t = np.arange(n) / rate
    span = n / rate
    mid = (low + high) / 2
    if pattern in ("upsweep", "downsweep"):
        start, end = (low, high) if pattern == "upsweep" else (high, low)
        phase = 2 * np.pi * (start * t + (end - start) * t**2 / (2 * span))
        wave_ = np.sin(phase)
    elif pattern == "tone":
        wave_ = np.sin(2 * np.pi * mid * t)
    elif pattern == "trill":  # a tone switched on and off 12 times a second
        wave_ = np.sin(2 * np.pi * mid * t) * (np.sin(2 * np.pi * 12 * t) > 0)
    elif pattern == "warble":  # vibrato across the band
        depth = (high - low) / 2
        phase = 2 * np.pi * mid * t - depth / 8 * np.cos(2 * np.pi * 8 * t)
        wave_ = np.sin(phase)
    elif pattern == "double":  # two short notes with a gap
        wave_ = np.sin(2 * np.pi * mid * t) * ((t < span * 0.35) | (t > span * 0.65))
    elif pattern == "chord":  # the band's two edges at once
        wave_ = 0.5 * (np.sin(2 * np.pi * low * t) + np.sin(2 * np.pi * high * t))
    else:  # clicks: short noise bursts filtered to the band, 25 a second
        burst = (np.arange(n) % max(1, rate // 25)) < max(2, rate // 400)
        wave_ = _bandpass(rng.standard_normal(n) * burst, low, high, rate) * 3
    return wave_ * sps.windows.tukey(n, 0.2)


def _background(kind: str, length: int, rate: int, rng: np.random.Generator) -> np.ndarray:
    level = float(rng.uniform(0.25, 0.6))
    noise = rng.standard_normal(length)
    if kind == "rumble":  # low-frequency weighted noise, like wind or engines
        noise = noise + 2.0 * _bandpass(rng.standard_normal(length), 20, rate / 10, rate)
    elif kind == "babble":  # faint tones at random pitches
        for _ in range(int(rng.integers(2, 5))):
            f = float(rng.uniform(0.05, 0.45)) * rate
            noise += 0.5 * np.sin(2 * np.pi * f * np.arange(length) / rate + rng.uniform(0, 6))
    return level * noise


def _bandpass(x: np.ndarray, low: float, high: float, rate: int) -> np.ndarray:
    """``x`` with every frequency outside [low, high] removed (FFT mask: no filter design per
    clip, which would dominate the generation time)."""
    spectrum = np.fft.rfft(x)
    freqs = np.fft.rfftfreq(len(x), 1 / rate)
    spectrum[(freqs < low) | (freqs > high)] = 0
    return np.fft.irfft(spectrum, n=len(x))


def _observe(
    bp: Blueprint, truth: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    return tg.observe_labels(bp, truth, rng)


# ---------------------------------------------------------------- files


def wav_bytes(samples: np.ndarray, rate: int) -> bytes:
    """16-bit PCM mono WAV (the standard library's writer: no timestamps, stable bytes)."""
    pcm = np.clip(np.round(samples * 32767), -32768, 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(rate)
        handle.writeframes(pcm.tobytes())
    return buffer.getvalue()


def read_wav(data: bytes) -> tuple[np.ndarray, int]:
    """Samples in [-1, 1] and the sample rate of a 16-bit PCM WAV."""
    with wave.open(io.BytesIO(data), "rb") as handle:
        rate, frames = handle.getframerate(), handle.readframes(handle.getnframes())
    return np.frombuffer(frames, dtype="<i2").astype(np.float64) / 32768, rate


# ---------------------------------------------------------------- learners' features


def spectrogram(clips: np.ndarray) -> np.ndarray:
    """Log power per (clip, frequency bin, frame): Hann frames of FRAME samples, hop HOP;
    each frequency row minus the clip's median level (the noise floor)."""
    starts = np.arange(0, clips.shape[1] - FRAME + 1, HOP)
    frames = clips[:, starts[:, None] + np.arange(FRAME)] * np.hanning(FRAME)
    power = np.abs(np.fft.rfft(frames, axis=2)) ** 2
    logp = np.log(power + 1e-8).transpose(0, 2, 1)
    return logp - np.median(logp, axis=(1, 2), keepdims=True)


def _stack(files: Any, ids: pd.Series) -> tuple[np.ndarray, int]:
    clips, rate = zip(*(read_wav(files[f"{AUDIO_DIR}/{value}.wav"]) for value in ids), strict=True)
    return np.stack(clips), int(rate[0])


def features(bp: Blueprint, task: Any) -> tuple[np.ndarray, np.ndarray]:
    """A first notebook's view: the log spectrogram pooled to a coarse grid, plus each
    frequency bin's mean and peak over time."""
    column = bp.domain.id_column
    return (
        pooled_spectrogram(_stack(task.files, task.train[column])[0]),
        pooled_spectrogram(_stack(task.files, task.test[column])[0]),
    )


def pooled_spectrogram(
    clips: np.ndarray, freq_groups: int = 11, time_groups: int = 5
) -> np.ndarray:
    spec = spectrogram(clips)
    n, bins, frames = spec.shape
    f_edges = np.linspace(0, bins, freq_groups + 1).astype(int)
    t_edges = np.linspace(0, frames, time_groups + 1).astype(int)
    grid = [
        spec[:, f_edges[i] : f_edges[i + 1], t_edges[j] : t_edges[j + 1]].mean(axis=(1, 2))
        for i in range(freq_groups)
        for j in range(time_groups)
    ]
    return np.column_stack([*grid, spec.mean(axis=2), spec.max(axis=2)])


def structure_features(bp: Blueprint, rule: HiddenRule, data: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per class call: the best match of its time-frequency template, how much of the clip
    matches, and the peak energy in its band."""
    calls = rule.params["structure"]["calls"]
    column = bp.domain.id_column

    def encode(ids: pd.Series) -> np.ndarray:
        clips, rate = _stack(data.files, ids)
        return call_matches(spectrogram(clips), calls, rate)

    return encode(data.train[column]), encode(data.test[column])


BANK_BANDS = (0.1, 0.25, 0.4, 0.55, 0.7)
"""Low edges (share of the Nyquist frequency) of the call bank's bands, each 0.2 wide."""


def call_bank_features(files: Any, ids: pd.Series) -> np.ndarray:
    """Matches of every call pattern at a fixed set of relative bands: one feature space for
    all audio tasks whatever their rate or mapping (the transfer gate's input)."""
    clips, rate = _stack(files, ids)
    nyquist = rate / 2
    bank = [
        {"pattern": p, "low": b * nyquist, "high": (b + 0.2) * nyquist, "length": 0.33}
        for p in PATTERNS
        for b in BANK_BANDS
    ]
    return call_matches(spectrogram(clips), bank, rate)


def call_matches(spec: np.ndarray, calls: list[dict[str, Any]], rate: int) -> np.ndarray:
    """Per call and pitch (x0.92, x1, x1.08): best template match and the mean of the top
    three; plus the peak energy in the call's band."""
    columns = []
    frames = spec.shape[2]
    size = 2 * frames  # room for any template no longer than the clip: no wrap-around
    spec_f = np.fft.rfft(spec, n=size, axis=2)  # once per stack, reused by every template
    freqs = np.arange(spec.shape[1]) * rate / FRAME
    for call in calls:
        for shift in PITCH_SHIFTS:
            template = _template(call, rate, spec.shape[1], shift)[:, :frames]
            width = template.shape[1]
            kernel = np.fft.rfft(template[:, ::-1], n=size, axis=1)
            full = np.fft.irfft(np.einsum("nfk,fk->nk", spec_f, kernel), n=size, axis=1)
            response = full[:, width - 1 : frames]  # template wholly inside the clip
            columns += [response.max(axis=1), np.sort(response, axis=1)[:, -3:].mean(axis=1)]
        band = (freqs >= float(call["low"]) * 0.9) & (freqs <= float(call["high"]) * 1.1)
        columns.append(spec[:, band, :].mean(axis=1).max(axis=1))
    return np.column_stack(columns)


def _template(call: dict[str, Any], rate: int, bins: int, shift: float = 1.0) -> np.ndarray:
    """The call's spectrogram at its central length and a pitch, zero-mean and unit-norm."""
    n = int(float(call["length"]) * rate)
    low, high = float(call["low"]) * shift, float(call["high"]) * shift
    clip = call_wave(str(call["pattern"]), low, high, n, rate, np.random.default_rng(0))
    padded = np.concatenate([np.zeros(FRAME), clip, np.zeros(FRAME)])
    starts = np.arange(0, len(padded) - FRAME + 1, HOP)
    frames = padded[starts[:, None] + np.arange(FRAME)] * np.hanning(FRAME)
    power = (np.abs(np.fft.rfft(frames, axis=1)) ** 2).T
    t = np.log1p(power / (power.max() or 1.0) * 100)
    assert t.shape[0] == bins
    t = t - t.mean()
    return t / (np.linalg.norm(t) or 1.0)
