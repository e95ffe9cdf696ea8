"""bench/toolkit_calls.py's classifier: what counts as a valid toolkit call when the held-out
proxy reads a sampled first turn (the replies below are of the kinds a tiny SFT model wrote on
held-out prompts, cpu-micro 2026-12-04)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bench import bench_script
from tests.leaderboard.test_choices import write_toolkit_logs

toolkit_calls = bench_script("toolkit_calls")


def call(name: str, arguments: object) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (call("bash", {"command": "python automl.py images"}), "images"),
        (call("bash", {"cmd": " python automl.py table "}), "table"),
        (call("bash", {"command": "python automl.py 4"}), "broken"),  # the old toolkit's call
        (call("bash", {"command": "python automl.py tables"}), "broken"),
        (call("bash", {"command": "python automl.py text; rm -rf ."}), "broken"),
        (call("python", {"code": "python automl.py text"}), "broken"),
        (call("bash", {"command": "python automl.py text"}) * 2, "broken"),
        (
            '<tool_call>{"name": "bash", "bash", "arguments": "python automl.py text"}}</tool_call>',
            "broken",
        ),  # fmt: skip
        ('The toolkit wrote the submission.py 2"}}</tool_call>', "no_call"),
        (call("submit", {"answer": "done"}), "broken"),
    ],
)
def test_a_turn_is_an_option_only_when_it_is_exactly_the_toolkit_call(text: str, kind: str) -> None:
    assert toolkit_calls.classify(text) == kind


def test_shuffled_task_text_keeps_its_words_layout_and_other_turns():
    import random

    system = "<|im_start|>system\nYou are an agent.<|im_end|>\n"
    task = "Predict the price of each house.\nScored by  RMSE on the test set."
    prompt = f"{system}<|im_start|>user\n{task}<|im_end|>\n<|im_start|>assistant\n"
    out = toolkit_calls.shuffle_task_text(prompt, random.Random(3))
    assert out.startswith(system) and out.endswith("<|im_end|>\n<|im_start|>assistant\n")
    shuffled = out[
        len(system) + len("<|im_start|>user\n") : -len("<|im_end|>\n<|im_start|>assistant\n")
    ]
    assert shuffled != task and sorted(shuffled.split()) == sorted(task.split())
    assert [len(s) for s in shuffled.split(" ") if not s] == [
        len(s) for s in task.split(" ") if not s
    ]
    assert shuffled.count("\n") == task.count("\n")
    with pytest.raises(ValueError, match="no ChatML user turn"):
        toolkit_calls.shuffle_task_text("plain text", random.Random(0))


def test_mix_difference_tells_a_changed_mix_from_the_same_one():
    # 10 prompts, 4 samples each: table on half of them turns into text
    before = [["table", "table", "text", "text"]] * 10
    after = [["text", "text", "text", "text"]] * 10
    moved = toolkit_calls.mix_difference(before, after, rounds=2000)
    assert moved["tv_distance"] == 0.5 and moved["p"] < 0.01
    same = toolkit_calls.mix_difference(
        before, [["text", "table", "text", "table"]] * 10, rounds=2000
    )
    assert same == {"tv_distance": 0.0, "p": 1.0}


def test_family_shift_ignores_calls_that_only_broke():
    # shuffling breaks half the calls but the rest keep the same family mix: the full mix
    # moves, the families do not
    before = [["table", "images", "table", "images"]] * 10
    broke = [["table", "broken", "no_call", "images"]] * 10
    assert toolkit_calls.mix_difference(before, broke, rounds=2000)["p"] < 0.01
    shift = toolkit_calls.family_shift(before, broke)
    assert shift["calls"] == {"task": 40, "shuffled": 20}
    assert shift["tv_distance"] == 0.0 and shift["p"] == 1.0
    # a policy that reads the task calls images on image prompts, table once the words are noise
    read = toolkit_calls.family_shift(before, [["table", "broken", "table", "table"]] * 10)
    assert read["tv_distance"] == 0.5 and read["p"] < 0.01
    # every shuffled call broke: nothing to compare
    none = toolkit_calls.family_shift(before, [["broken"] * 4] * 10)
    assert none == {"calls": {"task": 0, "shuffled": 0}, "tv_distance": None, "p": None}


def test_log_mix_reads_each_models_first_turns_by_modality(tmp_path: Path) -> None:
    """--logs: real Inspect logs, two epochs; a sample with no modality is left out, and so
    are a replica's samples (another Inspect task) and another scaffold's log unless every
    scaffold is asked for; a corrupt log is named as skipped, not a crash."""
    write_toolkit_logs(tmp_path)
    (tmp_path / "2026-01-01T00-00-00+00-00_broken_abc.eval").write_bytes(b"not a zip")
    result = toolkit_calls.from_logs(tmp_path, "react", seed=0)
    assert list(result["skipped"]) == ["2026-01-01T00-00-00+00-00_broken_abc.eval"]
    report = result["models"]
    assert list(report) == ["mockllm/react-run"]
    mix = report["mockllm/react-run"]
    assert mix["all"]["n"] == 6 and mix["all"]["valid_call"] == round(2 / 6, 3)
    assert (mix["image"]["images"], mix["text"]["broken"], mix["text"]["no_call"]) == (2, 2, 2)
    assert mix["by_modality"]["tv_from_overall"] > 0
    assert set(toolkit_calls.from_logs(tmp_path, None, seed=0)["models"]) == {
        "mockllm/react-run", "mockllm/aide-run"}  # fmt: skip
    replicas = toolkit_calls.from_logs(tmp_path, "react", seed=0, task="mle_bench_lite")
    assert replicas["models"]["mockllm/react-run"]["all"]["n"] == 2
