"""A tiny pack for the reference-policy tests: the two example competitions."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES


@pytest.fixture
def pack_dir(tmp_path: Path) -> Path:
    """A pack of the two example competitions (plant-watering, bike-rentals)."""
    root = tmp_path / "pack"
    for name in ("plant-watering", "bike-rentals"):
        shutil.copytree(FIXTURES / name, root / name)
    return root
