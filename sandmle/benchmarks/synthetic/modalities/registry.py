"""Which :class:`~.contract.Modality` serves a seed: its task type's own, else its modality's.

A task type with its own structure (``seq2seq``, ``image-to-image``, ``ranking``) is chosen
before the modality (text, image, tabular). Adding a modality: write its module with a
``MODALITY`` that meets the contract, and list it here.
"""

from __future__ import annotations

from sandmle.benchmarks.synthetic.blueprint import StructuralDNA
from sandmle.benchmarks.synthetic.modalities import (
    audio,
    denoise,
    image,
    ranking,
    seq2seq,
    tabular,
    text,
    timeseries,
)
from sandmle.benchmarks.synthetic.modalities.contract import Modality

BY_TASK_TYPE: dict[str, Modality] = {
    "seq2seq": seq2seq.MODALITY,
    "image-to-image": denoise.MODALITY,
    "ranking": ranking.MODALITY,
}
BY_MODALITY: dict[str, Modality] = {
    "tabular": tabular.MODALITY,
    "text": text.MODALITY,
    "image": image.MODALITY,
    "time-series": timeseries.MODALITY,
    "audio": audio.MODALITY,
}


def modality_of(dna: StructuralDNA) -> Modality:
    """The modality that builds, features and (maybe) plans, ladders and describes ``dna``."""
    return BY_TASK_TYPE.get(dna.task_type) or BY_MODALITY[dna.modality]
