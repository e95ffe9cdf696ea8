"""The Streamlit leaderboard: ``streamlit run app.py -- LOG_DIR ...`` (``sandmle leaderboard``).

Log dirs come from the arguments after ``--``, else ``SANDMLE_LEADERBOARD_DIRS`` (joined by
``os.pathsep``), else ``INSPECT_LOG_DIR``, else ``./logs``; the sidebar can change them, but only
to folders under the served roots (``serving.ROOTS_ENV``, else those first dirs). Off loopback,
nothing shows until the visitor gives the token (``?token=``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from datetime import date
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from sandmle.harness import exposure
from sandmle.leaderboard import charts, serving, tables
from sandmle.leaderboard.drilldown import samples_tab
from sandmle.leaderboard.logs import LoadedLogs, LogCache, pool_runs
from sandmle.leaderboard.memo import memo
from sandmle.leaderboard.plain import md_escape

if TYPE_CHECKING:
    from streamlit.elements.lib.column_types import ColumnConfig

DIRS_ENV = "SANDMLE_LEADERBOARD_DIRS"
TABS = ["Leaderboard", "Models", "Generalization", "Benchmarks", "Training", "Reproduce",
        "Samples"]  # fmt: skip


def default_log_dirs(argv: list[str], environ: dict[str, str]) -> list[str]:
    """Dirs named on the command line, else in the environment, else ``./logs``."""
    if argv:
        return argv
    if environ.get(DIRS_ENV):
        return [d for d in environ[DIRS_ENV].split(os.pathsep) if d]
    return [environ.get("INSPECT_LOG_DIR", "logs")]


@st.cache_resource
def _log_cache() -> LogCache:
    # One cache per server, kept on disk: reruns, sessions and restarts read only new logs.
    return LogCache.persistent()


def sidebar_dirs() -> list[str]:
    """The log dirs in the sidebar's box that lie under the served roots (the rest refused)."""
    defaults = default_log_dirs(sys.argv[1:], dict(os.environ))
    roots = serving.served_roots(dict(os.environ)) or defaults
    text = st.sidebar.text_area("Log dirs (one per line)", "\n".join(defaults), key="log_dirs")
    wanted = [line.strip() for line in text.splitlines() if line.strip()]
    kept, refused = serving.confine(wanted, roots)
    for entry in refused:
        st.sidebar.error(md_escape(f"not opened (outside the served folders): {entry}"))
    return kept


def token_given() -> bool:
    """Whether this session may see the logs: loopback, or the right ``?token=`` once."""
    expected = os.environ.get(serving.TOKEN_ENV)
    if st.session_state.get("_token_ok") or not expected:
        return True
    given = st.query_params.get(serving.TOKEN_PARAM)
    if exposure.token_ok(given, expected):
        st.session_state["_token_ok"] = True
        return True
    st.error("This leaderboard asks for its token: open the address printed by the server.")
    return False


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


RUN_HELP = (
    "Each run (one eval or eval_set invocation, or a run:NAME tag) is its own entrant; "
    "pool them to merge the runs of one model × scaffold."
)


def _run_label(started: pd.Series) -> Callable[[str], str]:
    """A run's name with its start (to the minute): two runs of one day told apart."""
    return lambda run: f"{run} · {started[run]:%Y-%m-%d %H:%M}" if run in started else run


def sidebar_filters(samples: pd.DataFrame) -> tuple[pd.DataFrame, tuple]:
    """The samples the sidebar's pooling, model, scaffold, benchmark, run and date filters
    keep, and the filters (a key for the tables computed from them)."""
    pool = st.sidebar.toggle("Pool runs", key="pool", help=RUN_HELP)
    if pool:
        samples = memo("pooled", samples, (), lambda: pool_runs(samples))
    columns = ("model", "scaffold", "benchmark", "run")
    options = memo(
        "options", samples, (), lambda: {c: sorted(samples[c].unique()) for c in columns}
    )
    started = memo("run_starts", samples, (), lambda: samples.groupby("run")["created"].min())
    chosen = {
        c: st.sidebar.multiselect(
            c.title(), options[c], key=c,
            format_func=_run_label(started) if c == "run" else str,
        )
        for c in columns
    }  # fmt: skip
    since, until = _dates(samples)
    params = (pool, *(tuple(v) for v in chosen.values()), since, until)
    kept = memo(
        "filtered",
        samples,
        params,
        lambda: tables.filter_samples(
            samples,
            models=chosen["model"],
            scaffolds=chosen["scaffold"],
            benchmarks=chosen["benchmark"],
            runs=chosen["run"],
            since=since,
            until=until,
        ),
    )
    return kept, params


def _metric(key: str) -> str:
    label = tables.LABELS.__getitem__  # every metric has a label
    metric = st.selectbox("Metric", tables.METRICS, index=0, format_func=label, key=key)
    assert metric is not None  # index=0 over a non-empty list: always a choice
    return metric


PINNED = ("rank", "model", "scaffold")

PAIRS_NOTE = tables.PAIRS_NOTE
METHOD = (
    "Rates in % with a 95% Wilson interval and k/n (n = sample-epochs; clustered by "
    "competition when a competition ran more than once). Rank = 1 + entrants of the benchmark "
    "significantly better on any-medal (paired test on shared competitions): ties share a rank. "
    "Each run is its own entrant unless runs are pooled (sidebar)."
)


def _pinned_config() -> dict[str, ColumnConfig]:
    config = {name: st.column_config.TextColumn(name, pinned=True) for name in PINNED}
    return config | {"run": st.column_config.TextColumn("run", width="small")}  # 8 characters


def leaderboard_tab(table: pd.DataFrame, samples: pd.DataFrame) -> None:
    st.caption(METHOD)
    full = st.toggle("All columns (every medal, HumanRank, logs, last run)", key="all_columns")
    shown = tables.display_table(table) if full else tables.compact_table(table)
    st.dataframe(shown, hide_index=True, column_config=_pinned_config(), key="table")
    st.download_button(
        "Download CSV", table.to_csv(index=False), "leaderboard.csv", "text/csv", key="csv"
    )
    bars = memo("bars", table, ("any_medal",), lambda: charts.benchmark_bars(table, "any_medal"))
    st.plotly_chart(bars, key="overview_bars")  # kept: a figure per entrant is slow to build
    comparisons_view(table, samples)
    cost_view(samples)
    references_view()


def cost_view(samples: pd.DataFrame) -> None:
    """What each entrant cost beside what it won ("n/a" tokens: a policy that calls no model)."""
    from sandmle.leaderboard.tasks import cost_table

    st.markdown("**Cost beside quality** (means per sample-epoch)")
    cost = memo("cost", samples, (), lambda: cost_table(samples))
    st.dataframe(cost, hide_index=True, key="cost")
    st.plotly_chart(charts.cost_vs_medal(cost), key="cost_chart")


def references_view() -> None:
    """Published results beside ours: reported, not reproduced, in no test or rank."""
    from sandmle.leaderboard import references as refs

    loaded = refs.load_references()
    st.markdown("**Published results** (reported, not reproduced)")
    st.caption(
        f"From sandmle/leaderboard/references.yaml (version {loaded.version}). Other "
        "benchmarks and budgets than the rows above: not comparable cell by cell, and in no "
        "paired test, rank or verdict."
    )
    config = {"url": st.column_config.LinkColumn("url")}
    st.dataframe(refs.reference_table(loaded), hide_index=True, column_config=config, key="refs")


def comparisons_view(table: pd.DataFrame, samples: pd.DataFrame) -> None:
    """Paired comparisons of the chosen entrants (default: the six best ranked)."""
    st.markdown("**Paired comparisons** (any medal, on the competitions both entrants ran)")
    st.caption(PAIRS_NOTE)
    entrants = list(dict.fromkeys(tables.entrant_names(table)))
    default = entrants[: tables.COMPARED]
    chosen = st.multiselect("Entrants", entrants, default=default, key="compare")
    if len(chosen) < 2:
        st.info("Choose two or more entrants to compare.")
        return
    pairs = memo(
        "pairs", samples, tuple(chosen), lambda: tables.compared_pairs(samples, chosen, entrants)
    )
    st.dataframe(pairs, hide_index=True, key="pairs")


MODELS_NOTE = (
    "Each model pooled over its scaffolds, runs and benchmarks: per competition its mean "
    "{metric}, then the mean over competitions. Intervals: 95% paired bootstrap over "
    "competitions ({n} replicates)."
)


def models_tab(samples: pd.DataFrame) -> None:
    """Model-level verdicts: pooled rank, where each gap holds across scaffolds, win rates."""
    from sandmle.leaderboard import verdicts

    metric = _metric("models_metric")
    st.markdown("**Pooled model rank**")
    st.caption(MODELS_NOTE.format(metric=tables.LABELS[metric], n=verdicts.BOOTSTRAP))
    rank = memo("model_rank", samples, (metric,), lambda: verdicts.model_rank(samples, metric))
    st.dataframe(rank, hide_index=True, key="model_rank")
    st.markdown("**Across scaffolds: where does each gap hold?**")
    st.caption(verdicts.MULTIPLE_NOTE)
    cross = memo(
        "cross", samples, (metric,), lambda: verdicts.cross_scaffold_table(samples, metric)
    )
    st.dataframe(cross, hide_index=True, key="cross_scaffold")
    wins = memo("wins", samples, (metric,), lambda: verdicts.win_rates(samples, metric))
    st.plotly_chart(charts.win_rate_heatmap(wins), key="win_rates")


def generalization_tab(table: pd.DataFrame, samples: pd.DataFrame) -> None:
    metric = _metric("gen_metric")
    benchmarks = sorted(table["benchmark"].unique())
    benchmark = st.selectbox("Benchmark", benchmarks, key="gen_benchmark")
    one = table[table["benchmark"] == benchmark]
    st.plotly_chart(charts.scaffold_heatmap(one, metric), key="heatmap")
    st.markdown(
        "**Drop from each model's best scaffold** (percentage points; a best scaffold is "
        "named only when it is significantly better than the others)"
    )
    gen = tables.generalization_table(one, metric, samples[samples["benchmark"] == benchmark])
    st.dataframe(gen, hide_index=True, key="gen_table")


def benchmarks_tab(table: pd.DataFrame, samples: pd.DataFrame) -> None:
    metric = _metric("bench_metric")
    st.plotly_chart(charts.benchmark_bars(table, metric), key="bars")
    wide = tables.competition_table(samples, metric)
    st.plotly_chart(charts.competition_heatmap(wide, metric), key="competitions")
    from sandmle.leaderboard.tasks import task_table

    st.markdown("**Tasks**, most separating first (click a header to sort)")
    st.caption(
        "separation: variance of the entrants' any-medal means on the task (0: it tells no two "
        "apart; 0.25 at most). saturated: every entrant medals, or none does. normalised "
        "score: 0 at the median threshold, 1 at gold, over valid submissions."
    )
    tasks = memo("tasks", samples, (), lambda: task_table(samples))
    st.dataframe(tasks, hide_index=True, key="tasks")


TRAINING_EMPTY = (
    "No training checkpoints among these logs. Train one with `sandmle train grpo ...`, then "
    "evaluate its checkpoints (e.g. `sandmle eval synthetic --model vllm/<checkpoint dir>`); "
    "the step is read from the model name or its sandmle_checkpoint.json."
)


def training_tab(samples: pd.DataFrame) -> None:
    curves = tables.training_curve_table(samples)
    if curves.empty:
        st.info(TRAINING_EMPTY)
        return
    metric = _metric("train_metric")
    st.plotly_chart(charts.training_curves(curves, metric), key="curves")
    st.dataframe(tables.display_table(curves), hide_index=True, key="curve_table")
    step_test(samples, metric)


def step_test(samples: pd.DataFrame, metric: str) -> None:
    """Two checkpoints of one curve, chosen, under the pairs table's paired test."""
    from sandmle.leaderboard import curves

    found = curves.curves_with_steps(samples)
    if not found:
        st.caption("A paired test between checkpoints needs a curve with two steps or more.")
        return
    st.markdown("**Between two checkpoints** (paired test on the competitions both ran)")
    curve = st.selectbox("Curve", list(found), format_func=" · ".join, key="step_curve")
    steps = found[curve]
    left, right = st.columns(2)
    a = left.selectbox("Step A", steps, index=len(steps) - 1, key=f"step_a:{curve}")
    b = right.selectbox("Step B", steps, index=0, key=f"step_b:{curve}")
    st.dataframe(curves.compare_steps(samples, curve, a, b, metric), hide_index=True,
                 key="step_pair")  # fmt: skip


REPRODUCE_EMPTY = (
    "No `sandmle reproduce` run among these log dirs: open its `eval/` folder (e.g. "
    "`sandmle leaderboard runs/reproduce-toy/eval`); the tab reads `reproduce.json` beside it."
)


def reproduce_tab(samples: pd.DataFrame, log_dirs: list[str]) -> None:
    """The paper in miniature: per-role cells, paired tests, cross-scaffold drop, curves."""
    from sandmle.leaderboard import reproduce_view as view

    folders = [f for f in map(view.manifest_dir, log_dirs) if f is not None]
    if not folders:
        st.info(REPRODUCE_EMPTY)
        return
    folder = folders[0]
    manifest = view.read_manifest(folder)
    mine = view.with_roles(samples, manifest)
    st.caption(md_escape(f"profile {manifest.get('profile')} · {folder} · trained scaffold "
                         f"{manifest.get('trained_scaffold')}"))  # fmt: skip
    cells = view.cell_table(mine, manifest)
    st.plotly_chart(view.cells_figure(cells, "valid_submission"), key="repro_valid")
    st.plotly_chart(view.cells_figure(cells, "above_median"), key="repro_median")
    st.dataframe(cells, hide_index=True, key="repro_cells")
    st.subheader("Paired tests on shared tasks")
    st.dataframe(view.paired_table(mine, manifest), hide_index=True, key="repro_pairs")
    st.subheader("Cross-scaffold drop (valid %)")
    st.dataframe(view.drop_table(mine, manifest), hide_index=True, key="repro_drop")
    choices = memo("repro_choices", samples, (str(folder),),
                   lambda: view.choice_frame(folder, manifest))  # fmt: skip
    if not choices.empty:
        st.subheader("First toolkit call by modality (held-out pack, trained scaffold)")
        st.caption("tv, p: does the call mix depend on the modality? A policy that reads the "
                   "task calls by modality (permutation test over tasks).")  # fmt: skip
        st.dataframe(choices, hide_index=True, key="repro_choices")
    st.plotly_chart(view.curve_figure(view.read_curves(folder)), key="repro_curves")


def _skipped(loaded: LoadedLogs) -> None:
    if loaded.skipped:
        with st.expander(f"⚠ {len(loaded.skipped)} log(s) skipped"):
            for path, reason in loaded.skipped.items():
                st.warning(md_escape(f"{path}: {reason}"))


def render(loaded: LoadedLogs, log_dirs: list[str]) -> None:
    """Every view of the loaded logs; only the open tab is computed."""
    _skipped(loaded)
    samples, _ = sidebar_filters(loaded.samples)
    table = memo("table", samples, (), lambda: tables.leaderboard_table(samples))
    st.caption(f"{len(loaded.runs)} logs · {len(table)} entries · {len(samples)} sample-epochs")
    views = st.tabs(TABS, key="view", on_change="rerun", bind="query-params")
    for view, name in zip(views, TABS, strict=True):
        if view.open is False:
            continue
        with view:
            if name == "Leaderboard":
                leaderboard_tab(table, samples)
            elif name == "Models":
                models_tab(samples)
            elif name == "Generalization":
                generalization_tab(table, samples)
            elif name == "Benchmarks":
                benchmarks_tab(table, samples)
            elif name == "Training":
                training_tab(samples)
            elif name == "Reproduce":
                reproduce_tab(samples, log_dirs)
            else:
                samples_tab(samples, log_dirs)


EMPTY = (
    "No sandmle logs found under {dirs}. Run `sandmle demo --log-dir {first}` (offline, a few "
    "minutes) or `sandmle eval synthetic --model <model> --solver react --log-dir {first}`, "
    "then reload; or name other log dirs in the sidebar."
)


def main() -> None:
    st.set_page_config(page_title="sandmle leaderboard", layout="wide")
    st.title("sandmle leaderboard")
    if not token_given():
        return
    dirs = sidebar_dirs()
    loaded = _log_cache().load(dirs)
    if loaded.runs.empty:
        shown = md_escape(", ".join(dirs) or "no dirs")
        st.info(EMPTY.format(dirs=shown, first=md_escape((dirs or ["logs"])[0])))
        _skipped(loaded)
        return
    render(loaded, dirs)


if __name__ == "__main__":
    main()
