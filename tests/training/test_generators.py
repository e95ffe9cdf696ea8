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


def test_a_cancelled_turn_stops_the_engine_and_close_waits_for_it(tiny_model: Path) -> None:
    import threading

    from transformers import AutoModelForCausalLM, AutoTokenizer

    from sandmle.training.generators import TransformersEngine

    tokenizer = AutoTokenizer.from_pretrained(tiny_model, padding_side="left")
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    model.generation_config.suppress_tokens = [tokenizer.eos_token_id]  # never ends by itself
    model.train()
    engine = TransformersEngine(model, tokenizer)
    started = threading.Event()
    inner = engine.model.generate

    def generate(*args, **kwargs):
        started.set()
        return inner(*args, **kwargs)

    engine.model.generate = generate
    generator = BatchingGenerator(engine, window_s=0.0)
    budget = 50_000  # most of a minute of sampling even for a two-layer model: it must stop

    async def rollout() -> None:
        task = asyncio.create_task(generator.sample([1, 2, 3], budget))
        while not started.is_set():
            await asyncio.sleep(0.01)
        task.cancel()  # what a time limit does to the episode waiting on its turn
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(rollout())
    generator.close(timeout_s=120)  # returns only once the engine call has ended
    assert engine._stop.is_set() and model.training  # stopped, and back in train mode
    assert generator.clock.calls == 1


def test_a_time_limit_during_generation_drops_the_episode(
    tiny_model: Path, pack_dir: Path, tmp_path: Path
) -> None:
    from transformers import AutoTokenizer

    from sandmle.training.policy_api import PolicySession
    from sandmle.training.rollouts import RolloutSettings, failed_episodes, run_episodes

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)

    class Slow:
        async def sample(self, context: list[int], max_new_tokens: int):
            await asyncio.sleep(600)  # a turn that outlives the sample's time limit
            return [tokenizer.eos_token_id], [0.0]

    session = PolicySession(Slow(), tokenizer, 16, 4096)
    settings = RolloutSettings(pack=str(pack_dir), time_limit=5, on_backend_error="drop")
    (result,) = run_episodes(["plant-watering"], session, settings, tmp_path / "logs")
    assert result.episode.cut_while_generating
    assert result.error is not None and "while the policy was generating" in result.error
    assert failed_episodes([result], settings) == 1  # dropped and counted, not scored 0
    with pytest.raises(RuntimeError, match="while the policy was generating"):
        failed_episodes([result], settings.model_copy(update={"on_backend_error": "fail"}))
