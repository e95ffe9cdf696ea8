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


def test_inspect_view_serves_the_common_root_of_several_dirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(transcript.INSPECT_VIEW_ENV, raising=False)
    dirs = [str(tmp_path / "runs" / "a"), str(tmp_path / "runs" / "b")]
    log = tmp_path / "runs" / "b" / "x.eval"
    assert transcript.inspect_view_root(str(log), dirs) == (tmp_path / "runs").resolve()
    url = transcript.inspect_view_url(str(log), "7", 1, dirs)
    assert url == "http://127.0.0.1:7575/#/logs/b/x.eval/samples/sample/7/1/"
    command = transcript.inspect_view_command(transcript.inspect_view_root(str(log), dirs))
    assert command == f"inspect view --log-dir {(tmp_path / 'runs').resolve()}"
    monkeypatch.setenv(transcript.INSPECT_VIEW_ENV, "http://127.0.0.1:7600")
    assert command + " --port 7600" == transcript.inspect_view_command(
        (tmp_path / "runs").resolve()
    )
    # dirs whose only common root is / : each log is served from its own dir
    assert transcript.inspect_view_root("/tmp/x/y.eval", ["/tmp/x", "/srv/z"]) == Path("/tmp/x")


def test_refused_reply_marks_the_line_that_does_not_compile() -> None:
    reply = "Plan: fit.\n\n```python\nimport pandas\ndef broken(:\n    pass\n```\n"
    node = SearchNode(
        id=0, operator="draft", step=0, is_bug=True,
        extra={"calls": [
            {"purpose": "code", "attempt": 1, "error": "does not compile", "reply": reply},
            {"purpose": "code", "attempt": 2, "error": None, "reply": None},
            {"purpose": "review", "attempt": 1, "error": "x", "reply": "ignored"},
        ]},
    )  # fmt: skip
    (refused,) = transcript.refused_replies(node)
    assert refused.code == "import pandas\ndef broken(:\n    pass\n" and refused.line == 2
    marked = transcript.mark_line(refused.code, refused.line).splitlines()
    assert marked[1] == "▶ 2 │ def broken(:" and marked[0] == "  1 │ import pandas"
    assert transcript.reply_code("print(1)") == "print(1)"  # unfenced: all of it


def test_crash_line_skips_library_frames() -> None:
    output = (
        "training...\nTraceback (most recent call last):\n"
        '  File "/home/agent/node_2.py", line 25, in <module>\n    folds = settings["n"]\n'
        "  File \"/usr/lib/python3/dist-packages/x.py\", line 9, in f\nKeyError: 'n'\n"
    )
    trace = transcript.traceback_of(output)
    assert trace is not None and trace.startswith("Traceback") and trace.endswith("KeyError: 'n'")
    assert transcript.crash_line(trace) == 25
    assert transcript.traceback_of("all good") is None


def test_chaos_log_holds_refusals_and_crashes(chaos_log_dir: Path) -> None:
    """The real search the browser tests explain: refused replies kept, a real traceback."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    [info] = list_eval_logs(str(chaos_log_dir))
    [sample] = read_eval_log(info.name).samples or []
    nodes = transcript.search_tree(sample)
    refused = transcript.refused_replies(nodes[0])
    assert nodes[0].code == "" and len(refused) == 3  # every try refused: no code to run
    assert all(r.line is not None and "def broken(:" in r.code for r in refused)
    crashed = nodes[1]
    trace = transcript.traceback_of(crashed.output)
    assert trace is not None and trace.endswith("KeyError: 'n_folds'")
    line = transcript.crash_line(trace)
    assert line is not None and crashed.code.splitlines()[line - 1] == 'folds = settings["n_folds"]'


def test_code_diff_against_the_parent() -> None:
    from sandmle.harness.search_tree import SearchNode

    parent = SearchNode(id=0, operator="draft", step=0, code="a = 1\nprint(a)\n")
    child = SearchNode(id=1, parent=0, operator="improve", step=1, code="a = 2\nprint(a)\n")
    diff = transcript.code_diff(parent, child).splitlines()
    assert diff[:2] == ["--- node 0", "+++ node 1"]
    assert "-a = 1" in diff and "+a = 2" in diff and " print(a)" in diff
    assert transcript.code_diff(parent, parent) == ""
