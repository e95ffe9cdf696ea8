"""Plotly figures of the leaderboard tables (see ``tables``) and of a sample's search tree."""

from __future__ import annotations

import json

import pandas as pd
import plotly.graph_objects as go

from sandmle.harness.search_tree import SearchNode
from sandmle.leaderboard.tables import LABELS, RATES
from sandmle.leaderboard.transcript import failure_kind

HEIGHT = 420
_FONT = {"size": 13}


def _layout(fig: go.Figure, title: str, **kwargs: object) -> go.Figure:
    fig.update_layout(
        title=title, height=HEIGHT, font=_FONT, margin={"l": 40, "r": 20, "t": 60, "b": 40}
    )
    fig.update_layout(**kwargs)
    return fig


def empty_figure(title: str, message: str = "no runs match the filters") -> go.Figure:
    """A titled figure that says why it is blank, so a view never disappears silently."""
    fig = go.Figure()
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return _layout(fig, title)


def _range(metric: str) -> dict[str, float]:
    return {"zmin": 0.0, "zmax": 100.0} if metric in RATES else {"zmin": 0.0, "zmax": 1.0}


def _heatmap(wide: pd.DataFrame, metric: str, title: str, x_title: str) -> go.Figure:
    digits = 1 if metric in RATES else 3
    text = wide.map(lambda v: "" if pd.isna(v) else f"{v:.{digits}f}")
    fig = go.Figure(
        go.Heatmap(
            z=wide.to_numpy(),
            x=[str(c) for c in wide.columns],
            y=[str(i) for i in wide.index],
            text=text.to_numpy(),
            texttemplate="%{text}",
            colorscale="Blues",
            colorbar={"title": LABELS[metric]},
            hovertemplate="%{y}<br>%{x}<br>%{z:.3g}<extra></extra>",
            **_range(metric),
        )
    )
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(title=x_title, automargin=True)
    return _layout(fig, title)


def scaffold_heatmap(table: pd.DataFrame, metric: str = "any_medal") -> go.Figure:
    """Models (rows) x scaffolds (columns) of one benchmark's leaderboard table."""
    title = f"{LABELS[metric]}: models × scaffolds"
    if table.empty:
        return empty_figure(title)
    wide = table.pivot_table(index="model", columns="scaffold", values=metric, aggfunc="mean")
    return _heatmap(wide, metric, title, "scaffold")


def competition_heatmap(wide: pd.DataFrame, metric: str = "any_medal") -> go.Figure:
    """Entrants (rows) x competitions (columns), from ``tables.competition_table``."""
    title = f"{LABELS[metric]} per competition"
    if wide.empty:
        return empty_figure(title)
    return _heatmap(wide, metric, title, "competition")


def win_rate_heatmap(matrix: pd.DataFrame) -> go.Figure:
    """Head-to-head win rates (%) of each model (row) against each other (column)."""
    title = "Head-to-head: % of shared competitions the row model wins (draws half)"
    if matrix.empty:
        return empty_figure(title)
    fig = _heatmap(matrix, "any_medal", title, "opponent")
    fig.update_traces(colorbar={"title": "win %"}, colorscale="RdBu", zmid=50)
    return fig


def cost_vs_medal(cost: pd.DataFrame) -> go.Figure:
    """Each entrant's any-medal rate against its wall time per sample (tokens in the hover)."""
    title = "Cost vs medals: wall time per sample-epoch against any-medal %"
    if cost.empty:
        return empty_figure(title)
    hover = [f"{e}<br>tokens in/out per sample: {i} / {o}" for e, i, o in
             zip(cost["entrant"], cost["tokens in / sample"], cost["tokens out / sample"],
                 strict=True)]  # fmt: skip
    fig = go.Figure(
        go.Scatter(
            x=cost["wall s / sample"],
            y=cost["Any medal %"],
            mode="markers",
            marker={"size": 11},
            hovertext=hover,
            hovertemplate="%{hovertext}<br>%{x:.1f} s, %{y:.0f}%<extra></extra>",
        )
    )
    fig.update_xaxes(title="wall s / sample-epoch", rangemode="tozero")
    fig.update_yaxes(title="Any medal %", range=_axis_range("any_medal"))
    return _layout(fig, title)


def _axis_range(metric: str) -> list[float]:
    # A fixed range: all-zero data would otherwise get Plotly's -1..1 axis.
    return [-5.0, 105.0] if metric in RATES else [-0.05, 1.05]


def _errors(rows: pd.DataFrame, metric: str) -> dict[str, object]:
    """Asymmetric error bars from the table's interval columns."""
    return {
        "type": "data",
        "symmetric": False,
        "array": (rows[f"{metric}_high"] - rows[metric]).fillna(0).tolist(),
        "arrayminus": (rows[metric] - rows[f"{metric}_low"]).fillna(0).tolist(),
        "visible": True,
    }


def _value_text(values: pd.Series, metric: str) -> list[str]:
    digits = 0 if metric in RATES else 3
    return ["–" if pd.isna(v) else f"{v:.{digits}f}" for v in values]


def benchmark_bars(table: pd.DataFrame, metric: str = "any_medal") -> go.Figure:
    """One dot per model · scaffold in each benchmark's group, with its 95% interval.

    Dots rather than bars: a rate of 0 is as visible as a rate of 100, and the interval,
    not the bar's area, carries the uncertainty.
    """
    return go.Figure(benchmark_bars_spec(table, metric))


def _plain(fig: go.Figure) -> dict:
    """A figure as a plain spec, without its template (the app and the export bring theirs)."""
    data = json.loads(fig.to_json())
    data["layout"].pop("template", None)
    return data


def _spec_layout(title: str, **layout: object) -> dict:
    """``_layout``'s settings as a plain layout."""
    base = {"title": {"text": title}, "height": HEIGHT, "font": _FONT,
            "margin": {"l": 40, "r": 20, "t": 60, "b": 40}}  # fmt: skip
    return base | layout


def benchmark_bars_spec(table: pd.DataFrame, metric: str = "any_medal") -> dict:
    """``benchmark_bars`` as a plain Plotly spec: one trace per entrant, and the export has
    hundreds of entrants, where validating each trace would take seconds."""
    title = f"{LABELS[metric]} by benchmark (95% interval)"
    if table.empty:
        return _plain(empty_figure(title))
    traces = [
        {
            "type": "scatter",
            "name": f"{model} · {scaffold}",
            "x": rows["benchmark"].tolist(),
            "y": rows[metric].tolist(),
            "mode": "markers+text",
            "marker": {"size": 12, "line": {"width": 1, "color": "#333"}},
            "text": _value_text(rows[metric], metric),
            "textposition": "middle right",
            "error_y": _errors(rows, metric),
            "hovertemplate": "%{x}: %{y:.3g}<extra>%{fullData.name}</extra>",
        }
        for (model, scaffold), rows in table.groupby(["model", "scaffold"], sort=False)
    ]
    layout = _spec_layout(
        title,
        scattermode="group",
        yaxis={"title": {"text": LABELS[metric]}, "range": _axis_range(metric)},
        xaxis={"type": "category"},
        legend={"title": {"text": "entrant"}},
    )
    return {"data": traces, "layout": layout}


def training_curves(curves: pd.DataFrame, metric: str = "any_medal") -> go.Figure:
    """Metric against training step, one line per training run x scaffold x benchmark."""
    return go.Figure(training_curves_spec(curves, metric))


def training_curves_spec(curves: pd.DataFrame, metric: str = "any_medal") -> dict:
    """``training_curves`` as a plain Plotly spec (one trace per curve; see ``benchmark_bars_spec``)."""
    title = f"{LABELS[metric]} over training"
    if curves.empty:
        return _plain(
            empty_figure(
                title,
                "no checkpoints with a training step: run `sandmle train`, then evaluate them",
            )
        )
    traces = []
    keys = ["checkpoint_run", "scaffold", "benchmark"]
    for (run, scaffold, benchmark), rows in curves.groupby(keys, sort=False):
        rows = rows.sort_values("checkpoint_step")
        traces.append({"type": "scatter", "name": f"{run} · {scaffold} · {benchmark}",
                       "x": rows["checkpoint_step"].tolist(), "y": rows[metric].tolist(),
                       "mode": "lines+markers", "error_y": _errors(rows, metric)})  # fmt: skip
    layout = _spec_layout(
        title,
        xaxis={"title": {"text": "training step"}},
        yaxis={"title": {"text": LABELS[metric]}, "range": _axis_range(metric)},
    )
    return {"data": traces, "layout": layout}


THRESHOLD_LINES = (
    ("median_threshold", "median", "#7f7f7f"),
    ("bronze_threshold", "bronze", "#cd7f32"),
    ("silver_threshold", "silver", "#8c8c8c"),
    ("gold_threshold", "gold", "#d4af37"),
)


def score_strip(
    samples: pd.DataFrame, chosen: int | None = None, keys: list[str] | None = None
) -> go.Figure:
    """Raw scores of one competition's samples on a line, with its median and medal lines.

    ``samples`` are rows of one competition; ``chosen`` (a row index) is drawn larger.
    ``keys`` (one per scored row) name the points, for the export to mark one the same way.
    """
    return go.Figure(score_strip_spec(samples, chosen, keys))


def _threshold_lines(thresholds: pd.Series) -> tuple[list[dict], list[dict]]:
    """The median and medal lines and their labels, as ``add_vline`` draws them."""
    shapes, labels = [], []
    for key, label, colour in THRESHOLD_LINES:
        value = thresholds.get(key)
        if value is not None and not pd.isna(value):
            dash = "dot" if label == "median" else "solid"
            shapes.append({"type": "line", "x0": float(value), "x1": float(value), "xref": "x",
                           "y0": 0, "y1": 1, "yref": "y domain",
                           "line": {"color": colour, "width": 2, "dash": dash}})  # fmt: skip
            labels.append({"x": float(value), "xref": "x", "y": 1, "yref": "y domain",
                           "text": label, "textangle": -90, "font": {"color": colour},
                           "showarrow": False, "yanchor": "bottom"})  # fmt: skip
    return shapes, labels


def score_strip_spec(
    samples: pd.DataFrame, chosen: int | None = None, keys: list[str] | None = None
) -> dict:
    """``score_strip`` as a plain Plotly spec: the export draws one per competition, with
    thousands of points, where validating a ``go.Figure`` would take seconds."""
    competition = str(samples["competition_id"].iloc[0]) if len(samples) else ""
    title = f"{competition}: raw score against the medal lines"
    scored = samples.dropna(subset=["score"])
    thresholds = samples.iloc[0] if len(samples) else pd.Series(dtype=object)
    entrant = scored["model"] + " · " + scored["scaffold"]
    marker = {
        "size": [18 if i == chosen else 10 for i in scored.index],
        "color": ["#d62728" if i == chosen else "#1f77b4" for i in scored.index],
        "line": {"width": 1, "color": "#333"},
    }
    trace = {"type": "scatter", "x": scored["score"].tolist(), "y": entrant.tolist(),
             "mode": "markers", "name": "samples", "marker": marker,
             "hovertemplate": "%{y}: %{x:.4g}<extra></extra>"}  # fmt: skip
    if keys is not None:
        trace["customdata"] = keys
    shapes, labels = _threshold_lines(thresholds)
    xaxis: dict[str, object] = {}
    if thresholds.get("is_lower_better"):
        xaxis["autorange"] = "reversed"
        title += " (lower is better: better is to the right)"
    if scored.empty:
        labels.append({"text": "no sample of this competition has a score", "showarrow": False})
    layout = {
        "title": {"text": title},
        "height": max(240, 110 + 40 * entrant.nunique()),
        "font": _FONT,
        "margin": {"l": 40, "r": 20, "t": 110, "b": 40},  # room for the lines' labels
        "showlegend": False,
        "shapes": shapes,
        "annotations": labels,
        "xaxis": xaxis,
        "yaxis": {"automargin": True},
    }
    return {"data": [trace], "layout": layout}


def tree_layout(nodes: list[SearchNode]) -> dict[int, tuple[float, float]]:
    """(x, depth) of each node: leaves side by side in search order, parents over children."""
    children: dict[int | None, list[int]] = {}
    known = {n.id for n in nodes}
    for node in nodes:
        parent = node.parent if node.parent in known else None
        children.setdefault(parent, []).append(node.id)
    position: dict[int, tuple[float, float]] = {}
    next_leaf = 0.0

    def place(node_id: int, depth: int) -> float:
        nonlocal next_leaf
        kids = children.get(node_id, [])
        if kids:
            x = sum(place(kid, depth + 1) for kid in kids) / len(kids)
        else:
            x, next_leaf = next_leaf, next_leaf + 1.0
        position[node_id] = (x, float(depth))
        return x

    for root in children.get(None, []):
        place(root, 0)
    return position


def _edges(nodes: list[SearchNode], position: dict[int, tuple[float, float]]) -> dict:
    xs: list[float | None] = []
    ys: list[float | None] = []
    for node in nodes:
        for parent in {*node.parents, *([node.parent] if node.parent is not None else [])}:
            if parent in position:
                xs += [position[parent][0], position[node.id][0], None]
                ys += [position[parent][1], position[node.id][1], None]
    line = {"color": "#9aa5b1", "width": 1.5}
    return {"type": "scatter", "x": xs, "y": ys, "mode": "lines", "line": line,
            "hoverinfo": "skip", "showlegend": False}  # fmt: skip


def _hover(node: SearchNode) -> str:
    failure = failure_kind(node)
    metric = f"failed: {failure}" if failure else f"{node.metric:.4g}"
    if not failure and node.metric is None:
        metric = "no metric"
    summary = (node.summary or node.plan)[:160].replace("\n", " ")
    return f"node {node.id} · {node.operator} · step {node.step}<br>metric: {metric}<br>{summary}"


def _node_trace(nodes: list[SearchNode], position: dict, name: str, **marker: object) -> dict:
    return {
        "type": "scatter",
        "name": name,
        "x": [position[n.id][0] for n in nodes],
        "y": [position[n.id][1] for n in nodes],
        "mode": "markers+text",
        "text": [str(n.id) for n in nodes],
        "textposition": "top center",
        "hovertext": [_hover(n) for n in nodes],
        "hoverinfo": "text",
        "customdata": [n.id for n in nodes],
        "marker": {"size": 16, "line": {"width": 1, "color": "#333"}, **marker},
    }


TREE_ROW_PX = 70
"""Height of one tree level: a 2-node tree is a short figure, not 420 px of blank."""
TREE_COLUMN_PX = 90
"""Width of one column of leaves (plus room for the depth axis and the colour bar)."""


def search_tree_spec(nodes: list[SearchNode], title: str = "search tree") -> dict:
    """The search tree as a plain Plotly spec (data and layout): built in microseconds, so the
    export draws thousands of trees; ``search_tree_figure`` wraps it for the app."""
    position = tree_layout(nodes)
    good = [n for n in nodes if not n.is_bug and n.metric is not None]
    buggy = [n for n in nodes if n.is_bug or n.metric is None]
    lower = any(n.lower_is_better for n in good)
    data = [_edges(nodes, position)]
    if good:
        bar = {"title": {"text": "metric (lower is better)" if lower else "metric"}, "len": 0.9}
        data.append(_node_trace(good, position, "valid", color=[n.metric for n in good],
                                colorscale="Viridis", reversescale=lower, colorbar=bar,
                                showscale=True))  # fmt: skip
    if buggy:
        data.append(_node_trace(buggy, position, "buggy", color="#d62728", symbol="x"))
    depth = max(y for _, y in position.values())
    width = max(x for x, _ in position.values())
    layout = {
        "title": {"text": title},
        "height": 150 + TREE_ROW_PX * int(depth + 1),
        "width": min(1300, 360 + TREE_COLUMN_PX * int(width + 1)),
        "font": _FONT,
        "margin": {"l": 40, "r": 20, "t": 50, "b": 30},
        "showlegend": True,
        "legend": {"orientation": "h", "y": -0.05},
        "yaxis": {"range": [depth + 0.5, -0.5], "title": {"text": "depth"}, "dtick": 1,
                  "zeroline": False},
        "xaxis": {"visible": False, "range": [-1.0, width + 1.0]},
    }  # fmt: skip
    return {"data": data, "layout": layout}


def search_tree_figure(nodes: list[SearchNode], title: str = "search tree") -> go.Figure:
    """A tree scaffold's search: nodes coloured by metric, buggy nodes as red crosses."""
    if not nodes:
        return empty_figure(title, "this sample has no search tree")
    return go.Figure(search_tree_spec(nodes, title))
