"""A CPU run that learns: the warm-started tiny model on real sandbox episodes gets a reward
that varies within its group, so the first GRPO step has a gradient and moves the weights."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")

from sandmle.training.learning_curve import curve, learning_trainer, warm_model


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    import shutil

    from tests.conftest import FIXTURES

    root = tmp_path_factory.mktemp("learn")
    shutil.copytree(FIXTURES / "plant-watering", root / "pack" / "plant-watering")
    pack = str(root / "pack")
    return warm_model(root / "warm-model", pack), pack


def test_first_step_has_signal_and_moves_the_weights(warm, tmp_path: Path) -> None:
    import torch

    model, pack = warm
    trainer = learning_trainer(model, pack, tmp_path / "run", max_steps=1)
    before = {k: v.detach().clone() for k, v in trainer.model.state_dict().items()}
    trainer.train()
    (step,) = [h for h in trainer.state.log_history if "reward" in h]
    assert step["reward_std"] > 0  # some rollouts opened with a reasoning block, some did not
    assert step["grad_norm"] > 0 and step["rollout/dropped"] == 0
    after = trainer.model.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)


@pytest.mark.slow
def test_mean_reward_rises_over_a_short_run(warm, tmp_path: Path) -> None:
    model, pack = warm
    trainer = learning_trainer(model, pack, tmp_path / "run", max_steps=10)
    trainer.train()
    figures = curve(trainer.state.log_history)
    assert figures["last_third_mean"] > figures["first_third_mean"], figures
