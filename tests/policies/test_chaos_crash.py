"""``sandmle/chaos``'s "runs but crashes" mode: code that compiles, starts and dies with a
traceback pointing at its own line (the leaderboard's traceback panel is tested on it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sandmle.policies.automl import automl_code
from sandmle.policies.chaos import CODE_MODES, crashing


def test_crash_mode_compiles_and_dies_at_its_line(tmp_path: Path) -> None:
    assert CODE_MODES["crash"] > 0
    code = crashing(automl_code())
    compile(code, "solution.py", "exec")  # a crash, not a syntax error
    script = tmp_path / "solution.py"
    script.write_text(code)
    run = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert run.returncode == 1 and run.stderr.rstrip().endswith("KeyError: 'n_folds'")
    line = code.splitlines().index('folds = settings["n_folds"]') + 1
    assert f'File "{script}", line {line}, in <module>' in run.stderr
    assert not (tmp_path / "submission").exists()  # it died before any work


def test_crash_line_goes_after_a_multiline_import() -> None:
    code = '"""doc"""\nfrom os import (\n    path,\n    sep,\n)\nprint(path, sep)\n'
    lines = crashing(code).splitlines()
    assert lines[5:7] == ['settings = {"folds": 5, "seed": 0}', 'folds = settings["n_folds"]']
    assert lines[7] == "print(path, sep)"
