"""MLE Developer (procedural): blueprint -> hidden rule + data, one writer per modality.

The developer returns the data in memory (:class:`~.artifacts.DevelopedTask`); the pipeline
writes it. Its saved artifact is the :class:`~.artifacts.HiddenRule`, which says how the
labels were made.
"""

from __future__ import annotations

from sandmle.benchmarks.synthetic.artifacts import DevelopedTask
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.modalities.registry import modality_of
from sandmle.benchmarks.synthetic.streams import DEVELOPER, role_rng


def develop(bp: Blueprint) -> DevelopedTask:
    """The blueprint's modality writer, with the developer's own random stream."""
    return modality_of(bp.dna).build(bp, role_rng(bp.entropy, DEVELOPER))
