"""Sampling backends for the policy API: transformers (CPU, tests, small runs) and TRL's vLLM.

Both sample one continuation per call, so episodes advance independently: while one waits on
its sandbox another generates. Logprobs are of the sampled token under the temperature-scaled
distribution, which is what TRL compares against.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any


class TransformersGenerator:
    """``model.generate`` on the live training weights, one call at a time (a CPU has no batching win)."""

    def __init__(self, model: Any, tokenizer: Any, temperature: float = 1.0, top_p: float = 1.0):
        self.model, self.tokenizer = model, tokenizer
        self.temperature, self.top_p = temperature, top_p
        self._lock = threading.Lock()

    async def sample(
        self, context: list[int], max_new_tokens: int
    ) -> tuple[list[int], list[float]]:
        return await asyncio.to_thread(self._sample, context, max_new_tokens)

    def _sample(self, context: list[int], max_new_tokens: int) -> tuple[list[int], list[float]]:
        import torch

        with self._lock, torch.no_grad():
            was_training = self.model.training
            self.model.eval()
            try:
                out = self.model.generate(
                    torch.tensor([context], device=self.model.device),
                    attention_mask=torch.ones(
                        1, len(context), dtype=torch.long, device=self.model.device
                    ),
                    max_new_tokens=max_new_tokens,
                    do_sample=True,
                    temperature=self.temperature,
                    top_p=self.top_p,
                    top_k=0,
                    output_logits=True,
                    return_dict_in_generate=True,
                    pad_token_id=self.tokenizer.pad_token_id,
                    eos_token_id=self.tokenizer.eos_token_id,
                )
            finally:
                self.model.train(was_training)
        ids = out.sequences[0, len(context) :].tolist()
        logits = torch.stack(out.logits, dim=1)[0].float() / self.temperature
        logprobs = torch.log_softmax(logits, dim=-1)
        picked = logprobs[torch.arange(len(ids)), torch.tensor(ids)].tolist()
        return _strip_padding(ids, picked, self.tokenizer.eos_token_id)


def _strip_padding(
    ids: list[int], logprobs: list[float], eos: int
) -> tuple[list[int], list[float]]:
    """Drop anything generate padded after the end-of-turn token."""
    if eos in ids:
        end = ids.index(eos) + 1
        return ids[:end], logprobs[:end]
    return ids, logprobs


class VLLMGenerator:
    """TRL's vLLM engine: the colocated ``LLM`` or the ``trl vllm-serve`` client.

    Calls that arrive within ``window_s`` of each other go to vLLM as one batch, so many
    episodes share the engine. TRL already syncs the weights before each ``rollout_func`` call.
    """

    def __init__(self, trainer: Any, window_s: float = 0.01):
        self.vllm = trainer.vllm_generation
        self.args = trainer.args
        self.window_s = window_s
        self._pending: list[tuple[list[int], int, asyncio.Future]] = []
        self._flusher: asyncio.Task | None = None

    async def sample(
        self, context: list[int], max_new_tokens: int
    ) -> tuple[list[int], list[float]]:
        future = asyncio.get_running_loop().create_future()
        self._pending.append((context, max_new_tokens, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        await asyncio.sleep(self.window_s)
        batch, self._pending = self._pending, []
        try:
            results = await asyncio.to_thread(self._generate, [(c, n) for c, n, _ in batch])
        except Exception as exc:  # noqa: BLE001 - hand the error to every waiting episode
            for *_, future in batch:
                future.set_exception(exc)
            return
        for (*_, future), result in zip(batch, results, strict=True):
            future.set_result(result)

    def _generate(
        self, requests: list[tuple[list[int], int]]
    ) -> list[tuple[list[int], list[float]]]:
        max_tokens = max(n for _, n in requests)  # one sampling config per batch; cut below
        if self.vllm.mode == "server":
            out = self.vllm.vllm_client.generate(
                prompts=[c for c, _ in requests],
                n=1,
                temperature=self.args.temperature,
                top_p=self.args.top_p,
                max_tokens=max_tokens,
                logprobs=0,
            )
            pairs = [
                (ids, [float(lp[0]) if isinstance(lp, list) else float(lp) for lp in lps])
                for ids, lps in zip(out["completion_ids"], out["logprobs"], strict=True)
            ]
        else:
            pairs = self._colocate([c for c, _ in requests], max_tokens)
        return [(ids[:n], lps[:n]) for (ids, lps), (_, n) in zip(pairs, requests, strict=True)]

    def _colocate(
        self, contexts: list[list[int]], max_tokens: int
    ) -> list[tuple[list[int], list[float]]]:
        from vllm import SamplingParams, TokensPrompt

        params = SamplingParams(
            n=1,
            temperature=self.args.temperature,
            top_p=self.args.top_p,
            max_tokens=max_tokens,
            logprobs=0,
        )
        prompts = [TokensPrompt(prompt_token_ids=c) for c in contexts]
        pairs = []
        for request in self.vllm.llm.generate(prompts, params, use_tqdm=False):
            ids = list(request.outputs[0].token_ids)
            steps = request.outputs[0].logprobs
            pairs.append((ids, [step[t].logprob for step, t in zip(steps, ids, strict=True)]))
        return pairs
