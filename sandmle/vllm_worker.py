"""A vLLM worker extension for the API weight sync (``sandmle.training.weight_sync``).

Loaded inside the vLLM server, which has no sandmle dependencies: this module imports nothing
from sandmle (the package's ``__init__`` only reads its version). Start the server with
``--worker-extension-cls sandmle.vllm_worker.WeightReload`` and sandmle importable (installed
with ``--no-deps``, or its source folder on the server's ``PYTHONPATH``).

Why: vLLM's ``reload_weights`` loads a saved folder in place, but a model whose output layer is
tied to its input embedding gets no weights for the output layer (checkpoints do not carry
it); on GPUs the two share one tensor, so it follows, but vLLM's CPU backend packs the output
layer's GEMM from the embedding once at load time and keeps serving the old one. Here the
output layer is re-tied and re-packed after every reload.
"""

from __future__ import annotations

from typing import Any


class WeightReload:
    """Mixed into vLLM's worker class: ``collective_rpc("sandmle_reload", weights_path=...)``."""

    model_runner: Any

    def sandmle_reload(self, weights_path: str) -> None:
        self.model_runner.reload_weights(weights_path=weights_path)
        model = self.model_runner.get_model()
        head = getattr(model, "lm_head", None)
        embed = getattr(getattr(model, "model", None), "embed_tokens", None)
        config = getattr(model, "config", None)
        if head is None or embed is None or not getattr(config, "tie_word_embeddings", False):
            return
        import torch

        with torch.no_grad():
            if head.weight.data_ptr() != embed.weight.data_ptr():
                head.weight.copy_(embed.weight)
        method = getattr(head, "quant_method", None)
        if method is not None:
            method.process_weights_after_loading(head)  # CPU: packs the GEMM anew
