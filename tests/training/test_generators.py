"""The samplers without a sandbox: turn-batching, failures as ``BackendError``, the colocated
engine's sleep/wake around a rollout, and the in-process engine: a request's tokens depend on
its key alone (not on the batch or order), cached turns sample what a full prefill samples."""

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


@pytest.fixture(scope="module")
def tiny(tiny_model: Path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    return AutoModelForCausalLM.from_pretrained(tiny_model), tokenizer


def engine_for(tiny, **kwargs):
    from sandmle.training.generators import TransformersEngine

    model, tokenizer = tiny
    return TransformersEngine(model, tokenizer, **kwargs)


CONTEXTS = {"a": list(range(5, 30)), "b": list(range(40, 47)), "c": list(range(3, 90))}


def test_a_request_samples_the_same_alone_in_any_batch_and_any_order(tiny) -> None:
    engine = engine_for(tiny, cache_mb=0)  # no cached turns: each call starts from scratch
    requests = [(CONTEXTS[k], n) for k, n in zip("abc", (40, 25, 33), strict=True)]
    keys = ["seed-0/a#0/turn-0", "seed-0/b#1/turn-0", "seed-0/c#2/turn-0"]
    alone = [engine([r], [k])[0] for r, k in zip(requests, keys, strict=True)]
    together = engine(requests, keys)
    reversed_ = engine(requests[::-1], keys[::-1])[::-1]
    pairs = engine(requests[1:], keys[1:])
    for other in (together, reversed_, [alone[0], *pairs]):
        for (ids, lps), (other_ids, other_lps) in zip(alone, other, strict=True):
            assert other_ids == ids
            assert other_lps == pytest.approx(lps, abs=1e-5)


@pytest.mark.parametrize("cache_mb", [0, 64])
def test_two_episodes_of_a_group_sample_apart_and_a_key_repeats(tiny, cache_mb: int) -> None:
    engine = engine_for(tiny, cache_mb=cache_mb)
    prompt = CONTEXTS["a"]
    first, second = engine([(prompt, 30), (prompt, 30)], ["s/task#0/turn-0", "s/task#1/turn-0"])
    assert first[0] != second[0]  # same context, other episode: another draw
    # with the cache, the group's shared prompt is prefilled once (the second feeds its last token)
    assert engine.stats.prefilled == (len(prompt) + 1 if cache_mb else 2 * len(prompt))
    again = engine_for(tiny, cache_mb=cache_mb)([(prompt, 30)], ["s/task#1/turn-0"])[0]
    assert again[0] == second[0]
    assert again[1] == pytest.approx(second[1], abs=1e-5)  # batch of one vs two: float noise


def test_logprobs_are_the_sampled_tokens_under_the_temperature_scaled_model(tiny) -> None:
    import torch

    model, _ = tiny
    engine = engine_for(tiny, temperature=0.7, top_p=0.9)
    context = CONTEXTS["b"]
    ids, lps = engine([(context, 12), (CONTEXTS["c"], 5)], ["x", "y"])[0]
    logits = model(torch.tensor([context + ids])).logits[0, len(context) - 1 : -1].float()
    alone = torch.log_softmax(logits / 0.7, -1).gather(-1, torch.tensor(ids)[:, None])
    assert lps == pytest.approx(alone.squeeze(-1).tolist(), abs=1e-4)


def episode_turns(engine, opening: bool) -> tuple[list, list]:
    """Three turns of one episode and their contexts: the environment appends four tokens
    after each sampled turn; with ``opening``, the record also puts a token before the second
    sampled turn (as an inserted template opening does), so the cached prefix stops short."""
    context, turns, contexts = list(CONTEXTS["a"]), [], []
    for turn in range(3):
        ids, lps = engine([(context, 20)], [f"s/task#0/turn-{turn}"])[0]
        contexts.append(context)
        turns.append((ids, lps))
        before = [11 if ids[0] != 11 else 12] if opening and turn == 1 else []
        context = context + before + ids + [7, 8, 9, 10]
    return turns, contexts


@pytest.mark.parametrize("opening", [False, True])
def test_the_cached_turns_sample_what_a_full_prefill_samples(tiny, opening: bool) -> None:
    cached, uncached = engine_for(tiny), engine_for(tiny, cache_mb=0)
    (got, contexts), (want, _) = episode_turns(cached, opening), episode_turns(uncached, opening)
    for (ids, lps), (want_ids, want_lps) in zip(got, want, strict=True):
        assert ids == want_ids
        assert lps == pytest.approx(want_lps, abs=1e-5)
    assert uncached.stats.reused == 0
    # a later turn prefills the environment's tokens and the last sampled one (never fed);
    # after the inserted token, the whole second turn as well
    second = 1 + len(got[1][0]) + 4 if opening else 5
    assert cached.stats.prefilled == len(contexts[0]) + 5 + second
    assert cached.stats.reused == sum(map(len, contexts)) - cached.stats.prefilled


def test_a_weight_change_drops_the_cached_turns(tiny_model: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from sandmle.training.generators import TransformersEngine

    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    engine = TransformersEngine(model, AutoTokenizer.from_pretrained(tiny_model))
    context = CONTEXTS["a"]
    ids, _ = engine([(context, 8)], ["k/turn-0"])[0]
    with torch.no_grad():
        next(model.parameters()).mul_(1.01)  # what an optimizer step does, in place
    engine([(context + ids + [7], 8)], ["k/turn-1"])
    assert engine.stats.reused == 0 and engine.stats.prefilled == 2 * len(context) + len(ids) + 1


def test_the_cache_is_bounded_and_cleared_on_close(tiny) -> None:
    engine = engine_for(tiny)
    engine([(CONTEXTS["c"], 4)], ["probe"])
    entry_bytes = engine.cache.nbytes
    per_token = entry_bytes / len(engine.cache.entries[0].tokens)
    engine.cache.max_bytes = int(per_token * 100)  # room for about one 90-token episode
    engine([(CONTEXTS["a"], 4), (CONTEXTS["b"], 4)], ["x", "y"])
    assert engine.cache.nbytes <= engine.cache.max_bytes
    assert len(engine.cache.entries) == 2  # c (least recently used) went out
    generator = BatchingGenerator(engine)
    generator.close()
    assert engine.cache.entries == []


def test_the_batching_generator_hands_each_request_its_key() -> None:
    seen: list[list[str]] = []

    class Keyed:
        keyed = True

        def __call__(self, requests, keys):
            seen.append(keys)
            return [([len(k)], [0.0]) for k in keys]

    async def episodes():
        generator = BatchingGenerator(Keyed())
        return await asyncio.gather(generator.sample([1], 3, key="k1"), generator.sample([2], 3))

    assert asyncio.run(episodes()) == [([2], [0.0]), ([9], [0.0])]
    assert seen == [["k1", "unkeyed-1"]]


def test_a_cancelled_turn_stops_the_engine_and_close_waits_for_it(tiny_model: Path) -> None:
    import threading

    from transformers import AutoModelForCausalLM, AutoTokenizer

    from sandmle.training.generators import TransformersEngine

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    model.generation_config.suppress_tokens = [tokenizer.eos_token_id]  # never ends by itself
    model.train()
    engine = TransformersEngine(model, tokenizer)
    started = threading.Event()
    model.register_forward_hook(lambda *args: started.set())
    generator = BatchingGenerator(engine, window_s=0.0)
    budget = 50_000  # most of a minute of sampling even for a two-layer model: it must stop

    async def rollout() -> None:
        task = asyncio.create_task(generator.sample([1, 2, 3], budget, key="k"))
        while not started.is_set():
            await asyncio.sleep(0.01)
        task.cancel()  # what a time limit does to the episode waiting on its turn
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(rollout())
    generator.close(timeout_s=120)  # returns only once the engine call has ended
    assert engine._stop.is_set() and model.training  # stopped, and back in train mode
    assert generator.clock.calls == 1
    assert 0 < engine.stats.sampled < budget


def test_a_time_limit_during_generation_drops_the_episode(
    tiny_model: Path, pack_dir: Path, tmp_path: Path
) -> None:
    from transformers import AutoTokenizer

    from sandmle.specs.training import RolloutSettings
    from sandmle.training.policy_api import PolicySession
    from sandmle.training.rollouts import failed_episodes, run_episodes

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)

    class Slow:
        async def sample(self, context: list[int], max_new_tokens: int, key: str = ""):
            await asyncio.sleep(600)  # a turn that outlives the sample's time limit
            return [tokenizer.eos_token_id], [0.0]

    session = PolicySession(Slow(), tokenizer, 16, 4096)
    settings = RolloutSettings(
        pack=str(pack_dir), on_backend_error="drop", limits={"time_limit": 5}
    )
    (result,) = run_episodes(["plant-watering"], session, settings, tmp_path / "logs")
    assert result.episode.cut_while_generating
    assert result.error is not None and "while the policy was generating" in result.error
    assert failed_episodes([result], settings) == 1  # dropped and counted, not scored 0
    with pytest.raises(RuntimeError, match="while the policy was generating"):
        failed_episodes([result], settings.model_copy(update={"on_backend_error": "fail"}))


def test_an_episode_names_each_turn_by_seed_episode_and_turn(
    tiny_model: Path, pack_dir: Path, tmp_path: Path
) -> None:
    from transformers import AutoTokenizer

    from sandmle.specs.training import RolloutSettings
    from sandmle.training.policy_api import PolicySession
    from sandmle.training.rollouts import run_episodes
    from tests.training.conftest import SCRIPT, ScriptedGenerator

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    keys: list[str] = []

    class Recording(ScriptedGenerator):
        async def sample(self, context: list[int], max_new_tokens: int, key: str = ""):
            keys.append(key)
            return await super().sample(context, max_new_tokens, key)

    session = PolicySession(Recording(tokenizer, SCRIPT[1:]), tokenizer, 256, 8192, seed="s-3")
    settings = RolloutSettings(
        pack=str(pack_dir), max_turns=4, limits={"command_timeout": 30, "time_limit": 120}
    )
    run_episodes(["plant-watering"] * 2, session, settings, tmp_path / "logs")
    assert sorted(keys) == [f"s-3/plant-watering#{i}/turn-{t}" for i in (0, 1) for t in (0, 1)]


def test_rollouts_repeat_whatever_the_batching(
    tiny_model: Path, pack_dir: Path, tmp_path: Path
) -> None:
    """Two episodes of one group, run one at a time (every turn alone) and side by side (turns
    batched as they arrive): the same seed gives the same tokens either way."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from sandmle.specs.training import RolloutSettings
    from sandmle.training.generators import TransformersEngine
    from sandmle.training.policy_api import PolicySession
    from sandmle.training.rollouts import run_episodes

    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    records = []
    for parallel in (1, 2):
        engine = TransformersEngine(model, tokenizer)
        generator = BatchingGenerator(engine, window_s=0.5)  # side by side: turns meet
        session = PolicySession(generator, tokenizer, 12, 4096, seed="seed-7/step-0/rank-0")
        settings = RolloutSettings(
            pack=str(pack_dir), max_turns=2, parallel_sandboxes=parallel, limits={"time_limit": 300}
        )
        results = run_episodes(["plant-watering"] * 2, session, settings, tmp_path / str(parallel))
        generator.close()
        records.append([(r.episode.completion_ids, r.episode.logprobs) for r in results])
        assert engine.stats.sampled > 0 and all(r.error is None for r in results)
        print(
            f"parallel {parallel}: {generator.clock.requests} requests, {generator.clock.calls} calls"
        )
    (alone, batched) = records
    for (ids, lps), (other_ids, other_lps) in zip(alone, batched, strict=True):
        assert other_ids == ids
        assert other_lps == pytest.approx(lps, abs=1e-4)
    assert alone[0][0] != alone[1][0]  # the group's two episodes differ


def test_the_buffered_cache_layer_holds_what_cat_growth_holds() -> None:
    """The decode loop's preallocated layer (``_buffered_cache``) returns the same keys/values as
    ``DynamicLayer``'s ``torch.cat`` growth, also when it must grow past its capacity."""
    import torch
    from transformers.cache_utils import DynamicLayer

    from sandmle.training.decoding import _buffer_layer_class

    torch.manual_seed(0)
    keys, values = torch.randn(2, 3, 5, 4), torch.randn(2, 3, 5, 4)
    reference, buffered = DynamicLayer(), _buffer_layer_class()(keys, values, 7)
    reference.update(keys, values)
    for step in range(4):  # 5 + 4 positions: past the capacity of 7 at the third
        new_k, new_v = torch.randn(2, 3, 1, 4), torch.randn(2, 3, 1, 4)
        ref_k, ref_v = reference.update(new_k, new_v)
        got_k, got_v = buffered.update(new_k, new_v)
        assert torch.equal(got_k, ref_k) and torch.equal(got_v, ref_v), step
        assert buffered.get_seq_length() == 6 + step
