"""Tests of the bench/ scripts, which are files rather than a package."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench"


def bench_script(name: str, path: Path | None = None) -> ModuleType:
    """The module of ``bench/<name>.py`` (or of ``path``), loaded from its file."""
    spec = importlib.util.spec_from_file_location(name, path or BENCH / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_bench(name: str, *args: str, cwd: Path) -> str:
    """Run ``bench/<name>.py`` with ``args`` as a user would; its stdout (it must exit 0)."""
    command = [sys.executable, str(BENCH / f"{name}.py"), *args]
    return subprocess.run(command, capture_output=True, text=True, check=True, cwd=cwd).stdout
