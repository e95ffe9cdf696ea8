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


def test_a_records_last_bits_do_not_reach_its_bytes(tmp_path: Path) -> None:
    """Two CPUs' sums of one score (AVX-512 vs AVX2, seen on library-visits-003's ladder)
    write the same record."""
    from sandmle.benchmarks.synthetic.mlops import Ladder, LadderScore
    from sandmle.benchmarks.synthetic.task_files import write_json

    def record(score: float) -> bytes:
        entry = LadderScore(score=score, sd=0.01, q05=0.02455273408511197, q95=None)
        write_json(
            Ladder(scores={"generic": entry}, is_lower_better=False, sigma=0.1), tmp_path / "l.json"
        )
        return (tmp_path / "l.json").read_bytes()

    assert record(0.19529553927247395) == record(0.19529553927247392)
    assert record(0.19529553927247395) != record(0.1952955392725)  # 12 digits still kept


def test_the_builtin_pack_is_the_same_on_numpys_avx2_path(tmp_path: Path) -> None:
    """numpy picks its SIMD kernels by CPU (X86_V4: AVX-512); with them turned off, as on a CPU
    without AVX-512, the pack regenerates to the same manifest."""
    import json
    import os
    import subprocess
    import sys

    from numpy._core._multiarray_umath import __cpu_features__ as features

    if not features.get("AVX512F"):
        pytest.skip("this CPU has no AVX-512: numpy already runs its AVX2 kernels here")
    code = (
        "from sandmle.benchmarks.synthetic.builtin import builtin_pack_dir, manifest_mismatches;"
        "import json; print(json.dumps(manifest_mismatches(builtin_pack_dir(verify=False))))"
    )
    env = {**os.environ, "SANDMLE_HOME": str(tmp_path), "NPY_DISABLE_CPU_FEATURES": "X86_V4"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.splitlines()[-1]) == []
