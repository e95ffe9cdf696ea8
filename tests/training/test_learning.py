"""A CPU run that learns a signal that matters: the tiny model, warm-started to hand in the
sample submission with one bash call about 3 times in 10 (and to only list the data otherwise),
runs real react episodes in the sandbox; the medal scorer's verdict (``valid_reward``) varies
within each group, and GRPO raises the share of valid submissions. Sampling is seeded per
request (run seed, step, episode, turn), so the same seed gives the same rewards every run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")

from sandmle.training.learning_curve import (
    curve,
    learning_trainer,
    submit_probability,
    warm_model,
)

STEPS = 2


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    import shutil

    from tests.conftest import FIXTURES

    root = tmp_path_factory.mktemp("learn")
    shutil.copytree(FIXTURES / "plant-watering", root / "pack" / "plant-watering")
    pack = str(root / "pack")
    return warm_model(root / "warm-model", pack), pack


def run(model: Path, pack: str, out: Path, steps: int) -> dict[str, Any]:
    """``steps`` GRPO steps from the warm model: the per-step figures and the probability of the
    submitting call before and after."""
    trainer = learning_trainer(model, pack, out, max_steps=steps)
    before = submit_probability(trainer.model, model)
    trainer.train()
    figures = curve(trainer.state.log_history)
    steps_logged = [h for h in trainer.state.log_history if "reward" in h]
    figures["dropped"] = [h["rollout/dropped"] for h in steps_logged]
    figures["probability"] = (before, submit_probability(trainer.model, model))
    return figures


def test_valid_share_rises_and_the_seed_repeats_it(warm, tmp_path: Path) -> None:
    model, pack = warm
    first = run(model, pack, tmp_path / "first", STEPS)
    print("learning figures:", first)  # with -s: the per-step figures, to compare across runs
    assert first["dropped"] == [0] * STEPS, first
    assert first["reward_std"][0] > 0, first  # the first group mixes valid and invalid episodes
    assert first["valid_reward"][-1] > first["valid_reward"][0], first
    before, after = first["probability"]
    assert after > before, first  # GRPO moved the choice toward the submitting call
    again = run(model, pack, tmp_path / "again", STEPS)
    assert again["reward"] == first["reward"] and again["valid_reward"] == first["valid_reward"]


@pytest.mark.slow
def test_the_choice_keeps_moving_over_more_steps(warm, tmp_path: Path) -> None:
    """Over 3 steps the submitting call's probability rises far (0.28 to 0.82 in a run on the
    loaded 2-core machine); the sampled valid share is noisier there, as the updates also blur
    the call's other tokens (0.25, 0.5, 0.125 in that run)."""
    model, pack = warm
    figures = run(model, pack, tmp_path / "run", 3)
    before, after = figures["probability"]
    assert after > before + 0.3, figures
