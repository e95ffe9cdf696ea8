"""The reproduce protocol's CPU base model (``tiny-pack``): random weights, 128 wide, with a
vocabulary learned from the training pack's rendered first prompts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")

from sandmle.training.learning_curve import PACK_HIDDEN, first_prompts, pack_model
from sandmle.training.tiny import build_tiny_model


def test_the_pack_model_reads_its_packs_prompts_in_fewer_tokens(tmp_path: Path) -> None:
    from transformers import AutoConfig, AutoTokenizer

    from tests.conftest import FIXTURES

    pack = tmp_path / "pack"
    for task in ("plant-watering", "bike-rentals"):
        shutil.copytree(FIXTURES / task, pack / task)
    model = pack_model(tmp_path / "model", str(pack))
    assert AutoConfig.from_pretrained(model).hidden_size == PACK_HIDDEN
    default = build_tiny_model(tmp_path / "default")
    # each task's first prompt, as an episode renders it for each model's tokenizer
    ours = first_prompts(model, str(pack), tmp_path / "logs-ours")
    theirs = first_prompts(default, str(pack), tmp_path / "logs-default")
    assert len(ours) == len(theirs) == 2
    decode = AutoTokenizer.from_pretrained(model).decode
    assert "plant" in decode(ours[0]).lower() or "plant" in decode(ours[1]).lower()
    for short, long in zip(ours, theirs, strict=True):
        assert len(short) < 0.6 * len(long), (len(short), len(long))
    weights = (model / "model.safetensors").stat().st_mtime_ns
    assert pack_model(model, str(pack)) == model  # built once per folder
    assert (model / "model.safetensors").stat().st_mtime_ns == weights


def test_first_prompts_render_the_episode_limits_they_are_given(tmp_path: Path) -> None:
    """A profile's episode (the toolkit's hint, its clock) is what the probe scripts sample
    on; before 2026-12-05 a ``toolkit`` flag here was dropped and the hint never shown."""
    from transformers import AutoTokenizer

    from tests.conftest import FIXTURES

    pack = tmp_path / "pack"
    shutil.copytree(FIXTURES / "plant-watering", pack / "plant-watering")
    model = build_tiny_model(tmp_path / "model")
    decode = AutoTokenizer.from_pretrained(model).decode
    limits = {"toolkit": True, "command_timeout": 600, "time_limit": 1800}
    [episode] = first_prompts(model, str(pack), tmp_path / "logs-toolkit", limits=limits)
    [plain] = first_prompts(model, str(pack), tmp_path / "logs-plain")
    assert "python automl.py FAMILY" in decode(episode)
    assert "1800 s of wall time" in decode(episode) and "600 s per command" in decode(episode)
    assert "automl.py" not in decode(plain)
