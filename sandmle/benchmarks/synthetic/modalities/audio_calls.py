"""The audio call library: the patterns a call can have, and their waveforms.

A call is a pattern (``upsweep``, ``downsweep``, ``tone``, ``trill``, ``warble``, ``double``,
``chord``, ``clicks``) played in a frequency band; the clip writer (:mod:`.audio`) places
calls in background noise, the structure-aware learner (:mod:`.audio_features`) matches a
template of each call against the clip's spectrogram.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import signal as sps

Call = dict[str, Any]
"""A call: ``pattern``, band edges ``low`` and ``high`` (Hz), ``length`` (seconds)."""
PATTERNS = ("upsweep", "downsweep", "tone", "trill", "warble", "double", "chord", "clicks")
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
        wave_ = bandpass(rng.standard_normal(n) * burst, low, high, rate) * 3
    return wave_ * sps.windows.tukey(n, 0.2)


def bandpass(x: np.ndarray, low: float, high: float, rate: int) -> np.ndarray:
    """``x`` with every frequency outside [low, high] removed (FFT mask: no filter design per
    clip, which would dominate the generation time)."""
    spectrum = np.fft.rfft(x)
    freqs = np.fft.rfftfreq(len(x), 1 / rate)
    spectrum[(freqs < low) | (freqs > high)] = 0
    return np.fft.irfft(spectrum, n=len(x))
