"""SandMLE's synthetic sandbox generator: four roles, a sanity gate, and packs.

The names below are imported on first use (PEP 562): ``sandmle synth --help`` imports this
package, and must not pay for numpy, pandas and scikit-learn.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sandmle.benchmarks.synthetic.backend import (
        GeneratorBackend,
        ProceduralBackend,
        backend_names,
        generator_backend,
        get_backend,
    )
    from sandmle.benchmarks.synthetic.baselines import BaselineScores
    from sandmle.benchmarks.synthetic.blueprint import (
        GENERATOR_VERSION,
        AdversarialNoise,
        Blueprint,
        MutatedDomain,
        StructuralDNA,
    )
    from sandmle.benchmarks.synthetic.builtin import builtin_pack_dir
    from sandmle.benchmarks.synthetic.developer import DevelopedTask, HiddenRule
    from sandmle.benchmarks.synthetic.llm import LLMBackend
    from sandmle.benchmarks.synthetic.mlops import Milestones
    from sandmle.benchmarks.synthetic.packs import PackSpec, generate_pack
    from sandmle.benchmarks.synthetic.pipeline import TaskOutcome, generate_task
    from sandmle.benchmarks.synthetic.release import import_release
    from sandmle.benchmarks.synthetic.sanity import Failure, check_directory, check_task
    from sandmle.benchmarks.synthetic.seeds import SEEDS, get_seed, select_seeds
    from sandmle.benchmarks.synthetic.strategist import TaskRequest
    from sandmle.benchmarks.synthetic.writer import Description

_HOMES = {
    "backend": ("GeneratorBackend", "ProceduralBackend", "backend_names", "generator_backend",
                "get_backend"),
    "baselines": ("BaselineScores",),
    "blueprint": ("GENERATOR_VERSION", "AdversarialNoise", "Blueprint", "MutatedDomain",
                  "StructuralDNA"),
    "builtin": ("builtin_pack_dir",),
    "developer": ("DevelopedTask", "HiddenRule"),
    "llm": ("LLMBackend",),
    "mlops": ("Milestones",),
    "packs": ("PackSpec", "generate_pack"),
    "pipeline": ("TaskOutcome", "generate_task"),
    "release": ("import_release",),
    "sanity": ("Failure", "check_directory", "check_task"),
    "seeds": ("SEEDS", "get_seed", "select_seeds"),
    "strategist": ("TaskRequest",),
    "writer": ("Description",),
}  # fmt: skip
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "AdversarialNoise",
    "BaselineScores",
    "Blueprint",
    "Description",
    "DevelopedTask",
    "Failure",
    "GENERATOR_VERSION",
    "GeneratorBackend",
    "HiddenRule",
    "LLMBackend",
    "Milestones",
    "MutatedDomain",
    "PackSpec",
    "ProceduralBackend",
    "SEEDS",
    "StructuralDNA",
    "TaskOutcome",
    "TaskRequest",
    "backend_names",
    "builtin_pack_dir",
    "check_directory",
    "check_task",
    "generate_pack",
    "generate_task",
    "generator_backend",
    "get_backend",
    "get_seed",
    "import_release",
    "select_seeds",
]


def __getattr__(name: str) -> Any:
    module = _HOME_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
