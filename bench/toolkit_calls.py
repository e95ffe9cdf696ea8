"""What each checkpoint's first toolkit call looks like on a pack's prompts, sampled without
running anything: the share that is a valid ``python automl.py OPTION`` call, its option mix, and
the calls that broke (malformed JSON, another command) or never came (no tool call).

The sandbox eval of a toolkit checkpoint runs the AutoML program with the chosen option
(seconds to a minute a task); this samples the same first turn in seconds, so it shows whether a trained
call carries to held-out prompts before the eval is paid for. The prompts are each task's
first prompt as an episode renders it (one real episode per task, the first checkpoint's
tokenizer); sampling is plain ``generate`` at the eval's temperature and turn budget.

With ``--shuffle``, each prompt is also sampled with the words of its task text (the user
turn) shuffled in place, the layout kept: a policy that reads the task chooses differently
when the task is noise. The JSON then holds, per checkpoint, both kind mixes, their total
variation distance and a paired permutation test's p (issue #52's probe); ``families_only``
repeats the test on the well-formed calls alone, so a policy whose calls merely break on noise
text does not pass for one that reads the task.

With ``--logs DIR``, nothing is sampled: the first turns are read from finished eval logs
(``sandmle reproduce``'s ``eval/``, or any ``inspect eval`` of a toolkit episode), per model, for
a pack's tasks (Inspect task ``--task``, default ``synthetic``: not the replicas) and, by
default, only under react (``--scaffold``). That is the mix the eval actually scored, beside its
rates; ``sandmle reproduce``'s report shows it too (``sandmle.leaderboard.choices``).

Usage: python bench/toolkit_calls.py PACK_DIR CHECKPOINT [CHECKPOINT ...]
           [--samples 4] [--temperature 1.0] [--max-tokens 64] [--seed 0] [--shuffle]
           [--profile cpu-micro]
       python bench/toolkit_calls.py --logs LOG_DIR [--scaffold react] [--task synthetic]
Prints one JSON object: per checkpoint (or model), overall and by modality, and whether the
mix depends on the modality (``by_modality``: a permutation test; a policy that reads the task
chooses by it).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from sandmle.env.chat import parse_tool_calls
from sandmle.harness.pack import load_pack
from sandmle.leaderboard.choices import (
    kind_of,
    log_kinds,
    mix_report,
    summarise,
)
from sandmle.policies.toolkit import OPTIONS
from sandmle.specs.profile import load_profile
from sandmle.training.learning_curve import first_prompts

USER_TURN = re.compile(r"(<\|im_start\|>user\n)(.*?)(<\|im_end\|>)", re.DOTALL)
"""The user turn as ChatML templates (Qwen's, the tiny models') render it."""


def shuffle_task_text(prompt: str, rng: random.Random) -> str:
    """``prompt`` with the words of its last user turn in random order; whitespace, markup
    and every other turn as they were."""
    turns = list(USER_TURN.finditer(prompt))
    if not turns:
        raise ValueError("no ChatML user turn in the prompt")
    turn = turns[-1]
    parts = re.split(r"(\s+)", turn.group(2))
    words = parts[0::2]
    rng.shuffle(words)
    parts[0::2] = words
    return prompt[: turn.start(2)] + "".join(parts) + prompt[turn.end(2) :]


def mix_difference(
    a: list[list[str]], b: list[list[str]], rounds: int = 10_000, seed: int = 0
) -> dict:
    """Total variation distance between two kind mixes sampled on the same prompts (``a[i]``
    and ``b[i]`` from prompt ``i``, equal sizes), and a paired permutation test's p: the share
    of rounds, each swapping the two conditions of random prompts, with a distance as large."""
    rng = random.Random(seed)

    def distance(pairs: list[tuple[list[str], list[str]]]) -> float:
        cx = Counter(k for x, _ in pairs for k in x)
        cy = Counter(k for _, y in pairs for k in y)
        nx, ny = max(sum(cx.values()), 1), max(sum(cy.values()), 1)
        return 0.5 * sum(abs(cx[k] / nx - cy[k] / ny) for k in set(cx) | set(cy))

    pairs = list(zip(a, b, strict=True))
    observed = distance(pairs)
    hits = 0
    for _ in range(rounds):
        swapped = [(y, x) if rng.random() < 0.5 else (x, y) for x, y in pairs]
        hits += distance(swapped) >= observed - 1e-12
    return {"tv_distance": round(observed, 3), "p": round((hits + 1) / (rounds + 1), 4)}


def family_shift(a: list[list[str]], b: list[list[str]], seed: int = 0) -> dict:
    """``mix_difference`` over the well-formed calls only: whether shuffling the task moves
    which family is called, apart from breaking the call (noise text can break a call of a
    policy that ignores the task too). Prompts with no well-formed call in either condition
    are left out; ``calls`` says how many remain on each side."""
    kept = [
        ([k for k in x if k in OPTIONS], [k for k in y if k in OPTIONS])
        for x, y in zip(a, b, strict=True)
    ]
    kept = [(x, y) for x, y in kept if x and y]
    calls = {"task": sum(len(x) for x, _ in kept), "shuffled": sum(len(y) for _, y in kept)}
    if not kept:
        return {"calls": calls, "tv_distance": None, "p": None}
    xs, ys = zip(*kept, strict=True)
    return {"calls": calls, **mix_difference(list(xs), list(ys), seed=seed)}


def classify(text: str) -> str:
    """An option when the turn is exactly one bash call of the toolkit command, else why not."""
    _, calls = parse_tool_calls(text)
    return kind_of([(c.function, c.arguments) for c in calls])


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
        kinds.append([classify(str(t)) for t in texts])
    return kinds


def from_logs(
    log_dir: Path, scaffold: str | None, seed: int, task: str | None = "synthetic"
) -> dict[str, Any]:
    skipped: dict[str, str] = {}
    models = log_kinds(log_dir, scaffold or None, skipped, task=task or None)
    return {
        "logs": str(log_dir),
        "scaffold": scaffold,
        "task": task,
        "skipped": skipped,
        "models": {m: mix_report(kinds, mods, seed) for m, (kinds, mods) in sorted(models.items())},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack", type=Path, nargs="?")
    parser.add_argument("checkpoints", type=Path, nargs="*")
    parser.add_argument("--logs", type=Path, help="read the first turns from these eval logs")
    parser.add_argument("--scaffold", default="react", help="with --logs: this solver's only")
    parser.add_argument("--task", default="synthetic", help="with --logs: this Inspect task's")
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shuffle", action="store_true", help="also sample shuffled task text")
    parser.add_argument(
        "--profile", default="cpu-micro", help="the profile whose episode renders the prompts"
    )
    args = parser.parse_args()
    if args.logs:
        print(json.dumps(from_logs(args.logs, args.scaffold, args.seed, args.task), indent=1))
        return
    if not args.pack or not args.checkpoints:
        parser.error("give PACK_DIR and a CHECKPOINT, or --logs LOG_DIR")
    competitions = load_pack(args.pack).competitions
    modalities: list[str] = [c.config.modality for c in competitions]
    limits = load_profile(args.profile)[0].episode.limits
    with tempfile.TemporaryDirectory() as logs:
        prompts = first_prompts(args.checkpoints[0], str(args.pack), Path(logs), limits=limits)
    result: dict[str, Any] = {"pack": str(args.pack), "tasks": len(prompts), "checkpoints": {}}
    shuffled: list[list[int]] = []
    if args.shuffle:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(args.checkpoints[0])
        rng = random.Random(args.seed)
        texts = [str(tokenizer.decode(p)) for p in prompts]
        shuffled = [
            tokenizer(shuffle_task_text(t, rng), add_special_tokens=False)["input_ids"]
            for t in texts
        ]
    for checkpoint in args.checkpoints:
        per_task = sample_kinds(checkpoint, prompts, args)
        result["checkpoints"][str(checkpoint)] = mix_report(per_task, modalities, args.seed)
        if shuffled:
            noise = sample_kinds(checkpoint, shuffled, args)
            result["checkpoints"][str(checkpoint)]["shuffled_task_text"] = {
                "all": summarise([k for kinds in noise for k in kinds]),
                **mix_difference(per_task, noise, seed=args.seed),
                "families_only": family_shift(per_task, noise, seed=args.seed),
            }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
