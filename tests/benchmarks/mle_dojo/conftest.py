"""The micro replicas in MLE-Dojo's layout, and views kept under the test's tmp dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandmle.benchmarks.mle_bench import thresholds
from sandmle.benchmarks.mle_dojo.competitions import VIEWS_ENV
from sandmle.benchmarks.mle_dojo.replicas import DOJO_SUBDIR, build_replicas_with_dojo

DOJO_IDS = [
    "aerial-cactus-identification",
    "dogs-vs-cats-redux-kernels-edition",
    "new-york-city-taxi-fare-prediction",
    "text-normalization-challenge-english-language",
]
"""Replicas graded by MLE-Dojo's own rules (the default grader)."""
SPOOKY = "spooky-author-identification"
"""Built too: MLE-Dojo's own metric cannot score it, so it needs ``grader=mle-bench``."""


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(VIEWS_ENV, str(tmp_path / "views"))
    monkeypatch.setattr(thresholds, "_package_dir", lambda: None)


@pytest.fixture(scope="module")
def dojo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("replicas")
    build_replicas_with_dojo(out, [*DOJO_IDS, SPOOKY, "siim-isic-melanoma-classification"])
    return out / DOJO_SUBDIR
