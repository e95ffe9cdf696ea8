"""Every seed finds the modality that serves it, and each modality meets the contract."""

from __future__ import annotations

import pytest

from sandmle.benchmarks.synthetic.modalities.contract import Modality
from sandmle.benchmarks.synthetic.modalities.registry import (
    BY_MODALITY,
    BY_TASK_TYPE,
    modality_of,
)
from sandmle.benchmarks.synthetic.seeds import SEEDS


@pytest.mark.parametrize("seed", sorted(SEEDS))
def test_every_seed_has_a_modality_named_for_its_task_type_or_modality(seed: str):
    dna = SEEDS[seed]
    modality = modality_of(dna)
    assert isinstance(modality, Modality)
    assert modality.name == (dna.task_type if dna.task_type in BY_TASK_TYPE else dna.modality)


def test_a_task_type_with_its_own_structure_comes_before_its_modality():
    assert modality_of(SEEDS["denoising-dirty-documents"]).name == "image-to-image"
    assert modality_of(SEEDS["aerial-cactus-identification"]).name == "image"
    english = SEEDS["text-normalization-challenge-english-language"]
    assert modality_of(english) is BY_TASK_TYPE["seq2seq"] is not BY_MODALITY["text"]


def test_the_optional_parts_are_where_the_task_needs_them():
    planned = {name for name, m in {**BY_MODALITY, **BY_TASK_TYPE}.items() if m.plan}
    laddered = {name for name, m in {**BY_MODALITY, **BY_TASK_TYPE}.items() if m.ladder}
    described = {name for name, m in {**BY_MODALITY, **BY_TASK_TYPE}.items() if m.describe}
    assert planned == {"audio", "seq2seq", "image-to-image", "ranking"}
    assert laddered == described == {"seq2seq", "image-to-image"}
