"""Micro replicas of the 22 MLE-bench-lite competitions, in MLE-bench's exact prepared layout.

``sandmle synth replicas --out DIR`` writes ``DIR/<id>/prepared/{public,private}`` for every
lite competition: the real file names, columns, id formats, zips, image/text/audio folders and
submission shape, with a few dozen rows of synthetic data, plus a ``public/description.md``
written for sandmle (task, metric, submission, files). Every replica matches the committed
manifest of what ``mlebench prepare`` writes (:mod:`.manifest`). ``DIR`` then works
as ``-T data_dir=DIR`` for ``sandmle/mle_bench_lite``, offline. MLE-Dojo's layout (``--dojo``)
is built from these replicas by :mod:`sandmle.benchmarks.mle_dojo.replicas`, which imports
this module (never the other way round).

Replicas are generated, never committed: the same seed gives the same bytes.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from sandmle.benchmarks.mle_bench.competitions import get_competition, lite_competitions
from sandmle.benchmarks.mle_bench.replicas import audio, images, tables, text
from sandmle.benchmarks.mle_bench.replicas.descriptions import replica_description
from sandmle.benchmarks.mle_bench.replicas.dev import DEV_BUILDERS, dev_description
from sandmle.benchmarks.mle_bench.replicas.files import ReplicaDir, replica_dir
from sandmle.errors import SandmleError

Builder = Callable[[ReplicaDir], None]
MARKER = ".sandmle-replica"
"""Written into each replica folder; only folders carrying it are ever overwritten."""

BUILDERS: dict[str, Builder] = {
    "aerial-cactus-identification": images.aerial_cactus,
    "aptos2019-blindness-detection": images.aptos,
    "denoising-dirty-documents": images.denoising,
    "detecting-insults-in-social-commentary": text.detecting_insults,
    "dog-breed-identification": images.dog_breed,
    "dogs-vs-cats-redux-kernels-edition": images.dogs_vs_cats,
    "histopathologic-cancer-detection": images.histopathologic,
    "jigsaw-toxic-comment-classification-challenge": text.jigsaw,
    "leaf-classification": tables.leaf,
    "mlsp-2013-birds": audio.mlsp_birds,
    "new-york-city-taxi-fare-prediction": tables.nyc_taxi,
    "nomad2018-predict-transparent-conductors": tables.nomad,
    "plant-pathology-2020-fgvc7": images.plant_pathology,
    "random-acts-of-pizza": text.random_acts_of_pizza,
    "ranzcr-clip-catheter-line-classification": images.ranzcr,
    "siim-isic-melanoma-classification": images.siim_isic,
    "spooky-author-identification": text.spooky,
    "tabular-playground-series-dec-2021": tables.tps_dec_2021,
    "tabular-playground-series-may-2022": tables.tps_may_2022,
    "text-normalization-challenge-english-language": text.text_normalization("en"),
    "text-normalization-challenge-russian-language": text.text_normalization("ru"),
    "the-icml-2013-whale-challenge-right-whale-redux": audio.right_whale,
}


def clear_replica(folder: Path) -> None:
    """Remove an earlier replica; refuse to touch a folder that is not one (real data)."""
    if not folder.exists():
        return
    if not (folder / MARKER).is_file():
        raise SandmleError(
            f"{folder} exists and is not a sandmle replica (no {MARKER}); "
            "choose an empty --out folder, never a real MLE-bench data dir"
        )
    shutil.rmtree(folder)


def build_replica(out: Path, competition_id: str, seed: int = 0) -> Path:
    """Write one competition's replica to ``out/<id>``; returns that folder."""
    replica = replica_dir(out, competition_id, seed)
    clear_replica(replica.root)
    if competition_id in DEV_BUILDERS:
        DEV_BUILDERS[competition_id](replica)
        text = dev_description(competition_id)
    else:
        BUILDERS[competition_id](replica)
        text = replica_description(get_competition(competition_id), replica.public)
    (replica.public / "description.md").write_text(text, encoding="utf-8")
    (replica.root / MARKER).write_text(f"seed={seed}\n", encoding="utf-8")
    return replica.root


def build_replicas(out: Path, competitions: list[str] | None = None, seed: int = 0) -> list[Path]:
    """Write the replicas of ``competitions`` (all 22 lite ones by default; the seven ``dev``
    ones too when named)."""
    ids = competitions or list(lite_competitions())
    unknown = [c for c in ids if c not in BUILDERS and c not in DEV_BUILDERS]
    if unknown:
        raise SandmleError(f"no micro replica for {', '.join(unknown)}")
    out.mkdir(parents=True, exist_ok=True)
    return [build_replica(out, cid, seed) for cid in ids]
