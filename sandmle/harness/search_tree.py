"""The documented schema of a tree scaffold's search, as it is kept in a sample's store.

Tree scaffolds (AIDE, AIRA) write every node under ``STORE_KEY`` (a list of
``SearchNode.model_dump()`` dicts, in creation order); the leaderboard draws it from the log.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

from pydantic import BaseModel, Field

STORE_KEY = "sandmle:search_tree"
"""Sample-store key holding the list of node dicts."""

Operator = Literal["draft", "improve", "debug", "crossover"]


class SearchNode(BaseModel):
    """One solution in a scaffold's search tree."""

    id: int
    """Node id, unique within the sample, in creation order."""
    parent: int | None = None
    """Parent node id (None for drafts); crossover nodes name their first parent here."""
    parents: list[int] = Field(default_factory=list)
    """All parents (two for crossover)."""
    operator: Operator
    """The operator that produced the node."""
    step: int
    """Search step at which it was made."""
    plan: str = ""
    """The model's plan, in its words."""
    code: str = ""
    """The complete script that was run."""
    output: str = ""
    """A summary of the run's output (truncated)."""
    metric: float | None = None
    """Validation metric reported by the analysis; None when buggy."""
    lower_is_better: bool | None = None
    """Direction of ``metric``."""
    is_bug: bool = False
    """The run failed, or the analysis judged it buggy."""
    summary: str = ""
    """The analysis' summary of the result."""
    exec_time_s: float | None = None
    """Wall time of the run."""
    created_s: float | None = None
    """Seconds since the search started, when the node was made."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Scaffold-specific fields (e.g. MCTS visits and value, island id)."""


def compile_error(code: str) -> SyntaxError | ValueError | None:
    """Why a node's ``code`` does not compile (ValueError: null bytes), or None when it does.

    A model's garbage makes ``compile`` print SyntaxWarnings ("invalid decimal literal") to the
    host's stderr, into every eval and report log: they are silenced here.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        try:
            compile(code, "<node>", "exec")
        except (SyntaxError, ValueError) as exc:
            return exc
    return None
