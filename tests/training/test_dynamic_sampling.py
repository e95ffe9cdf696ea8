"""Dynamic sampling: flat GRPO groups are rolled again on other tasks, own modality first."""

from __future__ import annotations

from contextlib import nullcontext
from itertools import count
from pathlib import Path

import pytest

from sandmle.harness import toolkit_memo
from sandmle.harness.toolkit_memo import ToolkitMemo
from sandmle.training.dynamic_sampling import groups, is_flat, refill_flat_groups
from sandmle.training.policy_api import Episode, EpisodeResult

MODALITIES = {
    "tab-a": "tabular", "tab-b": "tabular", "tab-c": "tabular",
    "img-a": "image", "img-b": "image",
    "txt-a": "text",
}  # fmt: skip


class Pack:
    """Fake episodes: a task listed in ``spread`` alternates valid and invalid, any other task
    is invalid every time; ``calls`` records each round's task ids."""

    def __init__(self, spread: set[str]):
        self.spread, self.calls = spread, []
        self._n = count()

    def results(self, task_ids: list[str]) -> list[EpisodeResult]:
        return [self.result(t) for t in task_ids]

    def result(self, task: str) -> EpisodeResult:
        valid = task in self.spread and next(self._n) % 2 == 0
        return EpisodeResult(task, Episode(), medal={"valid_submission": float(valid)})

    def run(self, task_ids: list[str], round_: int) -> list[EpisodeResult]:
        self.calls.append((round_, list(task_ids)))
        return self.results(task_ids)


def rewards(results: list[EpisodeResult]) -> list[float | None]:
    return [None if r.error else r.medal.get("valid_submission", 0.0) for r in results]


def refill(prompts: list[str], pack: Pack, rounds: int = 2, seed: str = "s"):
    return refill_flat_groups(
        prompts, pack.results(prompts), group_size=2, rounds=rounds, modalities=MODALITIES,
        rewards=rewards, run=pack.run, seed=seed,
    )  # fmt: skip


def test_a_flat_group_is_rolled_again_on_a_task_of_its_modality() -> None:
    pack = Pack(spread={"img-a", "tab-c"})
    out = refill(["tab-a", "tab-a", "img-a", "img-a"], pack)
    assert pack.calls[0][0] == 1 and set(pack.calls[0][1]) <= {"tab-b", "tab-c"}
    assert all(r.task_id.startswith("tab-") for r in out.results[:2])  # its own modality
    assert [r.task_id for r in out.results[2:]] == ["img-a", "img-a"]  # had a spread: kept
    assert out.refilled >= 1 and out.flat == 0 and out.results[0].task_id == "tab-c"
    assert not is_flat(rewards(out.results[:2]))


def test_no_task_comes_twice_and_a_spent_modality_falls_back_to_any() -> None:
    pack = Pack(spread={"txt-a"})
    out = refill(["img-a", "img-a", "img-b", "img-b"], pack, rounds=3)
    ran = [t for _, ids in pack.calls for t in ids[::2]]  # one task per refilled group
    assert len(ran) == len(set(ran)) and set(ran) <= {"tab-a", "tab-b", "tab-c", "txt-a"}
    assert "txt-a" in ran and out.refilled == len(ran)  # 4 tasks left: round 2 reaches it
    assert out.flat == 1  # only one group can take the one task with a spread


def test_rounds_zero_or_split_groups_change_nothing() -> None:
    pack = Pack(spread=set())
    prompts = ["tab-a", "tab-a", "img-a", "img-a"]
    assert refill(prompts, pack, rounds=0).flat == 2 and not pack.calls
    assert groups(["tab-a", "tab-a", "img-a"], 2) is None  # a group split over processes
    assert groups(["tab-a", "img-a", "img-a", "tab-a"], 2) is None
    out = refill_flat_groups(
        ["tab-a", "tab-a", "img-a"], pack.results(["tab-a"] * 3), group_size=2, rounds=3,
        modalities=MODALITIES, rewards=rewards, run=pack.run, seed="s",
    )  # fmt: skip
    assert out.refilled == 0 and not pack.calls


def test_dropped_episodes_are_left_out_of_the_spread() -> None:
    dropped = EpisodeResult("t", Episode(), error="sandbox died")
    valid = EpisodeResult("t", Episode(), medal={"valid_submission": 1.0})
    assert is_flat(rewards([dropped, valid]))  # one scored episode: no spread
    assert not is_flat(rewards([dropped, valid, EpisodeResult("t", Episode())]))


def test_the_seed_decides_the_refills() -> None:
    def picks(seed: str) -> list:
        pack = Pack(spread=set())
        refill(["tab-a", "tab-a", "img-a", "img-a"], pack, rounds=2, seed=seed)
        return pack.calls

    assert picks("one") == picks("one")
    assert len({str(picks(f"seed-{i}")) for i in range(8)}) > 1


@pytest.mark.parametrize("rounds", [0, 2])
def test_trl_trains_on_the_refilled_groups(
    tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rounds: int
) -> None:
    """Through TRL's own scoring: the refilled group's episodes reach the loss with a reward
    spread, the flat group's first round does not, and the rollout logs what it did."""
    pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")
    from sandmle.training import grpo
    from sandmle.training.generators import EngineClock
    from tests.training.conftest import SCRIPT, ScriptedGenerator
    from tests.training.test_grpo import CONFIG

    config = grpo.load_grpo_config(CONFIG, output_dir=str(tmp_path), max_steps=1)
    config.model_name_or_path = str(tiny_model)
    config.rollout = config.rollout.model_copy(update={"refill_flat_groups": rounds})
    pack = Pack(spread={"tab-c"})
    monkeypatch.setattr(grpo, "task_modalities", lambda _settings: MODALITIES)
    monkeypatch.setattr(grpo, "training_rows", lambda _config: ["tab-a", "img-a"])
    memo = ToolkitMemo()
    monkeypatch.setattr(toolkit_memo, "MEMO", memo)

    def run_episodes(ids: list[str], *_a: object) -> list:
        memo.stats.runs += 1  # as shared toolkit runs count: one run, the group's others shared
        memo.stats.shared += len(ids) - 1
        return pack.run(ids, len(pack.calls))

    monkeypatch.setattr(grpo, "run_episodes", run_episodes)
    trainer = grpo.build_trainer(config)
    scripted = ScriptedGenerator(trainer.processing_class, SCRIPT)
    monkeypatch.setattr(
        grpo, "_generation", lambda t, threads: (scripted, EngineClock(), nullcontext())
    )
    n = config.num_generations
    trainer.model.train()  # TRL files its metrics under "train" only while training
    trainer._generate_and_score_completions([{"prompt": "tab-a"} for _ in range(n)])
    metrics = trainer._metrics["train"]
    rounds_run = len(pack.calls)
    assert metrics["rollout/toolkit_runs"][-1] == rounds_run  # this rollout's, not the process's
    assert metrics["rollout/toolkit_shared"][-1] == rounds_run * (n - 1)
    if rounds:
        firsts = [ids[0] for _, ids in pack.calls]  # the draw, then each round's refill
        assert firsts[0] == "tab-a" and firsts[-1] == "tab-c" and len(firsts) <= 3
        assert metrics["frac_reward_zero_std"][-1] == 0.0  # TRL saw the refill's spread
        assert metrics["rollout/refilled_groups"][-1] >= 1
        assert metrics["rollout/flat_groups"][-1] == 0
    else:
        assert [ids[0] for _, ids in pack.calls] == ["tab-a"]
        assert metrics["frac_reward_zero_std"][-1] == 1.0
        assert "rollout/refilled_groups" not in metrics
