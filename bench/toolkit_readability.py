"""Can a base model learn to read the task? The toolkit family each prompt wants, learnt by
plain supervision on a training pack's prompts and scored on a held-out pack's.

Before a GRPO run is paid for, this asks the easier question: with the right family given as
the label (the family of the task's modality: ``table`` for tabular, ``images`` for image
tasks, ...), does the model map an unseen task's prompt to its family? Each prompt is the
task's first prompt as the profile's episode renders it; the call is the toolkit's, as the
model's chat template writes an assistant tool call. A family's probability is the softmax,
over the five families, of the call's log-likelihood after the prompt. Training is Adam on
the call's tokens only, one prompt a step, drawn at random from the training pack.

Usage: python bench/toolkit_readability.py TRAIN_PACK HELDOUT_PACK MODEL
           [--steps 36] [--lr 1e-4] [--profile cpu-smollm2] [--seed 0]
Prints one JSON object: per pack and modality, the share of prompts whose most likely family
is right and the mean probability of the right one, before training (held-out) and after.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from sandmle.env.chat import render
from sandmle.harness.pack import load_pack
from sandmle.policies.toolkit import OPTIONS, toolkit_command
from sandmle.specs.profile import load_profile
from sandmle.training.learning_curve import first_prompts

MODALITY_FAMILY = {
    "tabular": "table",
    "text": "text",
    "image": "images",
    "audio": "audio",
    "time-series": "series",
}
"""The family a task of each modality wants (bench/toolkit_variants.py: each is the only one
above the median on most tasks of its modality)."""


def call_ids(tokenizer: Any, option: str) -> list[int]:
    """The toolkit call as the template renders an assistant turn after a user turn."""
    user = [{"role": "user", "content": "task"}]
    call = {"type": "function", "function": {"name": "bash", "arguments": {"command": ""}}}
    call["function"]["arguments"]["command"] = toolkit_command(option)
    turn = {"role": "assistant", "content": "", "tool_calls": [call]}
    head = render(tokenizer, user, None, add_generation_prompt=True)
    full = render(tokenizer, [*user, turn], None, add_generation_prompt=False)
    if not full.startswith(head):
        raise SystemExit("the chat template rewrites the user turn; cannot score a call")
    ids: list[int] = tokenizer(full[len(head) :].rstrip("\n"), add_special_tokens=False)[
        "input_ids"
    ]
    return ids


def family_probs(model: Any, prompt: list[int], calls: dict[str, list[int]]) -> dict[str, float]:
    """Softmax over the families of each call's log-likelihood after ``prompt``."""
    import torch

    scores = []
    with torch.no_grad():
        for ids in calls.values():
            logits = model(torch.tensor([prompt + ids])).logits[0, len(prompt) - 1 : -1]
            logp = torch.log_softmax(logits.float(), -1).gather(1, torch.tensor(ids)[:, None])
            scores.append(float(logp.sum()))
    probs = torch.softmax(torch.tensor(scores), 0).tolist()
    return dict(zip(calls, probs, strict=True))


def score(model: Any, prompts: list[list[int]], modalities: list[str], calls: dict) -> dict:
    """Per modality and overall: n, the share whose top family is right, the mean p(right)."""
    rows: dict[str, list[tuple[bool, float]]] = defaultdict(list)
    for prompt, modality in zip(prompts, modalities, strict=True):
        probs = family_probs(model, prompt, calls)
        right = MODALITY_FAMILY[modality]
        row = (max(probs, key=probs.__getitem__) == right, probs[right])
        rows[modality].append(row)
        rows["all"].append(row)
    return {
        m: {
            "n": len(r),
            "top_right": round(sum(a for a, _ in r) / len(r), 3),
            "p_right": round(sum(p for _, p in r) / len(r), 3),
        }
        for m, r in sorted(rows.items())
    }


def train(model: Any, data: list[tuple[list[int], list[int]]], args: argparse.Namespace) -> list:
    """Adam on the call's tokens, one (prompt, call) a step; the losses."""
    import torch

    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model.train()
    losses = []
    for _ in range(args.steps):
        prompt, call = rng.choice(data)
        ids = torch.tensor([prompt + call])
        labels = ids.clone()
        labels[0, : len(prompt)] = -100
        loss = model(input_ids=ids, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(round(float(loss), 4))
    model.eval()
    return losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("train_pack", type=Path)
    parser.add_argument("heldout_pack", type=Path)
    parser.add_argument("model", type=Path)
    parser.add_argument("--steps", type=int, default=36)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--profile", default="cpu-smollm2", help="whose episode renders prompts")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    start = time.monotonic()
    limits = load_profile(args.profile)[0].episode.limits
    packs = {"train": args.train_pack, "heldout": args.heldout_pack}
    prompts, modalities = {}, {}
    for part, pack in packs.items():
        modalities[part] = [c.config.modality for c in load_pack(pack).competitions]
        with tempfile.TemporaryDirectory() as logs:
            prompts[part] = first_prompts(args.model, str(pack), Path(logs), limits=limits)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    calls = {option: call_ids(tokenizer, option) for option in OPTIONS}
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    model.eval()
    result: dict[str, Any] = {"model": str(args.model), "profile": args.profile}
    result["before"] = score(model, prompts["heldout"], modalities["heldout"], calls)
    data = [
        (p, calls[MODALITY_FAMILY[m]])
        for p, m in zip(prompts["train"], modalities["train"], strict=True)
    ]
    result["losses"] = train(model, data, args)
    result["after"] = {part: score(model, prompts[part], modalities[part], calls) for part in packs}
    result["settings"] = {"steps": args.steps, "lr": args.lr, "seed": args.seed}
    result["seconds"] = round(time.monotonic() - start, 1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
