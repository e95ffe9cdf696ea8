"""A call's waveform has its pattern's time-frequency shape, as the spectrogram sees it."""

from __future__ import annotations

import numpy as np

from sandmle.benchmarks.synthetic.modalities.audio_calls import call_wave
from sandmle.benchmarks.synthetic.modalities.audio_features import spectrogram


def test_a_call_is_where_the_rule_puts_it():
    """The spectrogram of a synthesised upsweep rises through its band, a downsweep falls."""
    rate, n = 2000, 800
    rng = np.random.default_rng(0)
    up = call_wave("upsweep", 200.0, 600.0, n, rate, rng)
    down = call_wave("downsweep", 200.0, 600.0, n, rate, rng)
    peak = lambda clip: spectrogram(clip[None, :])[0].argmax(axis=0)  # noqa: E731
    assert np.corrcoef(np.arange(len(peak(up))), peak(up))[0, 1] > 0.9
    assert np.corrcoef(np.arange(len(peak(down))), peak(down))[0, 1] < -0.9


def test_a_tone_sits_at_its_band_centre():
    rate, n = 2000, 800
    tone = call_wave("tone", 300.0, 500.0, n, rate, np.random.default_rng(0))
    spectrum = np.abs(np.fft.rfft(tone))
    assert abs(np.fft.rfftfreq(n, 1 / rate)[spectrum.argmax()] - 400.0) < 5
