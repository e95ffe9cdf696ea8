"""Data Strategist (procedural): seed DNA + entropy -> blueprint.

Every choice is drawn from the strategist's stream (seeded by the request's entropy), so the
same request always gives the same blueprint. A modality with its own ``plan`` (audio,
seq2seq, image-to-image, ranking) plans its blueprints itself; the others get the generic
plan below, from the draws of :mod:`.planning`.
"""

from __future__ import annotations

from sandmle.benchmarks.synthetic.blueprint import Blueprint, TaskRequest
from sandmle.benchmarks.synthetic.domains import POOLS
from sandmle.benchmarks.synthetic.modalities.registry import modality_of
from sandmle.benchmarks.synthetic.planning import (
    draw_domain,
    draw_form,
    draw_noise,
    draw_size,
    new_blueprint,
)
from sandmle.benchmarks.synthetic.redesign import apply_design
from sandmle.benchmarks.synthetic.streams import STRATEGIST, role_rng


def plan(request: TaskRequest, backend: str = "procedural") -> Blueprint:
    """Draw a mutated domain, adversarial noise and a size for the seed's structure."""
    own = modality_of(request.dna).plan
    # e.g. seq2seq and image-to-image plan their own sizes and names
    bp = own(request, backend) if own is not None else generic_plan(request, backend)
    return apply_design(bp, request.design)  # a redrawn slot's wider design, after every draw


def generic_plan(request: TaskRequest, backend: str) -> Blueprint:
    """A pool of the modality, then noise, size, names and form, in that order of draws."""
    rng = role_rng(request.entropy, STRATEGIST)
    dna = request.dna
    pool = POOLS[dna.modality][int(rng.integers(len(POOLS[dna.modality])))]
    noise = draw_noise(dna, rng)
    n_train, n_test, params = draw_size(dna, rng)
    domain = draw_domain(dna, pool, noise, rng)
    return new_blueprint(
        request, backend, domain, noise, (n_train, n_test), params, draw_form(dna, rng)
    )
