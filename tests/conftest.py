"""Shared fixtures: the bundled example competitions, copied per test so tests may break them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "competitions"
SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture
def plant_dir(tmp_path: Path) -> Path:
    """A writable copy of the plant-watering example (ROC-AUC, explicit thresholds)."""
    return Path(shutil.copytree(FIXTURES / "plant-watering", tmp_path / "plant-watering"))


@pytest.fixture
def bike_dir(tmp_path: Path) -> Path:
    """A writable copy of the bike-rentals example (RMSE, thresholds from a leaderboard)."""
    return Path(shutil.copytree(FIXTURES / "bike-rentals", tmp_path / "bike-rentals"))
