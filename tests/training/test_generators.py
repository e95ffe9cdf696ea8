"""The samplers without a sandbox: turn-batching, failures as ``BackendError``, the colocated
engine's sleep/wake around a rollout, and left-padded batches sampling like single contexts."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest

from sandmle.harness.solvers import BackendError
from sandmle.training.generators import BatchingGenerator, ServerRounds, vllm_awake


def test_concurrent_turns_go_to_the_engine_as_one_batch() -> None:
    calls: list[int] = []

    def engine(requests):
        calls.append(len(requests))
        return [([len(c), n], [-0.1, -0.2]) for c, n in requests]

    async def episodes():
        generator = BatchingGenerator(engine)
        return await asyncio.gather(*(generator.sample([1] * k, 5) for k in (1, 2, 3)))

    assert asyncio.run(episodes()) == [
        ([1, 5], [-0.1, -0.2]),
        ([2, 5], [-0.1, -0.2]),
        ([3, 5], [-0.1, -0.2]),
    ]
    assert calls == [3]


def test_an_engine_failure_reaches_every_waiting_episode_as_a_backend_error() -> None:
    def engine(requests):
        raise RuntimeError("CUDA error: out of memory")

    async def episodes():
        generator = BatchingGenerator(engine)
        return await asyncio.gather(
            generator.sample([1], 4), generator.sample([2], 4), return_exceptions=True
        )

    errors = asyncio.run(episodes())
    assert all(isinstance(e, BackendError) and "out of memory" in str(e) for e in errors)


class FakeLLM:
    def __init__(self):
        self.events: list[str] = []

    def wake_up(self, tags):
        self.events.append(f"wake:{','.join(tags)}")

    def sleep(self, level):
        self.events.append(f"sleep:{level}")


def colocated(sleeping: bool) -> SimpleNamespace:
    llm = FakeLLM()
    vllm = SimpleNamespace(mode="colocate", enable_sleep_mode=True, llm=llm)
    vllm._llm_weights_sleeping = sleeping
    vllm.sync_weights = lambda: llm.events.append("sync_weights")
    return vllm


def test_colocated_engine_wakes_once_for_the_rollout_and_sleeps_after() -> None:
    vllm = colocated(sleeping=True)
    with vllm_awake(vllm):
        assert vllm.llm.events == ["sync_weights", "wake:kv_cache"]
        assert not vllm.enable_sleep_mode  # TRL's generate must not sleep between turns
    assert vllm.llm.events[-1] == "sleep:2" and vllm._llm_weights_sleeping
    assert vllm.enable_sleep_mode


def test_colocated_engine_sleeps_even_when_the_rollout_fails() -> None:
    vllm = colocated(sleeping=False)  # TRL already pushed this step's weights
    with pytest.raises(RuntimeError), vllm_awake(vllm):
        raise RuntimeError("sandbox died")
    assert vllm.llm.events == ["wake:kv_cache", "sleep:2"]


def test_server_rounds_in_one_process() -> None:
    class Client:
        def generate(self, prompts, max_tokens, **kw):
            ids = [[7] * max_tokens for _ in prompts]
            return {"completion_ids": ids, "logprobs": [[[-1.0]] * max_tokens for _ in prompts]}

    sampling = dict(temperature=1.0, top_p=1.0, top_k=0, min_p=0.0, repetition_penalty=1.0)
    vllm = SimpleNamespace(vllm_client=Client(), logprobs=0, generation_kwargs={}, **sampling)
    single = (lambda obj: obj, lambda obj, from_process=0: obj)  # gather/broadcast of one rank

    async def episodes():
        return await asyncio.gather(rounds.sample([1, 2], 3), rounds.sample([3], 2))

    with ServerRounds(vllm, rank=0, eos=2, collectives=single) as rounds:
        got = asyncio.run(episodes())
    assert got == [([7, 7, 7], [-1.0] * 3), ([7, 7], [-1.0] * 2)]
    assert rounds.clock.requests == 2


def test_a_left_padded_batch_samples_each_context_like_alone(tiny_model: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from sandmle.training.generators import TransformersEngine

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    engine = TransformersEngine(model, tokenizer)
    short, long = [5, 6, 7], [9, 10, 11, 12, 13, 14, 15]
    torch.manual_seed(0)
    (ids, _), _ = engine([(short, 6), (long, 6)])
    # the logprobs a batch reports for a context's tokens are those of the context alone
    logits = model(torch.tensor([short + ids])).logits[0, len(short) - 1 : -1].float()
    alone = torch.log_softmax(logits, -1).gather(-1, torch.tensor(ids)[:, None]).squeeze(-1)
    torch.manual_seed(0)
    (_, batch_lps), _ = engine([(short, 6), (long, 6)])
    assert batch_lps == pytest.approx(alone.tolist(), abs=1e-4)
