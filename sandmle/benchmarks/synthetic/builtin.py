"""The built-in demo pack: 12 tasks from a fixed seed and a public secret, generated on demand.

It is never shipped as data and never written inside the installed package (an agent's
sandbox may see site-packages; private answers must not be there). The package carries
only the SHA-256 of every file (``builtin_pack_sha256.txt``), checked after generating.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from sandmle.benchmarks.synthetic.blueprint import GENERATOR_VERSION
from sandmle.benchmarks.synthetic.packs import PackSpec, regenerate_into
from sandmle.benchmarks.synthetic.secret import DEMO_SECRET
from sandmle.benchmarks.synthetic.task_files import file_digests
from sandmle.errors import SandmleError

BUILTIN_SEEDS = [
    "tabular-playground-series-may-2022",  # tabular binary
    "leaf-classification",  # tabular multiclass
    "new-york-city-taxi-fare-prediction",  # tabular regression
    "h-and-m-personalized-fashion-recommendations",  # tabular ranking (MAP@12)
    "detecting-insults-in-social-commentary",  # text binary
    "spooky-author-identification",  # text multiclass
    "jigsaw-toxic-comment-classification-challenge",  # text multi-label
    "aerial-cactus-identification",  # image binary
    "plant-pathology-2020-fgvc7",  # image multiclass
    "aptos2019-blindness-detection",  # image ordinal
    "the-icml-2013-whale-challenge-right-whale-redux",  # audio binary
    "store-sales-time-series-forecasting",  # time-series forecasting
]
# A demo pack: its secret is public (in code) so anyone can regenerate it byte for byte, which
# also means its answers are not hidden from a determined agent. Hidden packs use a secret.
BUILTIN_SPEC = PackSpec(
    name="sandmle-builtin", n=12, seed=20250101, seed_ids=BUILTIN_SEEDS, secret=DEMO_SECRET
)
MANIFEST_PATH = Path(__file__).with_name("builtin_pack_sha256.txt")


def cache_root() -> Path:
    """``$SANDMLE_HOME/packs``, else ``~/.cache/sandmle/packs``."""
    home = os.environ.get("SANDMLE_HOME")
    return (Path(home) if home else Path.home() / ".cache" / "sandmle") / "packs"


def builtin_pack_dir(verify: bool = True) -> Path:
    """The built-in pack's folder; generated on first use, then checked against the manifest."""
    root = cache_root() / f"builtin-{GENERATOR_VERSION}"
    if not (root / "pack.yaml").is_file():
        root.parent.mkdir(parents=True, exist_ok=True)
        regenerate_into(BUILTIN_SPEC, root)
    if verify:
        mismatched = manifest_mismatches(root)
        if mismatched:
            raise SandmleError(
                f"{root}: {len(mismatched)} file(s) differ from the built-in manifest, e.g. "
                f"{mismatched[0]} (delete the folder to regenerate; library versions may differ)"
            )
    return root


def read_manifest() -> dict[str, str]:
    lines = MANIFEST_PATH.read_text(encoding="utf-8").splitlines()
    return {
        path: digest for digest, path in (line.split("  ", 1) for line in lines if line.strip())
    }


def entry_digests(root: Path) -> dict[str, str]:
    """One SHA-256 per top-level entry (a task folder or pack.yaml), over its files' digests.

    Keeps the committed manifest to a line per task while still pinning every byte.
    """
    grouped: dict[str, list[str]] = {}
    for path, digest in file_digests(root).items():
        grouped.setdefault(path.split("/", 1)[0], []).append(f"{digest}  {path}\n")
    return {
        entry: hashlib.sha256("".join(lines).encode()).hexdigest()
        for entry, lines in sorted(grouped.items())
    }


def format_manifest(root: Path) -> str:
    """``sha256sum``-like lines, sorted by entry."""
    return "".join(f"{digest}  {entry}\n" for entry, digest in entry_digests(root).items())


def manifest_mismatches(root: Path) -> list[str]:
    expected, actual = read_manifest(), entry_digests(root)
    return sorted(p for p in expected.keys() | actual.keys() if expected.get(p) != actual.get(p))
