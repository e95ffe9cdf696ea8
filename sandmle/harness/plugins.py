"""Entry-point plugins, so benchmarks can extend the harness without the harness importing them.

Two groups (``[project.entry-points."<group>"]`` in pyproject.toml):
- ``sandmle.graders``: modules whose import registers graders with ``@grader``.
- ``sandmle.competition_sources``: callables ``(folder: Path) -> CompetitionConfig | None`` that
  describe a folder without ``competition.yaml`` (e.g. an MLE-bench prepared competition dir).
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points
from typing import Any

GRADER_PLUGINS = "sandmle.graders"
COMPETITION_SOURCES = "sandmle.competition_sources"


@cache
def load_plugins(group: str) -> tuple[Any, ...]:
    """Load every entry point of ``group`` once; returns the loaded objects."""
    return tuple(ep.load() for ep in entry_points(group=group))
