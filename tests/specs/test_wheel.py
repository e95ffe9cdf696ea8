"""The shipped configs travel in the wheel: an installed sandmle (no checkout, no ``configs/``
folder on disk) finds its profiles and run files inside the package."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from sandmle.specs.profile import CONFIG_DIR, PROFILE_DIR

ROOT = Path(__file__).resolve().parents[2]


def test_the_configs_are_inside_the_package() -> None:
    assert PROFILE_DIR.is_relative_to(ROOT / "sandmle")
    assert not (ROOT / "configs").exists()  # one home for them: the package


def test_the_wheel_carries_every_shipped_config(tmp_path: Path) -> None:
    # built from a copy: setuptools leaves build/ and an egg-info beside the sources, and an
    # egg-info in the checkout shadows the installed package's entry points
    source = tmp_path / "src"
    shutil.copytree(
        ROOT / "sandmle", source / "sandmle", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path / "dist"), str(source)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    (wheel,) = (tmp_path / "dist").glob("sandmle-*.whl")
    inside = set(zipfile.ZipFile(wheel).namelist())
    shipped = {p.relative_to(ROOT).as_posix() for p in CONFIG_DIR.rglob("*") if p.is_file()}
    assert shipped and shipped <= inside, sorted(shipped - inside)
