"""The leaderboard as one self-contained HTML file, to share without a server.

It is the app offline: the compact table the app opens with (all columns folded below), the
paired comparisons in the table's order, the charts, and the Samples view with every
sample's drill-down (``export_drill``); plotly.js and the drill-downs are packed inside.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from sandmle.errors import SandmleError
from sandmle.leaderboard import charts, tables
from sandmle.leaderboard.export_drill import payload_html, sample_keys, spec
from sandmle.leaderboard.logs import LoadedLogs, LogCache
from sandmle.leaderboard.stats import ALPHA

FLOOR_NOTE = (
    "The sample submission is a floor only where a scaffold hands it in: ReAct copies it (100% "
    "valid); the tree scaffolds hand in a node's submission only when some node is good, so "
    "under them a policy that writes no working code hands in nothing (0% valid)."
)

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1360px; color: #222;
       padding: 0 1rem; }
table { border-collapse: collapse; font-size: 0.9rem; margin: 1rem 0; }
th, td { border: 1px solid #ddd; padding: 4px 8px; text-align: right; }
th { background: #f3f5f7; } td { white-space: nowrap; } td:nth-child(-n+4) { text-align: left; }
.wide { overflow-x: auto; max-width: 100%; }
.note { color: #666; font-size: 0.85rem; }
tr[data-key] { cursor: pointer; } tr[data-key]:hover, tr.chosen { background: #eef4ff; }
pre { white-space: pre-wrap; word-break: break-word; background: #f7f7f9; padding: 6px;
      max-height: 30rem; overflow-y: auto; font-size: 0.8rem; }
pre.trace { background: #fff0f0; } .msg { border-left: 3px solid #ddd; padding-left: 8px; }
#detail { border-top: 2px solid #ccd; margin-top: 1rem; }
table.report td { white-space: normal; text-align: left; }
table.card th, table.card td { text-align: left; white-space: normal; }
pre.code { counter-reset: ln; }
pre.code span.ln { counter-increment: ln; }
pre.code span.ln::before { content: counter(ln); display: inline-block; width: 3em;
      margin-right: 1em; text-align: right; color: #999; user-select: none; }
pre.code span.bad { background: #ffe3e3; }
"""


def _table_html(frame: pd.DataFrame) -> str:
    body = frame.to_html(index=False, escape=True, na_rep="–", float_format="{:.1f}".format)
    return f"<div class='wide'>{body}</div>"


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return "–"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _cells(column: pd.Series) -> list[str]:
    """A grid column as table cells; numbers need no escaping (24,000 rows for 1,000 logs)."""
    if pd.api.types.is_numeric_dtype(column):
        return [f"<td>{_cell(v)}</td>" for v in column.tolist()]
    return [f"<td>{html.escape(_cell(v))}</td>" for v in column.tolist()]


def grid_html(grid: pd.DataFrame, keys: list[str]) -> str:
    """The sample grid; a click on a row opens its drill-down (the address keeps it)."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in grid.columns)
    columns = [_cells(grid[c]) for c in grid]
    starts = [f"<tr data-key='{html.escape(k, quote=True)}'>" for k in keys]
    rows = ["".join(cells) + "</tr>" for cells in zip(starts, *columns, strict=True)]
    return f"<div class='wide'><table><tr>{head}</tr>{''.join(rows)}</table></div>"


APP_COLOURS = ["#0068c9", "#83c9ff", "#ff2b2b", "#ffabab", "#29b09d", "#7defa1", "#ff8700",
               "#ffd16a", "#6d3fc0", "#d5dae5"]  # fmt: skip
"""The app's series colours: Streamlit's light-theme chart palette (its frontend fills them in
for ``theme="streamlit"``); every other colour of a chart is set by ``charts`` itself."""


def app_template() -> dict:
    """A Plotly template in the app's colours, so the export's charts look like the app's."""
    import plotly.io as pio

    template = pio.templates["plotly_white"].to_plotly_json()
    template["layout"]["colorway"] = APP_COLOURS
    return template


def report_figures(table: pd.DataFrame, samples: pd.DataFrame) -> list[dict]:
    """The report's figures as Plotly specs: bars, a heatmap per benchmark, competitions,
    training."""
    figures = [charts.benchmark_bars_spec(table, "any_medal")]
    for benchmark in sorted(table["benchmark"].unique()):
        fig = charts.scaffold_heatmap(table[table["benchmark"] == benchmark], "any_medal")
        fig.update_layout(title=f"Any medal %: models × scaffolds ({benchmark})")
        figures.append(spec(fig))
    figures.append(spec(charts.competition_heatmap(tables.competition_table(samples))))
    curves = tables.training_curve_table(samples)
    if not curves.empty:
        figures.append(charts.training_curves_spec(curves, "any_medal"))
    return figures


def _generalization_html(table: pd.DataFrame, samples: pd.DataFrame) -> list[str]:
    parts = []
    for benchmark in sorted(table["benchmark"].unique()):
        gen = tables.generalization_table(
            table[table["benchmark"] == benchmark],
            "any_medal",
            samples[samples["benchmark"] == benchmark],
        )
        parts += [f"<h3>{html.escape(str(benchmark))}</h3>", _table_html(gen)]
    return parts


def verdicts_html(samples: pd.DataFrame) -> list[str]:
    """The app's Models tab: pooled model rank and where each gap holds across scaffolds."""
    from sandmle.leaderboard import verdicts

    return [
        "<h2>Models pooled over scaffolds and benchmarks (any medal)</h2>",
        _table_html(verdicts.model_rank(samples)),
        "<h2>Across scaffolds: where does each gap hold?</h2>",
        f"<p class='note'>{html.escape(verdicts.MULTIPLE_NOTE)}</p>",
        _table_html(verdicts.cross_scaffold_table(samples)),
    ]


def step_tests_html(samples: pd.DataFrame) -> list[str]:
    """The Training tab's paired test, for each curve its last checkpoint against its first."""
    from sandmle.leaderboard import curves

    table = curves.first_against_last(samples)
    if table.empty:
        return []
    title = "Training: each curve's last checkpoint against its first (any medal, paired test)"
    return [f"<h2>{title}</h2>", _table_html(table)]


def references_html() -> list[str]:
    """Published results, as in the app: reported, not reproduced."""
    from sandmle.leaderboard import references as refs

    loaded = refs.load_references()
    return [
        f"<h2>Published results (reported, not reproduced; version {loaded.version})</h2>",
        _table_html(refs.reference_table(loaded)),
    ]


def report_html(loaded: LoadedLogs, log_dirs: Sequence[str | Path]) -> str:
    """The whole report as one HTML page."""
    table = tables.leaderboard_table(loaded.samples)
    figures = report_figures(table, loaded.samples)
    grid, keys = tables.sample_grid(loaded.samples), sample_keys(loaded.samples)
    columns = list(grid.columns)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    dirs = ", ".join(html.escape(str(d)) for d in log_dirs)
    skipped = "".join(
        f"<li>{html.escape(p)}: {html.escape(r)}</li>" for p, r in loaded.skipped.items()
    )
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>sandmle leaderboard</title><style>{_STYLE}</style></head><body>",
        "<h1>sandmle leaderboard</h1>",
        f"<p class='note'>{len(loaded.runs)} logs from {dirs}; made {stamp}. Rates in % with a "
        "95% Wilson interval and k/n sample-epochs (clustered by competition when one ran more "
        "than once). Rank = 1 + entrants significantly better on any medal (paired test on "
        f"shared competitions, p &lt; {ALPHA}): ties share a rank.</p>",
        f"<details><summary>{len(loaded.skipped)} log(s) skipped</summary><ul>{skipped}</ul>"
        "</details>"
        if skipped
        else "",
        "<h2>Leaderboard</h2>",
        _table_html(tables.compact_table(table)),
        "<details><summary>All columns (every medal, HumanRank, logs, last run)</summary>",
        _table_html(tables.display_table(table)),
        "</details>",
        f"<p class='note'>{html.escape(FLOOR_NOTE)}</p>",
        f"<h2>Paired comparisons (any medal, every pair of the {tables.COMPARED} best ranked, "
        "as the app shows by default)</h2>",
        f"<p class='note'>{html.escape(tables.PAIRS_NOTE)}</p>",
        _table_html(tables.default_pairs(table, loaded.samples)),
        *verdicts_html(loaded.samples),
        *references_html(),
        "<h2>Charts</h2>",
        *("<div class='main-fig plotly-graph-div'></div>" for _ in figures),
        *step_tests_html(loaded.samples),
        "<h2>Drop from each model's best scaffold (any medal, points)</h2>",
        *_generalization_html(table, loaded.samples),
        f"<h2>Samples</h2><p class='note'>{len(loaded.samples)} sample-epochs. Click a row to "
        "explain it: score strip, search tree, each node's code and failure, transcript.</p>",
        grid_html(grid, keys),
        "<div id='detail'><p class='note'>No sample chosen.</p></div>",
        payload_html(
            figures,
            app_template(),
            loaded.samples,
            keys,
            [columns.index(c) for c in ("model", "scaffold", "competition", "epoch")],
            columns.index("competition"),
        ),  # fmt: skip
        "</body></html>",
    ]
    return "\n".join(parts)


def export_html(
    log_dirs: Sequence[str | Path], out: str | Path, cache: LogCache | None = None
) -> Path:
    """Write the report of every log under ``log_dirs`` to ``out``; returns its path."""
    loaded = (cache or LogCache()).load(log_dirs)
    if loaded.runs.empty:
        where = ", ".join(map(str, log_dirs))
        raise SandmleError(f"no finished sandmle logs under {where}; nothing to export")
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(report_html(loaded, log_dirs), encoding="utf-8")
    return path
