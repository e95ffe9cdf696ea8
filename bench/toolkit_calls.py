"""What each checkpoint's first toolkit call looks like on a pack's prompts, sampled without
running anything: the share that is a valid ``python automl.py LEVEL`` call, its level mix, and
the calls that broke (malformed JSON, another command) or never came (no tool call).

The sandbox eval of a toolkit checkpoint runs the AutoML program at the chosen level (minutes
per image task); this samples the same first turn in seconds, so it shows whether a trained
call carries to held-out prompts before the eval is paid for. The prompts are each task's
first prompt as an episode renders it (one real episode per task, the first checkpoint's
tokenizer); sampling is plain ``generate`` at the eval's temperature and turn budget.

Usage: python bench/toolkit_calls.py PACK_DIR CHECKPOINT [CHECKPOINT ...]
           [--samples 4] [--temperature 1.0] [--max-tokens 64] [--seed 0]
Prints one JSON object: per checkpoint, overall and by modality.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from sandmle.env.chat import parse_tool_calls
from sandmle.harness.pack import load_pack
from sandmle.policies.toolkit import LEVELS, toolkit_command
from sandmle.training.learning_curve import first_prompts

KINDS = [*map(str, LEVELS), "broken", "no_call"]


def classify(text: str) -> str:
    """A level when the turn is exactly one bash call of the toolkit command, else why not."""
    _, calls = parse_tool_calls(text)
    if not calls:
        return "no_call"
    call = calls[0]
    command = str(next(iter(call.arguments.values()), "")).strip() if call.arguments else ""
    for level in LEVELS:
        if len(calls) == 1 and call.function == "bash" and command == toolkit_command(level):
            return str(level)
    return "broken"


def sample_kinds(
    checkpoint: Path, prompts: list[list[int]], args: argparse.Namespace
) -> list[list[str]]:
    """Per prompt, the kinds of ``args.samples`` sampled first turns."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(args.seed)
    tokenizer = AutoTokenizer.from_pretrained(checkpoint)
    model = AutoModelForCausalLM.from_pretrained(checkpoint).eval()
    kinds = []
    for prompt in prompts:
        with torch.no_grad():
            out = model.generate(
                torch.tensor([prompt]),
                do_sample=True,
                temperature=args.temperature,
                top_k=0,
                top_p=1.0,
                max_new_tokens=args.max_tokens,
                num_return_sequences=args.samples,
                pad_token_id=tokenizer.eos_token_id,
            )
        texts = [tokenizer.decode(row[len(prompt) :], skip_special_tokens=True) for row in out]
        kinds.append([classify(t) for t in texts])
    return kinds


def summarise(kinds: list[str]) -> dict[str, Any]:
    counts = Counter(kinds)
    valid = sum(counts[str(level)] for level in LEVELS)
    return {"n": len(kinds), "valid_call": round(valid / max(len(kinds), 1), 3),
            **{k: counts[k] for k in KINDS}}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack", type=Path)
    parser.add_argument("checkpoints", type=Path, nargs="+")
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    competitions = load_pack(args.pack).competitions
    with tempfile.TemporaryDirectory() as logs:
        prompts = first_prompts(args.checkpoints[0], str(args.pack), Path(logs), toolkit=True)
    result: dict[str, Any] = {"pack": str(args.pack), "tasks": len(prompts), "checkpoints": {}}
    for checkpoint in args.checkpoints:
        per_task = sample_kinds(checkpoint, prompts, args)
        by_modality: dict[str, list[str]] = defaultdict(list)
        for competition, kinds in zip(competitions, per_task, strict=True):
            by_modality[competition.config.modality].extend(kinds)
        result["checkpoints"][str(checkpoint)] = {
            "all": summarise([k for kinds in per_task for k in kinds]),
            **{m: summarise(k) for m, k in sorted(by_modality.items())},
        }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
