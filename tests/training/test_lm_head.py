"""TRL's fused LM head on CPU, switched to score only the labelled positions
(sandmle/training/lm_head.py): the same log-probabilities, entropies and gradients as the
full projection, over the completion's rows only, and every sandmle GRPO trainer switches it."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")

import torch
from transformers import AutoModelForCausalLM
from trl.trainer import utils as trl_utils

from sandmle.training.lm_head import compact_on_cpu

COMPLETION = 5


@pytest.fixture
def full_head(monkeypatch: pytest.MonkeyPatch) -> Any:
    """TRL's own switch, restored after the test (the patch is process-wide)."""
    original = inspect.unwrap(trl_utils._use_triton)
    monkeypatch.setattr(trl_utils, "_use_triton", original)
    return original


def score(model: Any, ids: torch.Tensor, rows: list[int]) -> tuple[Any, Any, dict[str, Any]]:
    """Log-probabilities and entropies of the last COMPLETION tokens, their gradients, and
    how many rows the chunked kernel projected (``rows`` collects it)."""
    kernel = trl_utils._ChunkedLogProbFunction

    class Counting(kernel):  # type: ignore[misc, valid-type]
        @staticmethod
        def forward(ctx: Any, hidden: torch.Tensor, *args: Any) -> Any:
            rows.append(hidden.shape[0])
            return kernel.forward(ctx, hidden, *args)

    labels = ids.clone()
    labels[:, :-COMPLETION] = -100
    trl_utils._ChunkedLogProbFunction = Counting
    try:
        out = model(input_ids=ids, attention_mask=torch.ones_like(ids), labels=labels,
                    fused_lm_head=True)  # fmt: skip
    finally:
        trl_utils._ChunkedLogProbFunction = kernel
    logprobs, entropy = out.log_probs[:, -COMPLETION:], out.entropy[:, -COMPLETION:]
    (logprobs.sum() + entropy.sum()).backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    return logprobs.detach(), entropy.detach(), grads


def test_the_completion_alone_is_projected_with_the_same_numbers(
    tiny_model: Path, full_head: Any
) -> None:
    model = AutoModelForCausalLM.from_pretrained(tiny_model, dtype=torch.float32).train()
    trl_utils.add_fused_lm_head(model, outputs=("log_probs", "entropy"))
    ids = torch.randint(
        0, model.config.vocab_size, (2, 40), generator=torch.Generator().manual_seed(0)
    )
    full_rows: list[int] = []
    full = score(model, ids, full_rows)
    assert compact_on_cpu() and compact_on_cpu()  # takes, and a second call changes nothing
    compact_rows: list[int] = []
    compact = score(model, ids, compact_rows)
    assert full_rows == [2 * 39]  # every position but the last, as TRL does off Triton
    assert compact_rows == [2 * COMPLETION]
    torch.testing.assert_close(compact[0], full[0])
    torch.testing.assert_close(compact[1], full[1])
    assert full[2].keys() == compact[2].keys() and full[2]
    for name, grad in full[2].items():
        torch.testing.assert_close(compact[2][name], grad, msg=name)
    assert not trl_utils._use_triton(torch.device("meta"))  # other devices: TRL's own answer


def test_every_grpo_trainer_scores_the_completion_alone(tiny_model: Path, tmp_path: Path,
                                                        full_head: Any) -> None:  # fmt: skip
    from sandmle.training import grpo
    from tests.training.test_grpo import CONFIG

    config = grpo.load_grpo_config(CONFIG, output_dir=str(tmp_path), max_steps=1)
    config.model_name_or_path = str(tiny_model)
    assert not trl_utils._use_triton(torch.device("cpu"))
    grpo.build_trainer(config)
    assert trl_utils._use_triton(torch.device("cpu"))
