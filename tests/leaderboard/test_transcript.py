"""Drill-down helpers: failure kinds, decoded tool calls, report rows, Inspect View links."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandmle.harness.search_tree import SearchNode
from sandmle.leaderboard import transcript


def _node(**fields: object) -> SearchNode:
    return SearchNode(id=3, operator="draft", step=0, is_bug=True, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "kind"),
    [
        ({"output": "Traceback (most recent call last):\n  ...\nKeyError: 'id'"}, "KeyError"),
        ({"output": "sh: python: not found", "extra": {"exit_code": 127}},
         "exit 127: command not found"),
        ({"output": "", "extra": {"exit_code": 3}}, "exit 3"),
        ({"extra": {"error": {"kind": "timeout", "message": "ran past 600 s"}}},
         "timeout: ran past 600 s"),
        ({"summary": "The reply had no python code block; not run."},
         "The reply had no python code block; not run."),
    ],
)  # fmt: skip
def test_failure_kind_names_the_cause(fields: dict, kind: str) -> None:
    assert transcript.failure_kind(_node(**fields)) == kind


def test_a_good_node_has_no_failure() -> None:
    assert transcript.failure_kind(SearchNode(id=0, operator="draft", step=0, metric=0.5)) is None


def test_tool_calls_decode_to_code() -> None:
    python = transcript.decode_call("python", {"code": "import os\nprint(os.getcwd())"})
    assert (python.body, python.language) == ("import os\nprint(os.getcwd())", "python")
    bash = transcript.decode_call("bash", {"cmd": "ls /home/data"})
    assert (bash.body, bash.language) == ("ls /home/data", "bash")
    other = transcript.decode_call("validate_submission", {"path": "x.csv", "strict": True})
    assert other.language == "json" and '"strict": true' in other.body


def test_report_rows_hide_host_paths() -> None:
    rows = dict(
        transcript.report_rows(
            {"submission_path": "/tmp/tmpab12/grade/submission.csv", "score": 0.5,
             "invalid_reason": "bad column in /tmp/tmpab12/grade/submission.csv", "extra": None}
        )
    )  # fmt: skip
    assert rows == {
        "submission path": "submission.csv",
        "score": "0.5",
        "invalid reason": "bad column in submission.csv",
        "extra": "",
    }


def test_inspect_view_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(transcript.INSPECT_VIEW_ENV, raising=False)
    log = tmp_path / "logs" / "sub" / "2026_task_ab.eval"
    url = transcript.inspect_view_url(str(log), "a b/1", 2, [str(tmp_path / "logs")])
    assert url == ("http://127.0.0.1:7575/#/logs/sub/2026_task_ab.eval/samples/sample/a%20b%2F1/2/")
    monkeypatch.setenv(transcript.INSPECT_VIEW_ENV, "http://host:9000/")
    assert transcript.inspect_view_url(str(log), "7", 1, []).startswith(
        "http://host:9000/#/logs/2026_task_ab.eval/samples/sample/7/1/"
    )
