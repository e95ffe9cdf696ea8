"""The app's Samples view: a sortable, filterable grid, and one sample explained.

The grid holds only the per-sample summaries already loaded; the chosen sample is read in
full from its log (messages, store) when it is shown. The chosen sample is kept in the
page's address (``?sample=<log stem>:<id>:<epoch>``), so a drill-down can be linked.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from sandmle.harness.search_tree import SearchNode
from sandmle.leaderboard import charts
from sandmle.leaderboard.memo import memo
from sandmle.leaderboard.plain import md_escape
from sandmle.leaderboard.tables import sample_grid
from sandmle.leaderboard.transcript import (
    code_diff,
    crash_line,
    diff_title,
    failure_kind,
    inspect_view_command,
    inspect_view_root,
    inspect_view_url,
    node_error,
    node_facts,
    read_sample,
    refused_replies,
    report_rows,
    score_report,
    search_tree,
    traceback_of,
    transcript,
)

if TYPE_CHECKING:
    from streamlit.elements.lib.column_types import ColumnConfig

SAMPLE_PARAM = "sample"
LONG_PROMPT = 600
"""System and user messages longer than this are folded: the task prompt is long."""


def sample_key(row: pd.Series) -> str:
    """The sample's address: log file stem, sample id and epoch."""
    return f"{PurePath(row['log']).stem}:{row['sample_id']}:{int(row['epoch'])}"


def filter_grid(grid: pd.DataFrame, text: str, statuses: list[str]) -> pd.DataFrame:
    """Rows whose status is chosen and whose text columns contain ``text`` (any case)."""
    mask = grid["status"].isin(statuses) if statuses else pd.Series(True, index=grid.index)
    if text:
        haystack = grid[["model", "scaffold", "competition", "invalid reason"]].agg(
            " ".join, axis=1
        )
        mask &= haystack.str.contains(text, case=False, regex=False)
    return grid[mask]


def _grid_config() -> dict[str, ColumnConfig]:
    return {
        "model": st.column_config.TextColumn("model", pinned=True),
        "scaffold": st.column_config.TextColumn("scaffold", pinned=True),
        "score": st.column_config.NumberColumn("score", format="%.4g"),
    }


def _chosen_index(samples: pd.DataFrame, grid: pd.DataFrame, event: object) -> int | None:
    # the samples frame has a RangeIndex (logs.frames), so a row's label is an int
    rows = getattr(getattr(event, "selection", None), "rows", None) or []
    if rows:
        index = grid.index[rows[0]]
        st.query_params[SAMPLE_PARAM] = sample_key(samples.loc[index])
        return index
    wanted = st.query_params.get(SAMPLE_PARAM)
    keys = {sample_key(samples.loc[i]): i for i in grid.index}
    if wanted in keys:
        return keys[wanted]
    return grid.index[0] if len(grid) else None


def samples_tab(samples: pd.DataFrame, log_dirs: list[str]) -> None:
    if samples.empty:
        st.info("No samples match the filters: widen them in the sidebar.")
        return
    left, right = st.columns([3, 2])
    text = left.text_input("Find (model, scaffold, competition, reason)", key="sample_find")
    statuses = right.multiselect(
        "Status", ["medal", "valid", "invalid", "error"], key="sample_status"
    )
    full = memo("grid", samples, (), lambda: sample_grid(samples))
    grid = memo(
        "grid_filtered", full, (text, tuple(statuses)), lambda: filter_grid(full, text, statuses)
    )
    st.caption(f"{len(grid)} of {len(samples)} sample-epochs. Click a row to explain it.")
    event = st.dataframe(
        grid,
        hide_index=True,
        column_config=_grid_config(),
        on_select="rerun",
        selection_mode="single-row",
        key="sample_grid",
        height=300,
    )
    index = _chosen_index(samples, grid, event)
    if index is None:
        st.info("No sample matches the search.")
        return
    row = samples.loc[index]
    assert isinstance(row, pd.Series)  # a RangeIndex label names one row
    explain_sample(samples, row, index, log_dirs)


def explain_sample(samples: pd.DataFrame, row: pd.Series, index: int, log_dirs: list[str]) -> None:
    """Everything that says why one sample scored what it did."""
    st.subheader(
        md_escape(
            f"{row['model']} · {row['scaffold']} · {row['competition_id']} · epoch {row['epoch']}"
        )
    )
    url = inspect_view_url(row["log"], row["sample_id"], int(row["epoch"]), log_dirs)
    st.link_button("Open in Inspect View", url, key="inspect_view")
    command = inspect_view_command(inspect_view_root(row["log"], log_dirs))
    st.caption(md_escape(f"needs {command} running · log: {PurePath(row['log']).name}"))
    same = samples[samples["competition_id"] == row["competition_id"]]
    st.plotly_chart(charts.score_strip(same, chosen=index), key="score_strip")
    sample = read_sample(row["log"], row["sample_id"], int(row["epoch"]))
    if sample.error:
        st.error(md_escape(f"The sample errored: {sample.error.message}"))
    report = score_report(sample)
    if report:
        st.markdown("**Grading report**")
        rows = pd.DataFrame(report_rows(report), columns=["field", "value"]).astype(str)
        st.dataframe(rows, hide_index=True, key="report")  # cells drawn as text, never markdown
    nodes = search_tree(sample)
    if nodes:
        search_tree_view(nodes, sample_key(row))
    count = len(sample.messages)
    st.markdown(f"**Transcript** ({count} message{'' if count == 1 else 's'})")
    for view in transcript(sample):
        with st.chat_message(view.role if view.role in ("user", "assistant") else "ai"):
            st.markdown(f"**{md_escape(view.role)}**")
            if len(view.text) > LONG_PROMPT and view.role in ("system", "user"):
                with st.expander(md_escape(view.text.strip().splitlines()[0][:100])):  # folded
                    st.text(view.text)
            elif view.text:
                st.text(view.text)
            for call in view.tool_calls:
                st.caption(md_escape(f"tool call: {call.function}"))
                st.code(call.body, language=call.language, line_numbers=call.language != "json")
            if view.tool_error:
                st.error(md_escape(view.tool_error))


def _node_label(node: SearchNode) -> str:
    result = failure_kind(node) or (f"metric {node.metric:.4g}" if node.metric is not None else "")
    return f"node {node.id} · {node.operator} · {result}"


def search_tree_view(nodes: list[SearchNode], key: str) -> None:
    """The tree (click a node) and the chosen node's plan, code, output and failure.

    The widgets' keys carry the sample's ``key``: a picker shared between samples would keep
    the labels of the sample shown before (its options are node ids, the same in both).
    """
    event = st.plotly_chart(
        charts.search_tree_figure(nodes),
        width="content",  # the figure's own width: a small tree is a small figure
        key=f"tree:{key}",
        on_select="rerun",
        selection_mode="points",
    )
    points = getattr(getattr(event, "selection", None), "points", None) or []
    by_id = {n.id: n for n in nodes}
    clicked = next((p.get("customdata") for p in points if p.get("customdata") in by_id), None)
    picker, last = f"node:{key}", f"node_clicked:{key}"
    if clicked is not None and clicked != st.session_state.get(last):
        st.session_state[picker] = st.session_state[last] = clicked  # a new click wins
    chosen = st.selectbox(
        "Node (or click one in the tree)", list(by_id), format_func=lambda i: _node_label(by_id[i]),
        key=picker,
    )  # fmt: skip
    node = by_id[chosen]
    node_detail(node)
    parent = by_id.get(node.parent) if node.parent is not None else None
    if parent is not None:
        diff_view(parent, node)


def diff_view(parent: SearchNode, node: SearchNode) -> None:
    """What the operator changed: the node's code against its parent's."""
    diff = code_diff(parent, node)
    with st.expander(diff_title(parent, node)):
        if diff:
            st.code(diff, language="diff")
        else:
            st.text(f"Same code as node {parent.id}.")


def refused_view(node: SearchNode) -> None:
    """Each reply the scaffold refused, verbatim, and its code with the failing line marked."""
    refused = refused_replies(node)
    if not refused:
        return
    st.markdown(f"**Replies refused** ({len(refused)})")
    for item in refused:
        where = f" · line {item.line} does not compile" if item.line else ""
        st.markdown(md_escape(f"Reply {item.attempt}: {item.why or 'refused'}{where}"))
        with st.expander(f"raw reply {item.attempt} ({len(item.reply)} chars)"):
            st.text(item.reply or "(empty reply)")
        if item.code.strip():
            python_code(item.code, item.line)


def python_code(code: str, line: int | None) -> None:
    """Code as it ran (copyable: numbers are drawn beside it, not in it), the failing line named."""
    st.code(code, language="python", line_numbers=True)
    lines = code.splitlines()
    if line and 0 < line <= len(lines):
        st.caption(md_escape(f"▶ line {line}: {lines[line - 1].strip()}"))


def code_view(node: SearchNode) -> None:
    """The node's code; after a crash, its traceback and the line it died at marked."""
    trace = traceback_of(node.output) if node.is_bug else None
    line = crash_line(trace) if trace else None
    st.markdown("**Code**" + (f" (crashed at line {line})" if line else ""))
    if not node.code:
        st.code("(no code: every reply was refused)" if refused_replies(node) else "(no code)")
    else:
        python_code(node.code, line)
    if trace:
        st.markdown("**Traceback**")
        st.code(trace, language=None)


def node_detail(node: SearchNode) -> None:
    *facts, (_, result) = node_facts(node)
    cells = st.columns(len(facts))
    for cell, (label, value) in zip(cells, facts, strict=True):
        # metric values render markdown too: the operator comes from the agent's store
        cell.metric(label, md_escape(value))
    st.markdown(f"**Result:** {md_escape(result)}")  # in full: a card would cut it short
    if node.plan:
        st.markdown("**Plan**")
        st.text(node.plan)
    if node.summary:
        st.markdown(f"**Review:** {md_escape(node.summary)}")
    refused_view(node)
    code_view(node)
    st.markdown("**Terminal output**")
    st.code(node.output or "(no output)", language=None)
    error = node_error(node)
    if error and error[1] and error[1] not in node.output:
        st.markdown(f"**Error** {md_escape(error[0])}")
        st.code(error[1], language=None)
    stop = getattr(node, "stop_reason", None) or node.extra.get("stop_reason")
    if stop:
        st.caption(md_escape(f"stop reason: {stop}"))
