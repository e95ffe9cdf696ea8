"""sandmle.leaderboard: Inspect logs as a leaderboard (Streamlit app, Plotly charts, HTML export).

The names below are imported on first use (PEP 562): ``sandmle leaderboard --help`` imports
this package, and must not pay for pandas, Plotly and Inspect's log readers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sandmle.leaderboard.export import export_html, report_html
    from sandmle.leaderboard.logs import (
        LoadedLogs,
        LogCache,
        LogRecord,
        SkippedLogWarning,
        load_logs,
    )
    from sandmle.leaderboard.tables import (
        competition_table,
        filter_samples,
        generalization_table,
        leaderboard_table,
        pairwise_table,
        training_curve_table,
    )
    from sandmle.training.checkpoint_info import CheckpointInfo, checkpoint_info, step_from_name

_HOMES = {
    "checkpoints": ("CheckpointInfo", "checkpoint_info", "step_from_name"),
    "export": ("export_html", "report_html"),
    "logs": ("LoadedLogs", "LogCache", "LogRecord", "SkippedLogWarning", "load_logs"),
    "tables": ("competition_table", "filter_samples", "generalization_table",
               "leaderboard_table", "pairwise_table", "training_curve_table"),
}  # fmt: skip
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "CheckpointInfo",
    "LoadedLogs",
    "LogCache",
    "LogRecord",
    "SkippedLogWarning",
    "checkpoint_info",
    "competition_table",
    "export_html",
    "filter_samples",
    "generalization_table",
    "leaderboard_table",
    "load_logs",
    "pairwise_table",
    "report_html",
    "step_from_name",
    "training_curve_table",
]


def __getattr__(name: str) -> Any:
    if name not in _HOME_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOME_OF[name]}"), name)
