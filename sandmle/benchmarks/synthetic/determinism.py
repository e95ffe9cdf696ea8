"""Same seed, same bytes: the sanity gate's regeneration check.

A procedural task is planned and developed again from its recorded entropy and compared
file by file; a backend whose strategist is a model's answer (``ReplayingBackend``) replays
its recorded artifacts instead.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from sandmle.benchmarks.synthetic.backend import ReplayingBackend
from sandmle.benchmarks.synthetic.backends import get_backend
from sandmle.benchmarks.synthetic.blueprint import TaskRequest
from sandmle.benchmarks.synthetic.task_files import (
    BLUEPRINT_FILE,
    file_digests,
    load_blueprint,
    write_prepared,
)


def regenerated_differences(root: Path) -> list[str]:
    """Files that differ when the task is planned and developed again from its entropy."""
    bp = load_blueprint(root)
    backend = get_backend(bp.backend)
    if isinstance(backend, ReplayingBackend):
        return backend.replay_differences(root)
    request = TaskRequest(index=bp.entropy[-2], dna=bp.dna, entropy=bp.entropy, design=bp.design)
    differences = [] if backend.strategist(request) == bp else [BLUEPRINT_FILE]
    with tempfile.TemporaryDirectory(prefix="sandmle-synth-") as tmp:
        again = Path(tmp) / bp.task_id
        write_prepared(again, bp, backend.developer(bp), backend)
        expected, actual = file_digests(again, "prepared"), file_digests(root, "prepared")
    differences += sorted(
        p for p in expected.keys() | actual.keys() if expected.get(p) != actual.get(p)
    )
    return differences
