"""The Streamlit leaderboard: ``streamlit run app.py -- LOG_DIR ...`` (``sandmle leaderboard``).

Log dirs come from the arguments after ``--``, else ``SANDMLE_LEADERBOARD_DIRS`` (joined by
``os.pathsep``), else ``INSPECT_LOG_DIR``, else ``./logs``; the sidebar can change them.
"""

from __future__ import annotations

import os
import sys
from datetime import date
from pathlib import PurePath

import pandas as pd
import streamlit as st

from sandmle.leaderboard import charts, tables
from sandmle.leaderboard.logs import LoadedLogs, LogCache
from sandmle.leaderboard.transcript import read_sample, score_report, search_tree, transcript

DIRS_ENV = "SANDMLE_LEADERBOARD_DIRS"
TABS = ["Leaderboard", "Generalization", "Benchmarks", "Training", "Sample"]


def default_log_dirs(argv: list[str], environ: dict[str, str]) -> list[str]:
    """Dirs named on the command line, else in the environment, else ``./logs``."""
    if argv:
        return argv
    if environ.get(DIRS_ENV):
        return [d for d in environ[DIRS_ENV].split(os.pathsep) if d]
    return [environ.get("INSPECT_LOG_DIR", "logs")]


@st.cache_resource
def _log_cache() -> LogCache:
    # One cache per server: every rerun and session reads only new or changed logs.
    return LogCache()


def sidebar_dirs() -> list[str]:
    initial = "\n".join(default_log_dirs(sys.argv[1:], dict(os.environ)))
    text = st.sidebar.text_area("Log dirs (one per line)", initial, key="log_dirs")
    return [line.strip() for line in text.splitlines() if line.strip()]


def _dates(samples: pd.DataFrame) -> tuple[pd.Timestamp | None, pd.Timestamp | None]:
    if samples.empty:
        return None, None
    low, high = samples["created"].min().date(), samples["created"].max().date()
    chosen = st.sidebar.date_input("Run dates", (low, high), key="dates")
    picked = [d for d in (chosen if isinstance(chosen, tuple) else (chosen,)) if d]
    if not picked:
        return None, None
    tz = samples["created"].dt.tz

    def stamp(day: date, end: bool) -> pd.Timestamp:
        ts = pd.Timestamp(day, tz=tz)
        return ts + pd.Timedelta(days=1) - pd.Timedelta(microseconds=1) if end else ts

    return stamp(picked[0], False), stamp(picked[-1], True)


def sidebar_filters(samples: pd.DataFrame) -> pd.DataFrame:
    """The samples the sidebar's model, scaffold, benchmark and date filters keep."""
    chosen = {
        column: st.sidebar.multiselect(column.title(), sorted(samples[column].unique()), key=column)
        for column in ("model", "scaffold", "benchmark")
    }
    since, until = _dates(samples)
    return tables.filter_samples(
        samples,
        models=chosen["model"],
        scaffolds=chosen["scaffold"],
        benchmarks=chosen["benchmark"],
        since=since,
        until=until,
    )


def _metric(key: str) -> str:
    return st.selectbox("Metric", tables.METRICS, index=0, format_func=tables.LABELS.get, key=key)


def _column_config() -> dict[str, object]:
    config: dict[str, object] = {}
    for metric in tables.METRICS:
        fmt = "%.1f" if metric in tables.RATES else "%.3f"
        config[metric] = st.column_config.NumberColumn(tables.LABELS[metric], format=fmt)
        config[f"{metric}_stderr"] = st.column_config.NumberColumn("±", format=fmt)
    config["checkpoint_step"] = st.column_config.NumberColumn("step", format="%d")
    return config


def leaderboard_tab(table: pd.DataFrame) -> None:
    st.caption(
        "Rates in % ± standard error, pooled over logs and epochs; n = sample-epochs. "
        "Click a header to sort."
    )
    st.dataframe(table, hide_index=True, column_config=_column_config(), key="table")
    st.download_button(
        "Download CSV", table.to_csv(index=False), "leaderboard.csv", "text/csv", key="csv"
    )
    st.plotly_chart(charts.benchmark_bars(table, "any_medal"), key="overview_bars")


def generalization_tab(table: pd.DataFrame) -> None:
    metric = _metric("gen_metric")
    benchmarks = sorted(table["benchmark"].unique())
    benchmark = st.selectbox("Benchmark", benchmarks, key="gen_benchmark")
    one = table[table["benchmark"] == benchmark]
    st.plotly_chart(charts.scaffold_heatmap(one, metric), key="heatmap")
    st.markdown("**Drop from each model's best scaffold** (percentage points)")
    st.dataframe(tables.generalization_table(one, metric), hide_index=True, key="gen_table")


def benchmarks_tab(table: pd.DataFrame, samples: pd.DataFrame) -> None:
    metric = _metric("bench_metric")
    st.plotly_chart(charts.benchmark_bars(table, metric), key="bars")
    wide = tables.competition_table(samples, metric)
    st.plotly_chart(charts.competition_heatmap(wide, metric), key="competitions")


def training_tab(samples: pd.DataFrame) -> None:
    metric = _metric("train_metric")
    curves = tables.training_curve_table(samples)
    st.plotly_chart(charts.training_curves(curves, metric), key="curves")
    if not curves.empty:
        st.dataframe(curves, hide_index=True, column_config=_column_config(), key="curve_table")


def _sample_label(row: pd.Series) -> str:
    flags = "medal" if row["any_medal"] else ("valid" if row["valid_submission"] else "invalid")
    run = PurePath(row["log"]).stem.rsplit("_", 1)[-1][:8]  # the task id: tells logs apart
    return (
        f"{row['model']} · {row['scaffold']} · {row['competition_id']} · "
        f"epoch {row['epoch']} · {flags} · {run}"
    )


def sample_tab(samples: pd.DataFrame) -> None:
    if samples.empty:
        st.info("No samples match the filters.")
        return
    # Labels as options (not indices) keep the choice stable when the filters change.
    labels = {_sample_label(row): i for i, row in samples.iterrows()}
    chosen = st.selectbox("Sample", list(labels), key="sample")
    row = samples.loc[labels[chosen]]
    sample = read_sample(row["log"], row["sample_id"], int(row["epoch"]))
    st.caption(f"log: {row['log']}")
    with st.expander("Grading report"):
        st.json(score_report(sample))
    nodes = search_tree(sample)
    if nodes:
        st.plotly_chart(charts.search_tree_figure(nodes), key="tree")
    st.markdown(f"**Transcript** ({len(sample.messages)} messages)")
    for view in transcript(sample):
        with st.chat_message(view.role if view.role in ("user", "assistant") else "ai"):
            st.markdown(f"**{view.role}**")
            st.text(view.text or "(no text)")
            for call in view.tool_calls:
                st.code(call, language="json")
            if view.tool_error:
                st.error(view.tool_error)


def render(loaded: LoadedLogs) -> None:
    """Every view of the loaded logs."""
    if loaded.skipped:
        with st.expander(f"⚠ {len(loaded.skipped)} log(s) skipped"):
            for path, reason in loaded.skipped.items():
                st.warning(f"{path}: {reason}")
    samples = sidebar_filters(loaded.samples)
    table = tables.leaderboard_table(samples)
    st.caption(f"{len(loaded.runs)} logs · {len(table)} entries · {len(samples)} sample-epochs")
    views = st.tabs(TABS)
    with views[0]:
        leaderboard_tab(table)
    with views[1]:
        generalization_tab(table)
    with views[2]:
        benchmarks_tab(table, samples)
    with views[3]:
        training_tab(samples)
    with views[4]:
        sample_tab(samples)


def main() -> None:
    st.set_page_config(page_title="sandmle leaderboard", layout="wide")
    st.title("sandmle leaderboard")
    dirs = sidebar_dirs()
    loaded = _log_cache().load(dirs)
    if loaded.runs.empty:
        st.info(f"No sandmle logs found under {', '.join(dirs) or 'no dirs'}.")
    render(loaded)


if __name__ == "__main__":
    main()
