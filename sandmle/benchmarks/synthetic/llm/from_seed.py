"""A pack from a seed's own description: the llm backend reads its DNA, then the pack is
generated from that DNA alone (``synth generate --backend llm --seed-description PATH``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from sandmle.benchmarks.synthetic.blueprint import StructuralDNA
from sandmle.benchmarks.synthetic.llm.backend import LLMBackend, RoleRejected
from sandmle.benchmarks.synthetic.llm.seed_dna import SeedMaterial, read_seed
from sandmle.benchmarks.synthetic.packs import PackSpec, generate_pack
from sandmle.benchmarks.synthetic.pipeline import TaskOutcome
from sandmle.errors import SandmleError

if TYPE_CHECKING:
    from inspect_ai.model import Model


def extract_dna(backend: LLMBackend, material: SeedMaterial) -> StructuralDNA:
    """Ask the backend's model; an answer rejected twice is a one-line user error."""
    try:
        return backend.seed_dna(material)
    except RoleRejected as exc:
        raise SandmleError(f"{material.name}: seed structure not extracted: {exc}") from None


def generate_from_seed(
    spec: PackSpec,
    seed_path: Path,
    out: Path,
    model: str | Model | None = None,
    progress: bool = True,
    max_tokens: int | None = None,
) -> tuple[StructuralDNA, list[TaskOutcome]]:
    """Extract the seed's DNA with the llm backend, then generate the pack from it alone."""
    if spec.backend != "llm":
        raise SandmleError("--seed-description needs --backend llm (the model reads the seed)")
    if spec.seed_ids or spec.modalities:
        raise SandmleError("--seed-description replaces --seeds and --modalities")
    material = read_seed(seed_path)
    out = Path(out)
    if out.exists() and any(out.iterdir()):  # before the model is asked anything
        raise SandmleError(f"{out}: output folder is not empty")
    model = model if model is not None else spec.model
    dna = extract_dna(LLMBackend(model=model, max_tokens=max_tokens), material)
    # one conversation at a time keeps provider rate limits simple
    outcomes = generate_pack(
        spec, out, workers=1, progress=progress, dna=dna, model=model, max_tokens=max_tokens
    )
    return dna, outcomes
