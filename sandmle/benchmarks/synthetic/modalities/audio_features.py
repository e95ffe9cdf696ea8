"""What the audio learners see: spectrograms of the clips and call-template matches.

The generic learner sees a pooled log spectrogram; the structure-aware learner matches a
time-frequency template of each class call (``rule.params["structure"]["calls"]``) against
the clip's spectrogram; the pack's transfer gate matches every pattern at fixed relative
bands (:func:`call_bank_features`), one feature space for all audio tasks.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from sandmle.benchmarks.media import read_wav
from sandmle.benchmarks.synthetic.artifacts import HiddenRule, PublicData
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.modalities.audio_calls import PATTERNS, Call, call_wave
from sandmle.benchmarks.synthetic.modalities.contract import Matrices

AUDIO_DIR = "audio"
PITCH_SHIFTS = (0.92, 1.0, 1.08)
FRAME, HOP = 64, 32  # spectrogram frames: 32 ms at 2 kHz, half overlapping


def spectrogram(clips: np.ndarray) -> np.ndarray:
    """Log power per (clip, frequency bin, frame): Hann frames of FRAME samples, hop HOP;
    each frequency row minus the clip's median level (the noise floor)."""
    starts = np.arange(0, clips.shape[1] - FRAME + 1, HOP)
    frames = clips[:, starts[:, None] + np.arange(FRAME)] * np.hanning(FRAME)
    power = np.abs(np.fft.rfft(frames, axis=2)) ** 2
    logp = np.log(power + 1e-8).transpose(0, 2, 1)
    return logp - np.median(logp, axis=(1, 2), keepdims=True)


def _stack(files: Mapping[str, bytes], ids: pd.Series) -> tuple[np.ndarray, int]:
    clips, rate = zip(*(read_wav(files[f"{AUDIO_DIR}/{value}.wav"]) for value in ids), strict=True)
    return np.stack(clips), int(rate[0])


def features(bp: Blueprint, data: PublicData) -> Matrices:
    """A first notebook's view: the log spectrogram pooled to a coarse grid, plus each
    frequency bin's mean and peak over time."""
    column = bp.domain.id_column
    return (
        pooled_spectrogram(_stack(data.files, data.train[column])[0]),
        pooled_spectrogram(_stack(data.files, data.test[column])[0]),
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


def structure_features(bp: Blueprint, rule: HiddenRule, data: PublicData) -> Matrices:
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


def call_bank_features(files: Mapping[str, bytes], ids: pd.Series) -> np.ndarray:
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


def call_matches(spec: np.ndarray, calls: list[Call], rate: int) -> np.ndarray:
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


def _template(call: Call, rate: int, bins: int, shift: float = 1.0) -> np.ndarray:
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
