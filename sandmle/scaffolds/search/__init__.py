"""Shared machinery of the tree-search scaffolds: the journal, model I/O, the runner, the step."""

from sandmle.scaffolds.search.engine import Budget, ModelSettings, Prompter, Search, start_search
from sandmle.scaffolds.search.journal import Journal
from sandmle.scaffolds.search.responses import Proposal, Review, parse_proposal, parse_review
from sandmle.scaffolds.search.runner import RunResult, publish, run_script

__all__ = [
    "Budget",
    "Journal",
    "ModelSettings",
    "Prompter",
    "Proposal",
    "Review",
    "RunResult",
    "Search",
    "parse_proposal",
    "parse_review",
    "publish",
    "run_script",
    "start_search",
]
