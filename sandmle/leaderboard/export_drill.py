"""The export's drill-down: every sample explained as the app's Samples view explains it.

Each sample's detail (score strip, search tree, each node's plan, refused replies, code with the
failing line marked, traceback and output, then the transcript) is rendered here once, as HTML
and Plotly figure specs. All of it and plotly.js travel gzip-compressed (base64) in the page and
are unpacked by the browser's own ``DecompressionStream``: the file stays small and needs no
network, no server.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
from pathlib import Path, PurePath
from typing import Any

import pandas as pd
import plotly
import plotly.graph_objects as go
from inspect_ai.log import EvalSample, read_eval_log

from sandmle.harness.search_tree import SearchNode
from sandmle.leaderboard import charts
from sandmle.leaderboard.transcript import (
    crash_line,
    failure_kind,
    mark_line,
    refused_replies,
    report_rows,
    score_report,
    search_tree,
    traceback_of,
    transcript,
)

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
OUTPUT_CHARS = 3000
"""A node's terminal output is cut to its last this many characters (the log keeps it all)."""


def packed(text: str) -> str:
    """``text`` gzip-compressed and base64-encoded, for ``unpack`` in the page."""
    return base64.b64encode(gzip.compress(text.encode("utf-8"), 9, mtime=0)).decode("ascii")


def sample_key(row: pd.Series) -> str:
    """The app's address of a sample (``drilldown.sample_key``)."""
    return f"{PurePath(row['log']).stem}:{row['sample_id']}:{int(row['epoch'])}"


BLOB_CHARS = 800
"""Longer texts are kept once (``Blobs``) and referenced: the same AutoML script is the code
of many nodes and tool calls, further apart than gzip's 32 KB window can see."""


class Blobs(dict[str, int]):
    """Long texts of the drill-downs, each kept once, by its number."""

    def pre(self, text: str, cls: str = "") -> str:
        if len(text) < BLOB_CHARS:
            return f"<pre class='{cls}'>{html.escape(text)}</pre>"
        number = self.setdefault(text, len(self))
        return f"<pre class='{cls}' data-blob='{number}'></pre>"

    def texts(self) -> list[str]:
        return sorted(self, key=self.__getitem__)


def _node_label(node: SearchNode) -> str:
    result = failure_kind(node) or (f"metric {node.metric:.4g}" if node.metric is not None else "")
    return f"node {node.id} · {node.operator} · {result}"


def node_html(node: SearchNode, blobs: Blobs) -> str:
    """One node as the app's node panel: plan, refused replies, code, traceback, output."""
    parts = [f"<details class='node'><summary>{html.escape(_node_label(node))}</summary>"]
    if node.plan:
        parts.append(f"<p><b>Plan</b> {html.escape(node.plan)}</p>")
    if node.summary:
        parts.append(f"<p><b>Review:</b> {html.escape(node.summary)}</p>")
    refused = refused_replies(node)
    if refused:
        parts.append(f"<p><b>Replies refused</b> ({len(refused)})</p>")
    for item in refused:
        where = f" · line {item.line} does not compile" if item.line else ""
        parts.append(f"<p>Reply {item.attempt}: {html.escape(item.why or 'refused')}{where}</p>")
        parts.append(f"<details><summary>raw reply {item.attempt}</summary>")
        parts.append(blobs.pre(item.reply or "(empty reply)") + "</details>")
        if item.code.strip():
            parts.append(blobs.pre(mark_line(item.code, item.line), "code"))
    trace = traceback_of(node.output) if node.is_bug else None
    line = crash_line(trace) if trace else None
    parts.append("<p><b>Code</b>" + (f" (crashed at line {line})" if line else "") + "</p>")
    parts.append(
        blobs.pre(mark_line(node.code, line), "code") if node.code else blobs.pre("(no code)")
    )
    if trace:
        parts.append("<p><b>Traceback</b></p>" + blobs.pre(trace, "trace"))
    output = node.output[-OUTPUT_CHARS:] if node.output else "(no output)"
    parts.append("<p><b>Terminal output</b></p>" + blobs.pre(output))
    return "".join(parts) + "</details>"


def transcript_html(sample: EvalSample, blobs: Blobs) -> str:
    parts = [f"<h4>Transcript ({len(sample.messages)} messages)</h4>"]
    for view in transcript(sample):
        parts.append(f"<div class='msg'><b>{html.escape(view.role)}</b>")
        if view.text:
            parts.append(blobs.pre(view.text))
        for call in view.tool_calls:
            parts.append(f"<p class='note'>tool call: {html.escape(call.function)}</p>")
            parts.append(blobs.pre(call.body, "code"))
        if view.tool_error:
            parts.append(blobs.pre(view.tool_error, "trace"))
        parts.append("</div>")
    return "".join(parts)


def sample_detail(
    samples: pd.DataFrame, index: int, sample: EvalSample, blobs: Blobs
) -> dict[str, Any]:
    """The HTML and figures of one sample's drill-down."""
    row = samples.loc[index]
    title = f"{row['model']} · {row['scaffold']} · {row['competition_id']} · epoch {row['epoch']}"
    figures: list[go.Figure] = []
    same = samples[samples["competition_id"] == row["competition_id"]]
    figures.append(charts.score_strip(same, chosen=index))
    parts = [f"<h3>{html.escape(title)}</h3>"]
    if sample.error:
        parts.append(blobs.pre(f"The sample errored: {sample.error.message}", "trace"))
    parts.append("<div class='fig' data-fig='0'></div>")
    report = score_report(sample)
    if report:
        cells = "".join(
            f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>"
            for k, v in report_rows(report)
        )
        parts.append(f"<h4>Grading report</h4><table class='report'>{cells}</table>")
    nodes = search_tree(sample)
    if nodes:
        figures.append(charts.search_tree_figure(nodes))
        parts.append("<div class='fig' data-fig='1'></div>")
        parts += [node_html(n, blobs) for n in nodes]
    parts.append(transcript_html(sample, blobs))
    return {"html": "".join(parts), "figures": [spec(f) for f in figures]}


def spec(fig: go.Figure) -> dict[str, Any]:
    """A figure's data and layout, without its template (the page holds that once)."""
    data = json.loads(fig.to_json())
    data["layout"].pop("template", None)
    return data


def all_details(samples: pd.DataFrame, blobs: Blobs) -> dict[str, dict[str, Any]]:
    """Every sample's drill-down, by its address; each log is read once."""
    details: dict[str, dict[str, Any]] = {}
    for log, rows in samples.groupby("log", sort=False):
        by_id = {
            (str(s.id), s.epoch): s
            for s in read_eval_log(str(log), resolve_attachments=True).samples or []
        }
        for index, row in rows.iterrows():
            sample = by_id.get((str(row["sample_id"]), int(row["epoch"])))
            if sample is not None:
                details[sample_key(row)] = sample_detail(samples, int(str(index)), sample, blobs)
    return details


SCRIPT = """
async function unpack(b64) {
  const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return await new Response(stream).text();
}
let TEMPLATE = null;
function draw(el, spec) {
  const layout = Object.assign({template: TEMPLATE}, spec.layout);
  Plotly.newPlot(el, spec.data, layout, {displaylogo: false, responsive: true});
}
async function main() {
  const lib = document.createElement('script');
  lib.textContent = await unpack(document.getElementById('plotly-js').textContent);
  document.head.appendChild(lib);
  const payload = JSON.parse(await unpack(document.getElementById('figures').textContent));
  TEMPLATE = payload.template;
  const figures = payload.figures;
  document.querySelectorAll('.main-fig').forEach((el, i) => draw(el, figures[i]));
  const packedDetails = JSON.parse(await unpack(document.getElementById('details').textContent));
  const details = packedDetails.samples, blobs = packedDetails.blobs;
  const pane = document.getElementById('detail');
  function show(key) {
    const d = details[key];
    if (!d) return;
    pane.innerHTML = d.html;
    pane.querySelectorAll('pre[data-blob]').forEach(el => el.textContent = blobs[+el.dataset.blob]);
    pane.querySelectorAll('.fig').forEach(el => draw(el, d.figures[+el.dataset.fig]));
    document.querySelectorAll('tr.chosen').forEach(r => r.classList.remove('chosen'));
    const row = document.querySelector(`tr[data-key="${CSS.escape(key)}"]`);
    if (row) row.classList.add('chosen');
  }
  document.querySelectorAll('tr[data-key]').forEach(r => r.addEventListener('click', () => {
    location.hash = encodeURIComponent(r.dataset.key);
  }));
  window.addEventListener('hashchange', () => show(decodeURIComponent(location.hash.slice(1))));
  document.body.dataset.ready = Object.keys(details).length;
  if (location.hash) show(decodeURIComponent(location.hash.slice(1)));
}
main();
"""


def payload_html(figures: list[go.Figure], samples: pd.DataFrame) -> str:
    """plotly.js, the report's figures and every sample's drill-down, packed, and the script."""
    template = json.loads(figures[0].to_json())["layout"].get("template") if figures else None
    texts = Blobs()
    details = all_details(samples, texts)
    blobs = {
        "plotly-js": packed(PLOTLY_JS.read_text(encoding="utf-8")),
        "figures": packed(
            json.dumps({"template": template, "figures": [spec(f) for f in figures]})
        ),
        "details": packed(json.dumps({"samples": details, "blobs": texts.texts()})),
    }
    scripts = "".join(
        f"<script type='application/octet-stream' id='{name}'>{data}</script>"
        for name, data in blobs.items()
    )
    return f"{scripts}<script>{SCRIPT}</script>"
