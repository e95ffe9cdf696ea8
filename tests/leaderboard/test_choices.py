"""Which toolkit option each model calls, by modality, read from real Inspect logs; the
reproduce report's table of it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageAssistant
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolCall

from sandmle.leaderboard.choices import (
    choice_table,
    log_kinds,
    mix_text,
    modality_dependence,
    summarise,
)
from sandmle.leaderboard.reproduce_view import choice_frame, log_dirs
from sandmle.study.reproduce_report import report_html
from tests.leaderboard.conftest import open_app


def test_the_summary_counts_every_kind() -> None:
    summary = summarise(["audio", "audio", "text", "broken", "no_call"])
    assert summary["n"] == 5 and summary["valid_call"] == 0.6
    assert (summary["audio"], summary["text"], summary["table"], summary["broken"]) == (2, 1, 0, 1)
    assert mix_text(summary) == "audio 2 · broken 1 · no_call 1 · text 1"


def test_modality_dependence_tells_a_policy_that_reads_the_task_from_one_that_does_not() -> None:
    modalities = ["image"] * 8 + ["tabular"] * 8
    reads = [["images", "images", "table"]] * 8 + [["table", "table", "table"]] * 8
    moved = modality_dependence(reads, modalities, rounds=2000)
    assert moved["tv_from_overall"] > 0.3 and moved["p"] < 0.01
    blind = [["images", "table", "table"]] * 16  # the same mix whatever the task
    same = modality_dependence(blind, modalities, rounds=2000)
    assert same["tv_from_overall"] == 0.0 and same["p"] == 1.0


def _replies(name: str) -> Solver:
    """A solver named ``name`` whose first turn is the sample's ``call`` metadata (or none)."""

    @solver(name=name)
    def replies() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            command = state.metadata.get("call")
            calls = [ToolCall(id="c", function="bash", arguments={"command": command})]
            state.messages.append(
                ChatMessageAssistant(content="", tool_calls=calls if command else None)
            )
            return state

        return solve

    return replies()


@scorer(metrics=[], name="medal_scorer")
def graded() -> Scorer:
    """Scores under the grader's name, so the leaderboard loads these logs as sandmle's."""

    async def score(state: TaskState, target: Target) -> Score:
        called = bool(state.metadata.get("call"))
        flags = {"valid_submission": float(called), "above_median": 0.0, "any_medal": 0.0}
        return Score(value=flags, metadata={"competition_id": str(state.sample_id)})

    return score


def write_toolkit_logs(folder: Path) -> None:
    """Real Inspect logs, two epochs each: a pack (``synthetic``) and a replica under react and
    aide. The pack: an image task called right, a text task called wrong, a text task with no
    call, a task with no modality."""
    pack = [
        Sample(
            id="img", input="i", metadata={"modality": "image", "call": "python automl.py images"}
        ),
        Sample(
            id="txt", input="t", metadata={"modality": "text", "call": "python automl.py tables"}
        ),
        Sample(id="txt2", input="u", metadata={"modality": "text"}),
        Sample(id="nomod", input="r", metadata={"call": "python automl.py table"}),
    ]
    replica = [
        Sample(
            id="r1", input="r", metadata={"modality": "tabular", "call": "python automl.py table"}
        )
    ]
    for model, name in (
        ("mockllm/react-run", "react_replies"),
        ("mockllm/aide-run", "aide_replies"),
    ):
        for task, samples in (("synthetic", pack), ("mle_bench_lite", replica)):
            [log] = inspect_eval(Task(dataset=samples, solver=_replies(name), scorer=graded(),
                                      name=task),
                                 model=model, epochs=2, log_dir=str(folder), display="none")  # fmt: skip
            assert log.status == "success", log.error


def test_log_kinds_keeps_one_inspect_task_and_one_scaffold(tmp_path: Path) -> None:
    write_toolkit_logs(tmp_path)
    [(kinds, modalities)] = log_kinds(tmp_path, "react").values()
    assert modalities == ["image", "text", "text"]  # by sample id; no replica, no "nomod"
    assert kinds == [["images", "images"], ["broken", "broken"], ["no_call", "no_call"]]
    assert log_kinds(tmp_path, "react", task="mle_bench_lite")["mockllm/react-run"][0] == [
        ["table", "table"]
    ]


def test_choice_table_names_roles_and_tests_on_the_overall_row(tmp_path: Path) -> None:
    write_toolkit_logs(tmp_path)
    roles = {"mockllm/aide-run": "SFT", "mockllm/react-run": "GRPO", "mockllm/other": "base"}
    table = choice_table(tmp_path, roles, "react", task="synthetic")
    assert list(table["role"].unique()) == ["GRPO"]  # aide's log is another scaffold's
    assert list(table["modality"]) == ["all", "image", "text"]
    first = table.iloc[0]
    assert (first["calls"], first["call ok %"]) == (6, 33.3)
    assert first["mix"] == "broken 2 · images 2 · no_call 2"
    assert first["tv"] > 0 and 0 < first["p"] <= 1
    assert table.iloc[1:][["tv", "p"]].isna().all().all()


def manifest(toolkit: bool | None) -> dict:
    out = {
        "profile": "x",
        "roles": {
            "SFT": "mockllm/aide-run",
            "GRPO": "mockllm/react-run",
            "fixed: table": "sandmle/toolkit/table",
        },  # fmt: skip
        "trained_scaffold": "react",
        "benchmarks": {"synthetic": "heldout", "mle-bench-lite": "replicas"},
    }
    return out if toolkit is None else {**out, "toolkit": toolkit}


def test_the_reproduce_report_shows_the_calls_of_toolkit_profiles(tmp_path: Path) -> None:
    write_toolkit_logs(tmp_path / "eval")
    choices = choice_frame(tmp_path, manifest(True))
    assert list(choices["role"].unique()) == ["GRPO"] and choices.iloc[0]["calls"] == 6
    # a manifest from before the "toolkit" key: its fixed-option roles say it
    assert choice_frame(tmp_path, manifest(None)).equals(choices)
    assert choice_frame(tmp_path, manifest(False)).empty
    (tmp_path / "reproduce.json").write_text(json.dumps(manifest(True)))
    empty = pd.DataFrame()
    page = report_html(manifest(True), pd.DataFrame(columns=["bench", "role", "solver", "n"]),
                       empty, empty, pd.DataFrame(columns=["run", "step", "metric", "value"]),
                       choices=choices)  # fmt: skip
    assert "First toolkit call by modality" in page and "broken 2 · images 2" in page


def test_the_base_models_calls_come_from_its_own_log_dir(tmp_path: Path) -> None:
    """With ``eval.base_cells: trained`` the base model's held-out logs are in ``eval-base``;
    the report's call table reads them beside ``eval``'s (the fixed options' are not roles)."""
    (tmp_path / "eval").mkdir()
    write_toolkit_logs(tmp_path / "eval-base")
    roles = {"base": "mockllm/react-run", "SFT": "mockllm/other"}
    choices = choice_frame(tmp_path, {**manifest(True), "roles": roles})
    assert list(choices["role"].unique()) == ["base"] and choices.iloc[0]["calls"] == 6
    assert log_dirs(tmp_path) == [tmp_path / "eval", tmp_path / "eval-base"]


def test_the_apps_reproduce_tab_shows_the_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_toolkit_logs(tmp_path / "eval")
    (tmp_path / "reproduce.json").write_text(json.dumps(manifest(True)))
    app = open_app(monkeypatch, tmp_path / "eval", view="Reproduce")
    frames = [d.value for d in app.dataframe]
    calls = next(f for f in frames if "mix" in f.columns)
    assert list(calls["modality"]) == ["all", "image", "text"] and set(calls["role"]) == {"GRPO"}


def test_a_packs_modality_prints_as_text_not_markup() -> None:
    import io

    from rich.console import Console

    from sandmle.study.reproduce_report import choices_rich

    row = ["GRPO", "[bold red]x[/bold red]", 2, 50.0, "table 1", 0.1, 0.5]
    frame = pd.DataFrame(
        [row], columns=["role", "modality", "calls", "call ok %", "mix", "tv", "p"]
    )
    sink = io.StringIO()
    Console(file=sink, width=120).print(choices_rich(frame, "react"))
    assert "[bold red]x[/bold red]" in sink.getvalue()


def test_the_calls_table_keeps_each_option_with_its_count_at_80_columns() -> None:
    import io

    from rich.console import Console

    from sandmle.study.reproduce_report import choices_rich

    mix = "table 10 · text 5 · images 3 · audio 2 · series 1 · broken 9"
    row = ["GRPO-sparse", "time-series", 40, 77.5, mix, 0.45, 0.0014]
    frame = pd.DataFrame(
        [row], columns=["role", "modality", "calls", "call ok %", "mix", "tv", "p"]
    )
    sink = io.StringIO()
    Console(file=sink, width=80).print(choices_rich(frame, "react"))
    lines = sink.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    for item in mix.split(" · "):  # each option and its count on one line
        assert any(item in line for line in lines), item
