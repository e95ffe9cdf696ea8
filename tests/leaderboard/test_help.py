"""Help texts read without a terminal: defaults shown, no raw markup."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from sandmle.cli import app


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["demo", "--help"], ["default: logs/demo-<generator", "default: all 12"]),
        (["leaderboard", "--help"], ["'sandmle leaderboard DIR' serves DIR"]),
        (
            ["leaderboard", "serve", "--help"],
            ["default: 8501", "$INSPECT_LOG_DIR", "default: 127.0.0.1"],
        ),
        (["leaderboard", "export", "--help"], ["default: leaderboard.html", "opens offline"]),
    ],
)
def test_help_shows_defaults_without_raw_markup(args: list[str], expected: list[str]) -> None:
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200", "TERM": "dumb"})
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())  # rich wraps; compare words
    for part in expected:
        assert part in text, (part, result.output)
    assert "``" not in text and not re.search(r" \.( |$)", text)  # no RST, no eaten default
