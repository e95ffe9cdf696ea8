"""Figures: the search-tree drawing and empty views."""

from __future__ import annotations

import pandas as pd

from sandmle.harness.search_tree import SearchNode
from sandmle.leaderboard import charts, tables

from .conftest import tree_nodes


def test_tree_layout_puts_parents_above_and_between_children() -> None:
    nodes = [SearchNode.model_validate(n) for n in tree_nodes()]
    position = charts.tree_layout(nodes)
    assert {i: position[i][1] for i in range(5)} == {0: 0, 1: 0, 2: 1, 3: 1, 4: 2}
    assert position[2][0] == position[4][0]  # an only child sits under its parent
    assert position[0][0] < position[1][0]  # drafts in search order


def test_tree_figure_colours_valid_nodes_and_marks_bugs() -> None:
    nodes = [SearchNode.model_validate(n) for n in tree_nodes()]
    fig = charts.search_tree_figure(nodes)
    valid = next(t for t in fig.data if t.name == "valid")
    buggy = next(t for t in fig.data if t.name == "buggy")
    assert list(valid.marker.color) == [0.71, 0.83, 0.65]
    assert list(buggy.text) == ["1", "4"] and buggy.marker.symbol == "x"
    crossover = SearchNode(id=5, parent=2, parents=[2, 3], operator="crossover", step=5, metric=0.9)
    edges = charts.search_tree_figure([*nodes, crossover]).data[0]
    assert sum(x is None for x in edges.x) == 5  # three tree edges, two into the crossover node


def test_empty_frames_give_labelled_blank_figures() -> None:
    table = tables.leaderboard_table(pd.DataFrame(columns=["model"]))
    for fig in (charts.scaffold_heatmap(table), charts.benchmark_bars(table)):
        assert fig.layout.annotations[0].text == "no runs match the filters"
    assert "no search tree" in charts.search_tree_figure([]).layout.annotations[0].text


def _table(values: list[float]) -> pd.DataFrame:
    rows = [
        {"model": "m", "scaffold": f"s{i}", "benchmark": "b", "any_medal": v,
         "any_medal_low": 0.0, "any_medal_high": 49.0}
        for i, v in enumerate(values)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_rates_of_all_zero_and_all_one_data_stay_readable() -> None:
    for values in ([0.0, 0.0], [100.0, 100.0]):
        fig = charts.benchmark_bars(_table(values), "any_medal")
        assert list(fig.layout.yaxis.range) == [-5.0, 105.0]  # never -1..1
        assert [bar.text[0] for bar in fig.data] == [f"{v:.0f}" for v in values]
        assert fig.data[0].error_y.arrayminus[0] == values[0]  # down to the interval's 0


def test_score_strip_draws_the_medal_lines() -> None:
    samples = pd.DataFrame(
        {
            "model": ["m", "m"], "scaffold": ["a", "b"], "competition_id": "c",
            "score": [0.8, 0.97], "median_threshold": 0.75, "bronze_threshold": 0.85,
            "silver_threshold": 0.9, "gold_threshold": 0.95, "is_lower_better": False,
        }
    )  # fmt: skip
    fig = charts.score_strip(samples, chosen=1)
    lines = {shape.x0: shape.line.color for shape in fig.layout.shapes}
    assert sorted(lines) == [0.75, 0.85, 0.9, 0.95]
    labels = {a.text for a in fig.layout.annotations}
    assert labels == {"median", "bronze", "silver", "gold"}
    assert list(fig.data[0].marker.size) == [10, 18]  # the chosen sample stands out
    lower = charts.score_strip(samples.assign(is_lower_better=True))
    assert lower.layout.xaxis.autorange == "reversed"
