"""SandMLE's synthetic sandbox generator: four roles, a sanity gate, and packs."""

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

__all__ = [
    "GENERATOR_VERSION",
    "SEEDS",
    "AdversarialNoise",
    "BaselineScores",
    "Blueprint",
    "Description",
    "DevelopedTask",
    "Failure",
    "GeneratorBackend",
    "HiddenRule",
    "LLMBackend",
    "Milestones",
    "MutatedDomain",
    "PackSpec",
    "ProceduralBackend",
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
