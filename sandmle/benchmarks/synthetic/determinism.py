"""Same seed, same bytes: digests of a task's files and a regeneration check."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

from sandmle.benchmarks.synthetic.blueprint import Blueprint

BLUEPRINT_FILE = "generation/blueprint.json"


def file_digests(root: Path, under: str = "") -> dict[str, str]:
    """SHA-256 of every file below ``root/under``, keyed by POSIX path relative to ``root``."""
    base = root / under if under else root
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(base.rglob("*"))
        if path.is_file()
    }


def load_blueprint(root: Path) -> Blueprint:
    return Blueprint.model_validate_json((root / BLUEPRINT_FILE).read_text(encoding="utf-8"))


def regenerated_differences(root: Path) -> list[str]:
    """Files that differ when the task is planned and developed again from its entropy."""
    from sandmle.benchmarks.synthetic.backend import ReplayingBackend, get_backend
    from sandmle.benchmarks.synthetic.pipeline import write_prepared
    from sandmle.benchmarks.synthetic.strategist import TaskRequest

    bp = load_blueprint(root)
    backend = get_backend(bp.backend)
    if isinstance(backend, ReplayingBackend):
        return backend.replay_differences(root)
    request = TaskRequest(index=bp.entropy[-2], dna=bp.dna, entropy=bp.entropy)
    differences = [] if backend.strategist(request) == bp else [BLUEPRINT_FILE]
    with tempfile.TemporaryDirectory(prefix="sandmle-synth-") as tmp:
        again = Path(tmp) / bp.task_id
        write_prepared(again, bp, backend.developer(bp), backend)
        expected, actual = file_digests(again, "prepared"), file_digests(root, "prepared")
    differences += sorted(
        p for p in expected.keys() | actual.keys() if expected.get(p) != actual.get(p)
    )
    return differences
