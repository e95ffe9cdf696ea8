"""Shared toolkit runs (``-T toolkit_memo=true``): a toolkit call made first in a fresh sandbox
runs once per process and task; repeats get the same text and the same submission, and
anything that is not exactly such a call runs as it would without the memo."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessageAssistant, ModelOutput, ModelUsage, get_model
from inspect_ai.tool import ToolCall, ToolDef, bash, python

from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.harness import toolkit_memo
from sandmle.harness.task import TaskLimits, default_agent, memo_scope
from sandmle.harness.toolkit_memo import (
    Outcome,
    ToolkitMemo,
    counting,
    files_digest,
    shared_bash,
    toolkit_calls,
)


@pytest.fixture
def memo(monkeypatch: pytest.MonkeyPatch) -> ToolkitMemo:
    """A fresh process memo: another test's runs of the same task would be found in it."""
    fresh = ToolkitMemo()
    monkeypatch.setattr(toolkit_memo, "MEMO", fresh)
    return fresh


def test_only_the_toolkits_own_calls_are_shared():
    calls = toolkit_calls()
    assert "python automl.py table" in calls and "python automl.py images 4" in calls
    for other in ("python automl.py", "python automl.py table 9", "python automl.py table; ls",
                  " python automl.py table", "python automl.py tabular"):  # fmt: skip
        assert other not in calls
    assert memo_scope(TaskLimits(toolkit=True)) is None  # off unless asked for
    assert memo_scope(TaskLimits(toolkit_memo=True)) is None  # and only with the toolkit
    assert memo_scope(TaskLimits(toolkit=True, toolkit_memo=True)) != memo_scope(
        TaskLimits(toolkit=True, toolkit_memo=True, threads=2)
    )


def test_the_task_digest_never_follows_a_packs_links(tmp_path: Path):
    public, outside = tmp_path / "public", tmp_path / "outside.txt"
    public.mkdir()
    (public / "train.csv").write_text("id,y\n1,2\n")
    outside.write_text("host file")
    (public / "link.csv").symlink_to(outside)
    before = files_digest(public)
    outside.write_text("changed host file")  # read through the link, it would change
    assert files_digest(public) == before
    (public / "train.csv").write_text("id,y\n1,3\n")
    assert files_digest(public) != before


def test_the_model_sees_the_same_tools():
    for plain, wrapped in (
        (bash(timeout=60), shared_bash(bash(timeout=60), Path)),
        (python(timeout=60), counting(python(timeout=60))),
    ):
        a, b = ToolDef(plain), ToolDef(wrapped)
        assert (a.name, a.description, a.parallel) == (b.name, b.description, b.parallel)
        assert a.parameters.model_dump() == b.parameters.model_dump()


def test_concurrent_calls_run_once_and_an_unshared_run_is_not_handed_on():
    memo = ToolkitMemo()
    runs: list[str] = []

    def runner(name: str, result: Outcome | None):
        async def run() -> Outcome | None:
            runs.append(name)
            await asyncio.sleep(0.05)
            return result

        return run

    async def main() -> None:
        shared = Outcome("fitted", b"id,y\n1,2\n")
        got = await asyncio.gather(*(memo.get("k", runner(f"r{i}", shared)) for i in range(4)))
        assert got == [shared] * 4 and runs == ["r0"]
        assert await memo.get("k", runner("late", None)) == shared and runs == ["r0"]
        # a first run that is not shared (a timeout, a disturbed sandbox): each waiter runs its own
        runs.clear()
        got = await asyncio.gather(*(memo.get("u", runner(f"u{i}", None)) for i in range(3)))
        assert got == [None] * 3 and sorted(runs) == ["u0", "u1", "u2"]

    asyncio.run(main())
    assert (memo.stats.runs, memo.stats.shared) == (4, 4)


def test_a_failed_first_run_lets_the_waiters_run():
    memo = ToolkitMemo()

    async def fails() -> Outcome | None:
        await asyncio.sleep(0.05)
        raise TimeoutError("command timed out")

    async def works() -> Outcome | None:
        return Outcome("ok", b"x")

    async def main() -> list:
        return await asyncio.gather(memo.get("k", fails), memo.get("k", works),
                                    return_exceptions=True)  # fmt: skip

    failed, waited = asyncio.run(main())
    assert isinstance(failed, TimeoutError) and waited == Outcome("ok", b"x")


def test_least_recently_used_outcomes_leave_first():
    memo = ToolkitMemo(max_bytes=10)

    async def main() -> None:
        for key in ("a", "b", "c"):

            async def run(key: str = key) -> Outcome | None:
                return Outcome(key, b"1234")

            await memo.get(key, run)

    asyncio.run(main())
    assert list(memo._done) == ["b", "c"]


def run_memo(pack: Path, tmp_path: Path, name: str, model, epochs: int, memo: bool = True):
    [log] = inspect_eval(
        synthetic(pack=str(pack), tasks="bike-rentals", toolkit=True, toolkit_memo=memo,
                  epochs=epochs, message_limit=8),
        model=model,
        solver=default_agent(),
        display="none",
        log_dir=str(tmp_path / name),
    )  # fmt: skip
    assert log.status == "success", log.error
    return log.samples or []


def tool_texts(sample) -> list[str]:
    return [m.text for m in sample.messages if m.role == "tool"]


def test_a_groups_repeats_get_the_first_runs_text_and_file(
    pack_dir: Path, tmp_path: Path, memo: ToolkitMemo
):
    teacher = get_model("sandmle/toolkit", option="table")
    samples = run_memo(pack_dir, tmp_path, "memo", teacher, epochs=3)
    assert (memo.stats.runs, memo.stats.shared) == (1, 2)
    scores = [s.scores["medal_scorer"].value for s in samples]
    assert scores[0]["valid_submission"] == 1.0 and scores == [scores[0]] * 3
    texts = [tool_texts(s)[0] for s in samples]
    assert "Validation metric" in texts[0] and texts == [texts[0]] * 3
    # the same call without the memo: the same text and the same grade, run for real
    [plain] = run_memo(pack_dir, tmp_path, "plain", teacher, epochs=1, memo=False)
    assert (memo.stats.runs, memo.stats.shared) == (1, 2)
    assert tool_texts(plain)[0] == texts[0]
    assert plain.scores["medal_scorer"].value == scores[0]


def call(*commands: str) -> ModelOutput:
    tool_calls = [
        ToolCall(id=f"c{i}", function="bash", arguments={"command": c})
        for i, c in enumerate(commands)
    ]
    return ModelOutput.from_message(ChatMessageAssistant(content="", tool_calls=tool_calls))


def script(turns: list[ModelOutput]) -> Any:
    """A mockllm function: the given turns, then a submit."""

    def generate(input: list, tools: list, tool_choice: Any, config: Any) -> ModelOutput:
        turn = sum(isinstance(m, ChatMessageAssistant) for m in input)
        if turn < len(turns):
            output = turns[turn].model_copy(deep=True)
        else:
            output = ModelOutput.for_tool_call("mockllm", "submit", {"answer": "done"})
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # offline
        return output

    return generate


@pytest.mark.parametrize(
    "turns",
    [
        # the sandbox was changed before the toolkit call
        [call("echo id > /home/submission/submission.csv"), call("python automl.py table")],
        # another call ran beside it (bash calls of one message run at once)
        [call("python automl.py table", "echo id > /home/submission/extra.csv")],
    ],
    ids=["not-first", "not-alone"],
)
def test_a_run_in_a_changed_sandbox_is_not_shared(
    pack_dir: Path, tmp_path: Path, memo: ToolkitMemo, turns
):
    model = get_model("mockllm/model", custom_outputs=script(turns))
    [sample] = run_memo(pack_dir, tmp_path, "changed", model, epochs=1)
    assert sample.scores["medal_scorer"].value["valid_submission"] == 1.0  # the call still ran
    # nothing was shared, and nothing kept: a later clean call runs again
    assert memo.stats.shared == 0
    teacher = get_model("sandmle/toolkit", option="table")
    run_memo(pack_dir, tmp_path, "after", teacher, epochs=1)
    assert memo.stats.shared == 0
