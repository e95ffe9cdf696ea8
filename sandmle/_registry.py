"""Inspect AI entry point: importing this module registers sandmle's tasks, solvers,
sandboxes and model APIs (named in ``[project.entry-points.inspect_ai]``)."""

# ruff: noqa: F401 - imported for their registration side effects
from sandmle.benchmarks.mle_bench.cross_check import cross_checked_medal_scorer
from sandmle.benchmarks.mle_bench.task import mle_bench, mle_bench_lite
from sandmle.benchmarks.mle_dojo.solver import dojo
from sandmle.benchmarks.mle_dojo.task import mle_dojo
from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.harness.sandbox.bwrap import BwrapSandboxEnvironment
from sandmle.harness.scorer import medal_scorer
from sandmle.harness.solvers import copy_sample_submission
from sandmle.policies.provider import SandmlePolicyAPI
from sandmle.scaffolds import aide, aira_evo, aira_greedy, aira_mcts, react
