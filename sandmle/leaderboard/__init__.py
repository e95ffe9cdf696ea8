"""sandmle.leaderboard: Inspect logs as a leaderboard (Streamlit app, Plotly charts, HTML export)."""

from sandmle.leaderboard.checkpoints import CheckpointInfo, checkpoint_info, step_from_name
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
    training_curve_table,
)

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
    "report_html",
    "step_from_name",
    "training_curve_table",
]
