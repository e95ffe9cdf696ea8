"""The typed config floor: what users write in YAML, and the episode every consumer runs.

Torch-free and below ``training``, ``leaderboard`` and ``study``, so each reads and writes the
same schemas without importing the others: the episode spec, the run files (GRPO, SFT), the
reproduce profile, the study, the benchmark table and a checkpoint's metadata file. Every user
file is read by one loader (``files.load_file``: ``base:`` chains, one-line errors).
"""

from sandmle.specs.benchmarks import BENCHMARKS, Benchmark, benchmark
from sandmle.specs.episode import EpisodeSpec, message_limit
from sandmle.specs.files import Strict, load_file
from sandmle.specs.training import GRPORunFile, RolloutSettings, SFTRunFile, Teacher

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "EpisodeSpec",
    "GRPORunFile",
    "RolloutSettings",
    "SFTRunFile",
    "Strict",
    "Teacher",
    "benchmark",
    "load_file",
    "message_limit",
]
