"""The task toolkit (``-T toolkit=true``) and its mixed-quality teacher ``sandmle/toolkit``."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig
from inspect_ai.tool import ToolInfo, ToolParams

from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.errors import SandmleError
from sandmle.harness.automl_program import script_source, toolkit_source
from sandmle.harness.competition import load_competition
from sandmle.harness.grading.report import grade_csv
from sandmle.harness.task import default_agent
from sandmle.policies.toolkit import OPTIONS, parse_options, toolkit_command, toolkit_policy
from tests.conftest import FIXTURES

BASH = ToolInfo(name="bash", description="Run bash.", parameters=ToolParams())


def first_command(policy, prompt: str) -> str:
    messages = [ChatMessageSystem(content="system"), ChatMessageUser(content=prompt)]
    output = policy(messages, [BASH], GenerateConfig())
    [tool_call] = output.message.tool_calls
    return str(next(iter(tool_call.arguments.values())))


def test_each_option_once_per_prompt_in_len_options_episodes():
    policy = toolkit_policy()
    for prompt in ("task A", "task B", "task C"):
        commands = [first_command(policy, prompt) for _ in OPTIONS]
        assert sorted(commands) == sorted(toolkit_command(option) for option in OPTIONS)
    # the offset differs between prompts, so one prompt's first episode is not always `table`
    firsts = Counter(first_command(toolkit_policy(), f"task {i}") for i in range(40))
    assert len(firsts) > 1


def test_options_narrow_or_fix_the_mix():
    assert parse_options() == OPTIONS == ("table", "text", "images", "audio", "series")
    assert parse_options("text,images") == ("text", "images")
    assert parse_options(option="audio") == ("audio",)
    assert {first_command(toolkit_policy(option="series"), f"t{i}") for i in range(5)} == {
        toolkit_command("series")
    }
    for bad in ("4", "x", "", "table,tables"):
        with pytest.raises(SandmleError, match="options must be among table, text"):
            parse_options(bad)
    with pytest.raises(SandmleError, match="no option 'tabular'"):
        toolkit_command("tabular")


def run_program(
    public: Path, out: Path, *argv: str, toolkit: bool = True
) -> subprocess.CompletedProcess:
    program = out / "automl.py"
    program.write_text(toolkit_source() if toolkit else script_source(), encoding="utf-8")
    env = {"SANDMLE_DATA_DIR": str(public), "SANDMLE_SUBMISSION_DIR": str(out / "submission")}
    return subprocess.run(
        [sys.executable, str(program), *argv],
        env={**env, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_program_takes_its_family_and_level_from_the_command_line(tmp_path: Path):
    competition = load_competition(FIXTURES / "bike-rentals")
    for bad in ([], ["7"], ["tabular"], ["table", "9"], ["table", "3", "x"]):
        done = run_program(competition.public_dir, tmp_path, *bad)
        assert done.returncode != 0 and "usage: python automl.py FAMILY [LEVEL]" in done.stderr
    assert not (tmp_path / "submission" / "submission.csv").exists()
    scores = {}
    for argv, level in ((["table", "0"], "0"), (["table"], "3")):  # 3: the toolkit's default
        done = run_program(competition.public_dir, tmp_path, *argv)
        assert done.returncode == 0, done.stderr
        assert f"(level {level})" in done.stdout
        report = grade_csv(tmp_path / "submission" / "submission.csv", competition)
        assert report.valid_submission
        scores[level] = report.score
    assert scores["0"] != scores["3"]  # the argument picked the model, not the file's default


def test_only_the_toolkit_copy_refuses_a_call_without_a_family(tmp_path: Path):
    """Bare, the toolkit's copy would run the whole baseline on every input family: one call
    as good as reading the task (SmolLM2's GRPO learnt it, 2026-12-05)."""
    competition = load_competition(FIXTURES / "bike-rentals")
    done = run_program(competition.public_dir, tmp_path, toolkit=True)
    assert done.returncode != 0 and "usage: python automl.py FAMILY" in done.stderr
    assert not (tmp_path / "submission" / "submission.csv").exists()
    done = run_program(competition.public_dir, tmp_path, toolkit=False)  # the baseline
    assert done.returncode == 0, done.stderr
    assert grade_csv(tmp_path / "submission" / "submission.csv", competition).valid_submission


def test_a_family_the_task_lacks_fails_and_says_what_it_has(tmp_path: Path):
    """bike-rentals is a table of numbers and categories: no text, images or audio."""
    competition = load_competition(FIXTURES / "bike-rentals")
    for family, kind in (("text", "text"), ("images", "image"), ("audio", "audio")):
        done = run_program(competition.public_dir, tmp_path, family)
        assert done.returncode != 0
        assert f"automl.py {family}: this task has no {kind} inputs (found: " in done.stderr
        assert "numeric" in done.stderr
        assert not (tmp_path / "submission" / "submission.csv").exists()


def run_toolkit(pack: Path, tmp_path: Path, toolkit: bool):
    [log] = inspect_eval(
        synthetic(pack=str(pack), tasks="bike-rentals", toolkit=toolkit),
        model="sandmle/toolkit",
        model_args={"option": "table"},
        solver=default_agent(),
        display="none",
        log_dir=str(tmp_path / f"logs-{toolkit}"),
    )
    assert log.status == "success", log.error
    [sample] = log.samples or []
    return sample


def test_toolkit_ships_the_program_and_names_it(pack_dir: Path, tmp_path: Path):
    sample = run_toolkit(pack_dir, tmp_path, toolkit=True)
    assert "`python automl.py FAMILY`" in str(sample.input)
    assert sample.scores["medal_scorer"].value["valid_submission"] == 1.0
    # without the argument the prompt does not name it and the sandbox does not hold it
    plain = run_toolkit(pack_dir, tmp_path, toolkit=False)
    assert "automl.py" not in str(plain.input)
    assert plain.scores["medal_scorer"].value["valid_submission"] == 0.0
    outputs = [m.text for m in plain.messages if m.role == "tool"]
    assert any("No such file" in text for text in outputs), outputs
