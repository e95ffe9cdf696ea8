from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sandmle import __version__
from sandmle.cli import app

from .conftest import FIXTURES, LEADERBOARDS

runner = CliRunner()
ROOT = Path(__file__).parents[1]


def _sandmle(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sandmle.cli", *args], capture_output=True, text=True, cwd=ROOT
    )


def test_version_and_help() -> None:
    assert runner.invoke(app, ["--version"]).output.strip() == f"sandmle {__version__}"
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0 and "grade" in result.output and "thresholds" in result.output


def test_grade_prints_full_report() -> None:
    comp = FIXTURES / "plant-watering"
    result = runner.invoke(
        app, ["grade", str(comp / "prepared/public/sample_submission.csv"), "-c", str(comp)]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["competition_id"] == "plant-watering"
    assert report["valid_submission"] is True and report["score"] == 0.5


def test_grade_invalid_submission_still_exits_zero(tmp_path: Path) -> None:
    bad = tmp_path / "submission.csv"
    bad.write_text("nope\n1\n")
    result = runner.invoke(app, ["grade", str(bad), "-c", str(FIXTURES / "plant-watering")])
    assert result.exit_code == 0
    assert json.loads(result.output)["valid_submission"] is False


def test_grade_reports_human_rank_where_boards_exist() -> None:
    comp = FIXTURES / "bike-rentals"
    result = runner.invoke(
        app, ["grade", str(comp / "prepared/public/sample_submission.csv"), "-c", str(comp)]
    )
    assert 0.0 <= json.loads(result.output)["human_rank"] <= 1.0


def test_broken_competition_is_one_line_exit_2(tmp_path: Path) -> None:
    (tmp_path / "competition.yaml").write_text("id: [\n")
    proc = _sandmle("grade", "x.csv", "--competition", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr


def test_thresholds_on_fixture_board() -> None:
    result = runner.invoke(app, ["thresholds", str(FIXTURES / "bike-rentals/leaderboard.csv")])
    data = json.loads(result.output)
    assert set(data) == {
        "gold_threshold",
        "silver_threshold",
        "bronze_threshold",
        "median_threshold",
        "is_lower_better",
        "teams",
    }
    # 120 teams: gold at row 10, silver at row 24, bronze at row 48 of the file
    assert data["teams"] == 120 and data["is_lower_better"] is True
    import pandas as pd

    scores = pd.read_csv(FIXTURES / "bike-rentals/leaderboard.csv")["score"]
    assert data["gold_threshold"] == scores[9] and data["silver_threshold"] == scores[23]
    assert data["bronze_threshold"] == scores[47]


def test_thresholds_on_real_board() -> None:
    """The values are the grading spec's (§2 medal-threshold illustration, tests/spec_tables.py)."""
    board = LEADERBOARDS / "aptos2019-blindness-detection/private_leaderboard.csv"
    data = json.loads(runner.invoke(app, ["thresholds", str(board)]).output)
    assert data["teams"] == 2928 and data["is_lower_better"] is False
    assert (data["gold_threshold"], data["silver_threshold"], data["bronze_threshold"]) == (
        0.930508,
        0.919654,
        0.914492,
    )


def test_thresholds_bad_input_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "board.csv"
    bad.write_text("rank,points\n1,3\n")
    proc = _sandmle("thresholds", str(bad))
    assert proc.returncode == 2 and proc.stderr.startswith("error: ")


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci/run").read_text()
    command = ci.strip().splitlines()[-1]
    assert command in readme, f"README does not show CI's test command {command!r}"


def test_eval_runs_and_resumes(plant_dir: Path, tmp_path: Path) -> None:
    args = [
        "eval",
        "synthetic",
        "-T",
        f"pack={plant_dir}",
        "--model",
        "mockllm/model",
        "--solver",
        "copy_sample_submission",
        "--log-dir",
        str(tmp_path / "logs"),
    ]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    logs = sorted((tmp_path / "logs").glob("*.eval"))
    assert len(logs) == 1
    again = runner.invoke(app, args)  # eval_set: the finished run is reused, not repeated
    assert again.exit_code == 0
    assert sorted((tmp_path / "logs").glob("*.eval")) == logs


def test_eval_rejects_bad_flag() -> None:
    proc = _sandmle("eval", "synthetic", "--model", "mockllm/model", "-T", "nonsense")
    assert proc.returncode == 2 and "expects key=value" in proc.stderr


def test_build_image_without_engine_is_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    env = {**os.environ, "DOCKER_HOST": "unix:///nonexistent/docker.sock"}
    proc = subprocess.run(
        [sys.executable, "-m", "sandmle.cli", "sandbox", "build-image"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1


def _one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ")
    return last


def _eval_args(plant_dir: Path, log_dir: Path, model: str, solver: str) -> list[str]:
    return ["eval", "synthetic", "-T", f"pack={plant_dir}", "--model", model,
            "--solver", solver, "--log-dir", str(log_dir)]  # fmt: skip


def test_unknown_solver_and_model_are_one_line_errors(plant_dir: Path, tmp_path: Path) -> None:
    solver = _sandmle(*_eval_args(plant_dir, tmp_path / "a", "mockllm/model", "no_such_solver"))
    assert "no_such_solver" in _one_line_error(solver)
    model = _sandmle(*_eval_args(plant_dir, tmp_path / "b", "nope/model", "copy_sample_submission"))
    assert "nope" in _one_line_error(model)
    assert not list((tmp_path / "a").glob("*.eval")) and not list((tmp_path / "b").glob("*.eval"))


def test_eval_into_a_log_dir_of_other_evals_refuses(plant_dir: Path, tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    first = runner.invoke(
        app, _eval_args(plant_dir, log_dir, "mockllm/model", "copy_sample_submission")
    )
    assert first.exit_code == 0, first.output
    logs = sorted(log_dir.glob("*.eval"))
    other = _sandmle(*_eval_args(plant_dir, log_dir, "mockllm/other", "copy_sample_submission"))
    assert "holds logs of other evals" in _one_line_error(other)
    assert sorted(log_dir.glob("*.eval")) == logs  # nothing written, nothing lost


def test_leaderboard_missing_dirs_are_one_line_errors(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope")
    assert "does not exist" in _one_line_error(_sandmle("leaderboard", "export", missing))
    assert "does not exist" in _one_line_error(_sandmle("leaderboard", missing))
    (tmp_path / "empty").mkdir()
    empty = _sandmle(
        "leaderboard", "export", str(tmp_path / "empty"), "-o", str(tmp_path / "r.html")
    )
    assert "no finished sandmle logs" in _one_line_error(empty)


def test_every_command_has_help() -> None:
    commands = [[], ["eval"], ["demo"], ["study"], ["grade"], ["thresholds"], ["leaderboard"],
                ["leaderboard", "export"], ["train"], ["synth"], ["sandbox"]]  # fmt: skip
    for command in commands:
        result = runner.invoke(app, [*command, "--help"])
        assert result.exit_code == 0, (command, result.output)
        assert "Usage" in result.output
