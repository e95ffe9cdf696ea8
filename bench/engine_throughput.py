"""Generation throughput of the two engines training can sample from, side by side, one run:
``model.generate`` in the trainer's process (``TransformersEngine``) and a vLLM server
(``ServerEngine``, the API weight-sync mode's sampler). Prints one JSON line.

For each engine, on the same model folder:
1. tokens/s: one batch of ``--batch`` copies of a fixed chat prompt, ``--tokens`` new tokens each
   (sampled tokens counted as returned, a turn may end early at its end token);
2. episodes/min: ``--episodes`` real Inspect episodes of a fixture task (sandbox, tools,
   grading) through the training policy API, ``--max-turns`` turns of ``--turn-tokens``.

The vLLM server is started by the caller (bench/vllm_cpu.sh does, for SmolLM2 on CPU) with
``--logprobs-mode processed_logprobs``; pass its address as ``--vllm-url``. ``--threads`` sets
torch's intra-op threads of the HF engine (1 by default, as the vLLM CPU lane's server uses).

Usage: python bench/engine_throughput.py --model DIR --vllm-url http://127.0.0.1:8021
       [--batch 4] [--tokens 64] [--episodes 4] [--max-turns 2] [--turn-tokens 64] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "competitions"
TASK = "plant-watering"
PROMPT = [
    {"role": "system", "content": "You are a careful machine-learning engineer."},
    {"role": "user", "content": "Explain, step by step, how you would predict plant watering."},
]


def tokens_per_s(engine: Any, prompt: list[int], batch: int, tokens: int) -> dict[str, float]:
    engine([(prompt, 4)])  # warm-up: first-call allocations are not throughput
    start = time.perf_counter()
    samples = engine([(prompt, tokens)] * batch)
    seconds = time.perf_counter() - start
    sampled = sum(len(ids) for ids, _ in samples)
    return {
        "batch": batch,
        "sampled_tokens": sampled,
        "seconds": round(seconds, 2),
        "tokens_per_s": round(sampled / seconds, 2),
    }


def episodes_per_min(engine: Any, tokenizer: Any, args: argparse.Namespace, root: Path) -> dict:
    from sandmle.specs.training import RolloutSettings
    from sandmle.training.generators import BatchingGenerator
    from sandmle.training.policy_api import PolicySession
    from sandmle.training.rollouts import run_episodes

    pack = root / "pack"
    if not pack.exists():
        shutil.copytree(FIXTURES / TASK, pack / TASK)
    settings = RolloutSettings(
        pack=str(pack),
        parallel_sandboxes=args.episodes,
        max_turns=args.max_turns,
        max_turn_tokens=args.turn_tokens,
        max_episode_tokens=8192,
        on_backend_error="drop",
        limits={"time_limit": 1800, "command_timeout": 60, "memory_mb": 2048},
    )
    generator = BatchingGenerator(engine)
    session = PolicySession(generator, tokenizer, args.turn_tokens, settings.max_episode_tokens)
    log_dir = Path(tempfile.mkdtemp(dir=root))
    start = time.perf_counter()
    results = run_episodes([TASK] * args.episodes, session, settings, log_dir)
    seconds = time.perf_counter() - start
    turns = sum(len(r.episode.assistant_turns) for r in results)
    return {
        "episodes": len(results),
        "turns": turns,
        "seconds": round(seconds, 1),
        "episodes_per_min": round(60 * len(results) / seconds, 3),
        "generation_seconds": round(generator.clock.seconds, 1),
        "engine_calls": generator.clock.calls,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--vllm-url", required=True)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--max-turns", type=int, default=2)
    parser.add_argument("--turn-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from sandmle.specs.training import GenerationServer
    from sandmle.training.generators import TransformersEngine
    from sandmle.training.weight_sync import ServerClient, ServerEngine

    torch.set_num_threads(args.threads)
    tokenizer = AutoTokenizer.from_pretrained(args.model, padding_side="left")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    text = tokenizer.apply_chat_template(PROMPT, add_generation_prompt=True, tokenize=False)
    prompt = tokenizer(text, add_special_tokens=False)["input_ids"]
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    eos = tokenizer.eos_token_id
    engines = {
        "hf_generate": TransformersEngine(model, tokenizer),
        "vllm_server": ServerEngine(
            ServerClient(GenerationServer(url=args.vllm_url)), eos, 1.0, 1.0
        ),
    }
    figures: dict[str, Any] = {"model": str(args.model), "prompt_tokens": len(prompt)}
    with tempfile.TemporaryDirectory(prefix="engine-throughput-") as tmp:
        # a first episode pays the sandbox's cold start (image, warm interpreter): not counted
        warm = argparse.Namespace(**{**vars(args), "episodes": 1, "max_turns": 1})
        episodes_per_min(engines["hf_generate"], tokenizer, warm, Path(tmp))
        for name, engine in engines.items():
            figures[name] = {
                "throughput": tokens_per_s(engine, prompt, args.batch, args.tokens),
                "episodes": episodes_per_min(engine, tokenizer, args, Path(tmp)),
            }
            print(f"{name}: {json.dumps(figures[name])}", file=sys.stderr)
    hf, vllm = figures["hf_generate"], figures["vllm_server"]
    figures["vllm_over_hf"] = {
        "tokens_per_s": round(
            vllm["throughput"]["tokens_per_s"] / hf["throughput"]["tokens_per_s"], 2
        ),
        "episodes_per_min": round(
            vllm["episodes"]["episodes_per_min"] / hf["episodes"]["episodes_per_min"], 2
        ),
    }
    figures["hf_threads"] = args.threads
    figures["load_avg_1m"] = round(os.getloadavg()[0], 2)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
