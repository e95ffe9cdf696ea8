"""The generator backends by name (the ``--backend`` value), and what each can write.

``procedural`` plays every role in code; ``llm`` asks an Inspect model to play the
Strategist, Developer and Writer. The llm backend's module is imported when it is first
asked for: it loads Inspect's model layer and the sandbox, which procedural generation and
``synth --help`` do without.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sandmle.benchmarks.synthetic.backend import GeneratorBackend, ProceduralBackend
from sandmle.benchmarks.synthetic.blueprint import StructuralDNA
from sandmle.errors import SandmleError


def _procedural() -> type[ProceduralBackend]:
    return ProceduralBackend


def _llm() -> type[ProceduralBackend]:
    from sandmle.benchmarks.synthetic.llm.backend import LLMBackend  # Inspect's model layer

    return LLMBackend


BACKENDS: dict[str, Callable[[], type[ProceduralBackend]]] = {
    "procedural": _procedural,
    "llm": _llm,
}
"""Each backend's class, loaded on first use."""


def backend_names() -> list[str]:
    return sorted(BACKENDS)


def backend_class(name: str) -> type[ProceduralBackend]:
    """The class registered under ``name``; an unknown name is a one-line user error."""
    if name not in BACKENDS:
        known = ", ".join(backend_names())
        raise SandmleError(f"unknown generator backend {name!r} (known: {known})")
    return BACKENDS[name]()


def get_backend(name: str, **options: Any) -> GeneratorBackend:
    """A new backend; ``options`` go to its constructor (e.g. ``model`` for ``llm``)."""
    return backend_class(name)(**options)


def check_backend_covers(name: str, seeds: list[StructuralDNA]) -> None:
    """Refuse up front a seed the backend cannot write (rather than 8 rejected attempts)."""
    unsupported = backend_class(name).UNSUPPORTED_TASK_TYPES
    for dna in seeds:
        if dna.task_type in unsupported or dna.modality in unsupported:
            raise SandmleError(
                f"the {name} backend does not write {dna.modality} {dna.task_type} tasks "
                f"(seed {dna.seed_task}); pick other --seeds/--modalities or --backend procedural"
            )
