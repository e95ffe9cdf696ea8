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
from sandmle.harness.automl_program import script_source
from sandmle.harness.competition import load_competition
from sandmle.harness.grading.report import grade_csv
from sandmle.harness.task import default_agent
from sandmle.policies.toolkit import LEVELS, parse_levels, toolkit_command, toolkit_policy
from tests.conftest import FIXTURES

BASH = ToolInfo(name="bash", description="Run bash.", parameters=ToolParams())


def first_command(policy, prompt: str) -> str:
    messages = [ChatMessageSystem(content="system"), ChatMessageUser(content=prompt)]
    output = policy(messages, [BASH], GenerateConfig())
    [tool_call] = output.message.tool_calls
    return str(next(iter(tool_call.arguments.values())))


def test_each_level_once_per_prompt_in_len_levels_episodes():
    policy = toolkit_policy()
    for prompt in ("task A", "task B", "task C"):
        commands = [first_command(policy, prompt) for _ in LEVELS]
        assert sorted(commands) == sorted(toolkit_command(level) for level in LEVELS)
    # the offset differs between prompts, so one prompt's first episode is not always level 0
    firsts = Counter(first_command(toolkit_policy(), f"task {i}") for i in range(40))
    assert len(firsts) > 1


def test_levels_narrow_or_fix_the_mix():
    assert parse_levels() == LEVELS
    assert parse_levels("3,4") == (3, 4)
    assert parse_levels(level=4) == (4,)
    assert {first_command(toolkit_policy(level=2), f"t{i}") for i in range(5)} == {
        toolkit_command(2)
    }
    for bad in ("5", "x", ""):
        with pytest.raises(SandmleError, match="levels must be integers"):
            parse_levels(bad)


def run_program(public: Path, out: Path, *argv: str) -> subprocess.CompletedProcess:
    program = out / "automl.py"
    program.write_text(script_source(), encoding="utf-8")
    env = {"SANDMLE_DATA_DIR": str(public), "SANDMLE_SUBMISSION_DIR": str(out / "submission")}
    return subprocess.run(
        [sys.executable, str(program), *argv],
        env={**env, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_program_takes_its_level_from_the_command_line(tmp_path: Path):
    competition = load_competition(FIXTURES / "bike-rentals")
    bad = run_program(competition.public_dir, tmp_path, "7")
    assert bad.returncode != 0 and "usage: python automl.py [LEVEL]" in bad.stderr
    assert not (tmp_path / "submission" / "submission.csv").exists()
    scores = {}
    for level in ("0", "3"):
        done = run_program(competition.public_dir, tmp_path, level)
        assert done.returncode == 0, done.stderr
        assert f"(level {level})" in done.stdout
        report = grade_csv(tmp_path / "submission" / "submission.csv", competition)
        assert report.valid_submission
        scores[level] = report.score
    assert scores["0"] != scores["3"]  # the argument picked the model, not the file's default


def run_toolkit(pack: Path, tmp_path: Path, toolkit: bool):
    [log] = inspect_eval(
        synthetic(pack=str(pack), tasks="bike-rentals", toolkit=toolkit),
        model="sandmle/toolkit",
        model_args={"level": 1},
        solver=default_agent(),
        display="none",
        log_dir=str(tmp_path / f"logs-{toolkit}"),
    )
    assert log.status == "success", log.error
    [sample] = log.samples or []
    return sample


def test_toolkit_ships_the_program_and_names_it(pack_dir: Path, tmp_path: Path):
    sample = run_toolkit(pack_dir, tmp_path, toolkit=True)
    assert "`python automl.py LEVEL`" in str(sample.input)
    assert sample.scores["medal_scorer"].value["valid_submission"] == 1.0
    # without the argument the prompt does not name it and the sandbox does not hold it
    plain = run_toolkit(pack_dir, tmp_path, toolkit=False)
    assert "automl.py" not in str(plain.input)
    assert plain.scores["medal_scorer"].value["valid_submission"] == 0.0
    outputs = [m.text for m in plain.messages if m.role == "tool"]
    assert any("No such file" in text for text in outputs), outputs
