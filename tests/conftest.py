"""Shared fixtures: the bundled example competitions, copied per test so tests may break them,
and where the committed reference data lives (see ``tests/fixtures/README.md``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "competitions"
LEADERBOARDS = Path(__file__).parent / "fixtures" / "leaderboards"
"""Real Kaggle leaderboards (MLE-Dojo's copies): ``<competition>/{private,public}_leaderboard.csv``."""
MLEBENCH = Path(__file__).parent / "fixtures" / "mlebench"
"""MLE-bench facts: ``lite-competitions.csv``, ``splits/<name>.txt``, the spec's medal table."""


EXAMPLES = ("plant-watering", "bike-rentals")
"""The two example competitions that make the tests' tiny pack."""


def copy_pack(root: Path) -> Path:
    """The example competitions copied into ``root``, as a pack (a folder of competitions)."""
    for name in EXAMPLES:
        shutil.copytree(FIXTURES / name, root / name)
    return root


@pytest.fixture
def pack_dir(tmp_path: Path) -> Path:
    """A writable pack of the two example competitions."""
    return copy_pack(tmp_path / "pack")


@pytest.fixture
def plant_dir(tmp_path: Path) -> Path:
    """A writable copy of the plant-watering example (ROC-AUC, explicit thresholds)."""
    return Path(shutil.copytree(FIXTURES / "plant-watering", tmp_path / "plant-watering"))


@pytest.fixture
def bike_dir(tmp_path: Path) -> Path:
    """A writable copy of the bike-rentals example (RMSE, thresholds from a leaderboard)."""
    return Path(shutil.copytree(FIXTURES / "bike-rentals", tmp_path / "bike-rentals"))
