"""The built-in pack regenerates byte for byte and lives outside the package."""

from __future__ import annotations

from pathlib import Path

import pytest

import sandmle
from sandmle.benchmarks.synthetic.blueprint import MODALITIES
from sandmle.benchmarks.synthetic.builtin import (
    builtin_pack_dir,
    manifest_mismatches,
    read_manifest,
)
from sandmle.errors import SandmleError
from sandmle.harness.pack import load_pack


def test_builtin_pack_matches_committed_manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SANDMLE_HOME", str(tmp_path))
    root = builtin_pack_dir()
    assert root.is_relative_to(tmp_path)
    assert not root.is_relative_to(Path(sandmle.__file__).parent)
    assert manifest_mismatches(root) == []
    pack = load_pack(root)
    assert len(pack) == 12
    assert {c.config.modality for c in pack.competitions} == set(MODALITIES)
    assert set(read_manifest()) == {t.id for t in pack.manifest.tasks} | {"pack.yaml", "generation"}

    (root / pack.manifest.tasks[0].id / "prepared/public/train.csv").write_text("tampered\n")
    with pytest.raises(SandmleError, match="differ from the built-in manifest"):
        builtin_pack_dir()
