"""bench/toolkit_calls.py's classifier: what counts as a valid toolkit call when the held-out
proxy reads a sampled first turn (the replies below are of the kinds a tiny SFT model wrote on
held-out prompts, cpu-micro 2026-12-04)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("toolkit_calls", ROOT / "bench" / "toolkit_calls.py")
assert spec and spec.loader
toolkit_calls = importlib.util.module_from_spec(spec)
spec.loader.exec_module(toolkit_calls)


def call(name: str, arguments: object) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (call("bash", {"command": "python automl.py 4"}), "4"),
        (call("bash", {"cmd": " python automl.py 0 "}), "0"),
        (call("bash", {"command": "python automl.py 7"}), "broken"),
        (call("bash", {"command": "python automl.py 2; rm -rf ."}), "broken"),
        (call("python", {"code": "python automl.py 2"}), "broken"),
        (call("bash", {"command": "python automl.py 2"}) * 2, "broken"),
        (
            '<tool_call>{"name": "bash", "bash", "arguments": "python automl.py 2"}}</tool_call>',
            "broken",
        ),  # fmt: skip
        ('The toolkit wrote the submission.py 2"}}</tool_call>', "no_call"),
        (call("submit", {"answer": "done"}), "broken"),
    ],
)
def test_a_turn_is_a_level_only_when_it_is_exactly_the_toolkit_call(text: str, kind: str) -> None:
    assert toolkit_calls.classify(text) == kind


def test_the_summary_counts_every_kind() -> None:
    summary = toolkit_calls.summarise(["4", "4", "2", "broken", "no_call"])
    assert summary["n"] == 5 and summary["valid_call"] == 0.6
    assert (summary["4"], summary["2"], summary["0"], summary["broken"]) == (2, 1, 0, 1)
