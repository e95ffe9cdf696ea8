"""The generator's backend registry: the llm backend is found although its module loads lazily,
and a seed a backend cannot write is refused before any attempt."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from sandmle.benchmarks.synthetic.backends import backend_names, get_backend
from sandmle.benchmarks.synthetic.cli import synth_app
from sandmle.benchmarks.synthetic.packs import PackSpec, generate_pack
from sandmle.errors import SandmleError


def test_llm_backend_is_known_before_its_module_is_imported():
    assert {"llm", "procedural"} <= set(backend_names())
    assert get_backend("llm", model="mockllm/model").name == "llm"


@pytest.mark.parametrize(
    "seed", ["mlsp-2013-birds", "h-and-m-personalized-fashion-recommendations",
             "denoising-dirty-documents", "text-normalization-challenge-english-language"],
)  # fmt: skip
def test_llm_backend_refuses_task_types_it_cannot_write(seed: str, tmp_path: Path):
    spec = PackSpec(n=1, seed=1, seed_ids=[seed], backend="llm", model="mockllm/model")
    with pytest.raises(SandmleError, match=f"does not write .* tasks \\(seed {seed}\\)"):
        generate_pack(spec, tmp_path / "pack", progress=False)
    assert not any((tmp_path / "pack").glob("*/competition.yaml"))


def test_cli_accepts_the_llm_backend(tmp_path: Path):
    args = ["generate", "--out", str(tmp_path / "p"), "--n", "1", "--backend", "llm",
            "--model", "mockllm/model", "--seeds", "mlsp-2013-birds"]  # fmt: skip
    result = CliRunner().invoke(synth_app, args)
    assert result.exit_code != 0
    assert "unknown backend" not in str(result.exception)
    assert "does not write audio" in str(result.exception)
