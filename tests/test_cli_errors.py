"""Bad input and missing extras print one line and exit non-zero, under both CLIs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRAIN_EXTRA = ("torch", "trl", "transformers", "accelerate", "datasets", "peft")
WITHOUT_TRAIN_EXTRA = f"""
import sys
for name in {TRAIN_EXTRA!r}:
    sys.modules[name] = None  # as if the train extra were not installed: import fails
from sandmle.cli import main
sys.argv = ["sandmle", "train", "grpo", "--config", "configs/train/tiny-cpu.yaml"]
main()
"""


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_train_without_the_train_extra_is_one_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", WITHOUT_TRAIN_EXTRA],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    [line] = _lines(proc.stderr)
    assert line.startswith("error: ") and "pip install 'sandmle[train]'" in line, line


def test_inspect_eval_with_a_missing_pack_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    proc = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", "sandmle/synthetic", "-T", f"pack={missing}",
         "--model", "mockllm/model", "--log-dir", str(tmp_path / "logs")],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
        # no PYTHONPATH to the checkout: the egg-info an editable install leaves there would
        # shadow the installed dist-info, and Inspect would then not name the task sandmle/…
        env={**os.environ, "COLUMNS": "300"},  # rich wraps at 80
    )  # fmt: skip
    assert proc.returncode != 0
    lines = _lines(proc.stdout + proc.stderr)
    assert len(lines) == 1, proc.stdout + proc.stderr
    [line] = lines
    assert line == f"{missing}: pack folder does not exist", line


def test_a_corrupt_log_is_a_one_line_note(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs/corrupt.eval").write_bytes(b"garbage")
    proc = subprocess.run(
        [sys.executable, "-m", "sandmle.cli", "leaderboard", "export", str(tmp_path / "logs"),
         "-o", str(tmp_path / "r.html")],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
        env={**os.environ, "SANDMLE_LEADERBOARD_CACHE": str(tmp_path / "cache.pkl")},
    )  # fmt: skip
    assert proc.returncode == 2
    note, error = _lines(proc.stderr)
    assert note == (
        f"note: skipped {tmp_path}/logs/corrupt.eval: unreadable log: not a complete .eval "
        "file (cut short, or not a log)"
    )
    assert error.startswith("error: no finished sandmle logs")
