"""The denoising restoration features: uneven light evened out, impulses repaired."""

from __future__ import annotations

import numpy as np

from sandmle.benchmarks.synthetic.modalities.denoise_features import restoration_maps, unimpulse


def test_paper_light_evens_out_uneven_light():
    """A page lit from one side reads, after restoration, at its own paper level everywhere."""
    rng = np.random.default_rng(0)
    size, paper, ink = 20, 0.9, 0.2
    clean = np.full((size, size), paper)
    clean[3:13:2, 2:18] = ink  # a few dark strokes
    ramp = np.linspace(0, 1, size)[None, :].repeat(size, 0)
    page = np.clip(clean * (1 - 0.5 * ramp) + rng.normal(0, 0.02, clean.shape), 0, 1)
    maps = restoration_maps(page, ["gradient"])
    even = maps[4]  # the centre of the 3x3 neighbourhood: the evened page itself
    on_paper = clean == paper
    assert abs(page[on_paper].mean() - paper) > 0.15  # the raw page is far from its paper
    assert abs(even[on_paper].mean() - paper) < 0.05
    assert abs(np.median(even[~on_paper]) - ink) < 0.08


def test_denoising_impulse_repair_keeps_strokes():
    page = np.full((12, 12), 0.9)
    page[3:9, 4:6] = 0.2  # a 2-pixel stroke
    hit = page.copy()
    hit[1, 1], hit[10, 10], hit[5, 4] = 1.0, 0.0, 1.0
    repaired = unimpulse(hit)
    assert np.allclose(repaired, page)
