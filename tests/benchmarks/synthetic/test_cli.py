"""``synth generate`` and ``synth check`` exit codes and outputs; ``synth``'s commands load the
generator only when they run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from sandmle.benchmarks.synthetic.cli import synth_app

runner = CliRunner()


def test_generate_then_check(tmp_path: Path):
    out = tmp_path / "pack"
    result = runner.invoke(
        synth_app,
        [
            "generate",
            "--n",
            "2",
            "--seed",
            "4",
            "--out",
            str(out),
            "--modalities",
            "text,time-series",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "wrote 2 task(s)" in result.output
    # no terminal here: plain progress lines, then the distinct tasks and the difficulty
    assert "generating: 2 slot(s)" in result.output
    assert "distinct tasks (rule signature x domain x task type): 2 of 2" in result.output
    assert "time-series" in result.output.split("difficulty (medians)")[1]
    result = runner.invoke(synth_app, ["check", str(out), "--json"])
    assert result.exit_code == 0
    payload = json.loads(result.output)
    assert payload["passed"] is True and len(payload["tasks"]) == 2

    task = next(p for p in out.iterdir() if (p / "competition.yaml").is_file())
    train = pd.read_csv(task / "prepared/public/train.csv")
    train.loc[0, train.columns[0]] = pd.read_csv(task / "prepared/public/test.csv").iloc[0, 0]
    train.to_csv(task / "prepared/public/train.csv", index=False)
    result = runner.invoke(synth_app, ["check", str(out)])
    assert result.exit_code == 1
    assert "ids_disjoint" in result.output


def test_unknown_seed_is_a_one_line_error(tmp_path: Path):
    result = runner.invoke(
        synth_app, ["generate", "--n", "1", "--out", str(tmp_path / "p"), "--seeds", "nope"]
    )
    assert result.exit_code != 0
    assert "unknown seed task 'nope'" in str(result.exception)


def test_secret_file_salts_the_pack_and_a_short_one_is_refused(tmp_path: Path):
    secret = tmp_path / "secret.txt"
    secret.write_text("short\n")
    args = ["generate", "--n", "1", "--modalities", "time-series", "--secret-file", str(secret)]
    result = runner.invoke(synth_app, [*args, "--out", str(tmp_path / "a")])
    assert result.exit_code != 0
    assert "at least 16 characters" in str(result.exception)
    secret.write_text("a-long-enough-pack-secret\n")
    result = runner.invoke(synth_app, [*args, "--out", str(tmp_path / "a")])
    assert result.exit_code == 0, result.output
    saved = (tmp_path / "a" / "generation" / "secret.txt").read_text()
    assert saved == "a-long-enough-pack-secret\n"


def test_the_synth_commands_load_no_generator_until_they_run():
    code = (
        "import sys; from sandmle.benchmarks.synthetic.cli import synth_app; "
        "print(sorted(m for m in ('numpy', 'pandas', 'sklearn', 'scipy') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"
