"""The AutoML program: its parts (``sandbox_scripts/automl/``) joined into the one file the
policies hand in (``policies/automl.py``), which behaves as the parts do as modules."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sandmle.harness.competition import load_competition
from sandmle.policies.automl import (
    PARTS,
    PROGRAM_DIR,
    automl_code,
    code_level,
    join_parts,
    read_part,
    script_source,
)

ROOT = Path(__file__).resolve().parents[2]


def test_every_part_is_joined_and_only_parts() -> None:
    modules = {p.stem for p in PROGRAM_DIR.glob("*.py")} - {"__init__"}
    assert set(PARTS) == modules and len(PARTS) == len(modules)
    assert PARTS[0] == "settings" and PARTS[-1] == "main"  # the docstring; the entry point


def test_the_program_is_one_file_holding_every_part() -> None:
    program = script_source()
    tree = ast.parse(program)
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level]
    parts = [read_part(n, (PROGRAM_DIR / f"{n}.py").read_text(encoding="utf-8")) for n in PARTS]
    assert read_part("program", program).defines == set().union(*(p.defines for p in parts))
    assert all(part.body in program for part in parts)
    assert program.count("\nLEVEL = ") == 1 and program.count("\nSAFE = ") == 1
    assert code_level(automl_code(4)) == 4
    assert program.rstrip().endswith('if __name__ == "__main__":\n    main()')


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff not installed")
def test_the_program_lints_as_its_parts_do() -> None:
    """The joiner's own output: its merged import block sorted as ruff sorts, the blank
    lines between parts right. (Each part is linted, and type-checked, as a module.)"""
    for command in (["check"], ["format", "--check"]):
        result = subprocess.run(
            ["ruff", *command, "--stdin-filename", "automl_program.py", "-"],
            input=script_source(), capture_output=True, text=True, cwd=ROOT,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr


def _run(argv: list[str], data: Path, out: Path) -> tuple[str, bytes]:
    env = dict(os.environ, SANDMLE_DATA_DIR=str(data), SANDMLE_SUBMISSION_DIR=str(out))
    result = subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=300, cwd=out.parent
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.replace(str(out), "<out>"), (out / "submission.csv").read_bytes()


@pytest.mark.parametrize("name", ["plant_dir", "bike_dir"])
def test_the_program_does_what_its_parts_do_as_modules(
    name: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    data = load_competition(request.getfixturevalue(name)).public_dir
    script = tmp_path / "solution.py"
    script.write_text(automl_code(level=2))  # the parts' own LEVEL
    joined = _run([sys.executable, str(script)], data, tmp_path / "joined")
    module = "from sandmle.sandbox_scripts.automl.main import main; main()"
    parts = _run([sys.executable, "-c", module], data, tmp_path / "parts")
    assert joined == parts
    assert "Validation metric: " in joined[0]


SETTINGS = '"""The program."""\n\nimport os\n\nLEVEL = 1\n'
USER = '"""A part."""\n\nfrom .settings import LEVEL\n\n\ndef level():\n    return LEVEL\n'


def test_join_parts_merges_imports_and_drops_the_parts_own() -> None:
    program = join_parts({"settings": SETTINGS, "user": USER})
    assert program == (
        '"""The program."""\n\nimport os\n\nLEVEL = 1\n\n\ndef level():\n    return LEVEL\n'
    )


@pytest.mark.parametrize(
    ("user", "message"),
    [
        ('"""A part."""\n\nLEVEL = 2\n', "'LEVEL' is defined in both settings and user"),
        ('"""A part."""\n\nx = 1\nimport re\n', "user.py imports at line 4, after its body"),
        ('"""A part."""\n\nfrom .settings import SAFE\n', "imports ['SAFE'] from settings.py"),
        ('"""A part."""\n\nfrom .other import SAFE\n', "imports .other, which is not a part"),
        ('"""A part."""\n\nfrom .. import SCRIPTS_DIR\n', "imports .., which is not a part"),
        ('"""A part."""\n\nfrom .settings import LEVEL as L\n', "renames a name it imports"),
        ('"""A part."""\n\nfrom os import LEVEL\n', "imports 'LEVEL', which settings.py defines"),
        ('"""A part."""\n\nimport sys as os\n', "binds 'os' to sys, elsewhere to os"),
    ],
)
def test_join_parts_refuses_what_one_file_would_run_differently(user: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        join_parts({"settings": SETTINGS, "user": user})
