"""A small pack generated once per session; tests copy tasks out of it before breaking them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sandmle.benchmarks.synthetic.packs import PackSpec, generate_pack
from sandmle.harness.pack import load_pack

SMALL_SECRET = "small-pack-test-secret"
SMALL_SEEDS = [
    "tabular-playground-series-may-2022",
    "leaf-classification",
    "nomad2018-predict-transparent-conductors",
    "lish-moa",
    "spooky-author-identification",
    "jigsaw-toxic-comment-classification-challenge",
    "aerial-cactus-identification",
    "aptos2019-blindness-detection",
    "denoising-dirty-documents",
    "store-sales-time-series-forecasting",
    "the-icml-2013-whale-challenge-right-whale-redux",
    "h-and-m-personalized-fashion-recommendations",
]


@pytest.fixture(scope="session")
def small_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("packs") / "small"
    spec = PackSpec(
        name="small", n=len(SMALL_SEEDS), seed=11, seed_ids=SMALL_SEEDS, secret=SMALL_SECRET
    )
    generate_pack(spec, out, workers=2, progress=False)
    return out


@pytest.fixture
def task_copy(small_pack: Path, tmp_path: Path):
    """Copy one task of the small pack by seed task id into a writable tmp folder."""

    def copy(seed_task: str = "tabular-playground-series-may-2022") -> Path:
        pack = load_pack(small_pack)
        entry = next(t for t in pack.manifest.tasks if t.seed_task == seed_task)
        return Path(shutil.copytree(small_pack / entry.id, tmp_path / entry.id))

    return copy
