"""The export's drill-down: every sample explained as the app's Samples view explains it.

A sample's body (grading report, search tree, each node's card, plan, refused replies, code,
diff against its parent, traceback and output, then the transcript) depends on the sample's
record alone, so it is rendered once per distinct record: two logs holding the same record
(copies, a log under two dirs) share one body, known from the log's zip directory (each
entry's CRC-32 and size) before anything is read. The title comes from the grid row and the
score strip is drawn once per competition, the chosen sample highlighted by the page.

Bodies travel gzip-compressed (base64) one by one and are unpacked when a sample is opened
(the browser's ``DecompressionStream``); long texts are kept once (``Blobs``). The page needs
no network and no server (``SCRIPT``).
"""

from __future__ import annotations

import base64
import gzip
import html
import json
import struct
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import plotly
from inspect_ai.log import EvalSample, read_eval_log

from sandmle.harness.search_tree import SearchNode
from sandmle.leaderboard import charts
from sandmle.leaderboard.transcript import (
    code_diff,
    crash_line,
    diff_title,
    failure_kind,
    node_facts,
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
BLOB_CHARS = 800
"""Longer texts are kept once (``Blobs``) and referenced: the same AutoML script is the code
of many nodes and tool calls, further apart than gzip's 32 KB window can see."""


def packed(text: str) -> str:
    """``text`` gzip-compressed and base64-encoded, for ``unpack`` in the page."""
    return base64.b64encode(gzip.compress(text.encode("utf-8"), 6, mtime=0)).decode("ascii")


def sample_keys(samples: pd.DataFrame) -> list[str]:
    """The app's address of each sample (``drilldown.sample_key``): log stem, id, epoch."""
    stems = samples["log"].str.rsplit("/", n=1).str[-1].str.rsplit(".", n=1).str[0]
    return [f"{s}:{i}:{int(e)}" for s, i, e in zip(stems, samples["sample_id"], samples["epoch"],
                                                    strict=True)]  # fmt: skip


class Blobs(dict[str, int]):
    """Long texts of the drill-downs, each kept once, by its number."""

    def pre(self, text: str, cls: str = "", line: int | None = None) -> str:
        marked = f" data-line='{line}'" if line else ""
        if len(text) < BLOB_CHARS:
            return f"<pre class='{cls}'{marked}>{html.escape(text)}</pre>"
        number = self.setdefault(text, len(self))
        return f"<pre class='{cls}'{marked} data-blob='{number}'></pre>"

    def texts(self) -> list[str]:
        return sorted(self, key=self.__getitem__)


def code_html(code: str, line: int | None, blobs: Blobs) -> str:
    """Code as it ran, copyable (the page numbers its lines beside it), the failing line named."""
    parts = [blobs.pre(code, "code", line)]
    lines = code.splitlines()
    if line and 0 < line <= len(lines):
        parts.append(f"<p class='note'>▶ line {line}: {html.escape(lines[line - 1].strip())}</p>")
    return "".join(parts)


def _node_label(node: SearchNode) -> str:
    result = failure_kind(node) or (f"metric {node.metric:.4g}" if node.metric is not None else "")
    return f"node {node.id} · {node.operator} · {result}"


def _refused_html(node: SearchNode, blobs: Blobs) -> list[str]:
    refused = refused_replies(node)
    parts = [f"<p><b>Replies refused</b> ({len(refused)})</p>"] if refused else []
    for item in refused:
        where = f" · line {item.line} does not compile" if item.line else ""
        parts.append(f"<p>Reply {item.attempt}: {html.escape(item.why or 'refused')}{where}</p>")
        parts.append(f"<details><summary>raw reply {item.attempt}</summary>")
        parts.append(blobs.pre(item.reply or "(empty reply)") + "</details>")
        if item.code.strip():
            parts.append(code_html(item.code, item.line, blobs))
    return parts


def node_html(node: SearchNode, blobs: Blobs, parent: SearchNode | None = None) -> str:
    """One node as the app's node panel: card, plan, refused replies, code, diff, output."""
    cells = "".join(
        f"<th>{label}</th><td>{html.escape(value)}</td>" for label, value in node_facts(node)
    )
    parts = [f"<details class='node'><summary>{html.escape(_node_label(node))}</summary>",
             f"<table class='card'><tr>{cells}</tr></table>"]  # fmt: skip
    if node.plan:
        parts.append(f"<p><b>Plan</b> {html.escape(node.plan)}</p>")
    if node.summary:
        parts.append(f"<p><b>Review:</b> {html.escape(node.summary)}</p>")
    parts += _refused_html(node, blobs)
    trace = traceback_of(node.output) if node.is_bug else None
    line = crash_line(trace) if trace else None
    parts.append("<p><b>Code</b>" + (f" (crashed at line {line})" if line else "") + "</p>")
    if node.code:
        parts.append(code_html(node.code, line, blobs))
    else:
        empty = "(no code: every reply was refused)" if refused_replies(node) else "(no code)"
        parts.append(blobs.pre(empty))
    if trace:
        parts.append("<p><b>Traceback</b></p>" + blobs.pre(trace, "trace"))
    output = node.output[-OUTPUT_CHARS:] if node.output else "(no output)"
    parts.append("<p><b>Terminal output</b></p>" + blobs.pre(output))
    if parent is not None:
        diff = code_diff(parent, node)
        shown = blobs.pre(diff, "diff") if diff else f"<p>Same code as node {parent.id}.</p>"
        parts.append(f"<details><summary>{html.escape(diff_title(parent, node))}</summary>"
                     f"{shown}</details>")  # fmt: skip
    return "".join(parts) + "</details>"


def transcript_html(sample: EvalSample, blobs: Blobs) -> str:
    count = len(sample.messages)
    parts = [f"<h4>Transcript ({count} message{'' if count == 1 else 's'})</h4>"]
    for view in transcript(sample):
        parts.append(f"<div class='msg'><b>{html.escape(view.role)}</b>")
        if view.text:
            parts.append(blobs.pre(view.text))
        for call in view.tool_calls:
            parts.append(f"<p class='note'>tool call: {html.escape(call.function)}</p>")
            parts.append(blobs.pre(call.body, "code" if call.language != "json" else ""))
        if view.tool_error:
            parts.append(blobs.pre(view.tool_error, "trace"))
        parts.append("</div>")
    return "".join(parts)


def sample_body(sample: EvalSample, blobs: Blobs) -> dict[str, Any]:
    """What one sample's record shows: HTML, and its search tree as a Plotly spec (or None)."""
    parts = []
    if sample.error:
        parts.append(blobs.pre(f"The sample errored: {sample.error.message}", "trace"))
    parts.append("<div class='fig strip'></div>")
    report = score_report(sample)
    if report:
        cells = "".join(
            f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>"
            for k, v in report_rows(report)
        )
        parts.append(f"<h4>Grading report</h4><table class='report'>{cells}</table>")
    nodes = search_tree(sample)
    tree = charts.search_tree_spec(nodes) if nodes else None
    if nodes:
        by_id = {n.id: n for n in nodes}
        parts.append("<div class='fig tree'></div>")
        parts += [node_html(n, blobs, by_id.get(n.parent) if n.parent is not None else None)
                  for n in nodes]  # fmt: skip
    parts.append(transcript_html(sample, blobs))
    return {"html": "".join(parts), "tree": tree}


EOCD = b"PK\x05\x06"
CENTRAL = b"PK\x01\x02"


def zip_directory(log: str) -> list[tuple[str, int, int]]:
    """(name, CRC-32, size) of each entry of a zip, from its central directory alone.

    A plain parse of the end record and the directory: ``zipfile`` builds an object per entry,
    which for a thousand logs costs a second. Anything unusual (Zip64, a comment hiding the
    end record) goes to ``zipfile``.
    """
    with open(log, "rb") as handle:
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(max(0, size - 22))
        end = handle.read(22)
        if len(end) < 22 or not end.startswith(EOCD):
            return _zipfile_directory(log)
        entries, length, offset = struct.unpack_from("<HII", end, 10)
        if offset == 0xFFFFFFFF or entries == 0xFFFF or offset + length > size:
            return _zipfile_directory(log)
        handle.seek(offset)
        data = handle.read(length)
    out, at = [], 0
    for _ in range(entries):
        if data[at : at + 4] != CENTRAL:
            return _zipfile_directory(log)
        crc, _, file_size, name_len, extra_len, comment_len = struct.unpack_from(
            "<IIIHHH", data, at + 16
        )
        out.append((data[at + 46 : at + 46 + name_len].decode("utf-8"), crc, file_size))
        at += 46 + name_len + extra_len + comment_len
    return out


def _zipfile_directory(log: str) -> list[tuple[str, int, int]]:
    with zipfile.ZipFile(log) as archive:
        return [(i.filename, i.CRC, i.file_size) for i in archive.infolist()]


def content_keys(log: str) -> dict[tuple[str, int], str]:
    """(sample id, epoch) -> an identity of that sample's record, from the zip directory alone
    (entry name, CRC-32 and size); empty for a log that is not a zip (``.json``)."""
    try:
        entries = zip_directory(log)
    except (OSError, zipfile.BadZipFile, struct.error, UnicodeDecodeError):
        return {}
    keys = {}
    for name, crc, size in entries:
        if name.startswith("samples/") and name.endswith(".json") and "_epoch_" in name:
            sample_id, epoch = name[len("samples/") : -len(".json")].rsplit("_epoch_", 1)
            if epoch.isdigit():
                keys[(sample_id, int(epoch))] = f"{name}:{crc:08x}:{size}"
    return keys


@dataclass
class Drills:
    """Every sample's drill-down body, each distinct record rendered once."""

    blobs: Blobs = field(default_factory=Blobs)
    bodies: list[str] = field(default_factory=list)
    """Each body's JSON, packed."""
    by_content: dict[str, int] = field(default_factory=dict)
    by_sample: dict[str, int] = field(default_factory=dict)
    """Sample address -> its body's number."""

    def add_log(self, log: str, ids: list[tuple[str, int]], keys: list[str]) -> None:
        """The drill-downs of samples ``ids`` (id, epoch) of ``log``, addressed by ``keys``;
        the log is read only when one of its records is new."""
        contents = content_keys(log)
        wanted = [contents.get(i) or f"{log}:{i[0]}:{i[1]}" for i in ids]
        if any(c not in self.by_content for c in wanted):
            records = read_eval_log(log, resolve_attachments=True).samples or []
            by_id = {(str(s.id), s.epoch): s for s in records}
            for sample_id, content in zip(ids, wanted, strict=True):
                sample = by_id.get(sample_id)
                if sample is not None and content not in self.by_content:
                    self.bodies.append(packed(json.dumps(sample_body(sample, self.blobs))))
                    self.by_content[content] = len(self.bodies) - 1
        for key, content in zip(keys, wanted, strict=True):
            if content in self.by_content:
                self.by_sample[key] = self.by_content[content]


def drills(samples: pd.DataFrame, keys: list[str]) -> Drills:
    """Every sample's drill-down; a log is read only when one of its records is new."""
    found = Drills()
    ids = list(zip(samples["sample_id"].astype(str), samples["epoch"].astype(int), strict=True))
    for log, rows in samples.groupby("log", sort=False).indices.items():
        found.add_log(str(log), [ids[r] for r in rows], [keys[r] for r in rows])
    return found


def strips(samples: pd.DataFrame, keys: list[str]) -> dict[str, dict[str, Any]]:
    """Each competition's score strip, its points named by sample address (the page marks
    the chosen one as the app does)."""
    addressed = samples.assign(_key=keys)
    out = {}
    for competition, rows in addressed.groupby("competition_id", sort=True):
        scored = rows.dropna(subset=["score"])
        out[str(competition)] = charts.score_strip_spec(rows, keys=list(scored["_key"]))
    return out


def spec(fig: Any) -> dict[str, Any]:
    """A figure's data and layout, without its template (the page holds that once)."""
    data = json.loads(fig.to_json())
    data["layout"].pop("template", None)
    return data


SCRIPT = """
async function unpack(b64) {
  const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
  return await new Response(stream).text();
}
const packedJson = async id => JSON.parse(await unpack(document.getElementById(id).textContent));
let TEMPLATE = null;
function draw(el, spec) {
  const layout = Object.assign({template: TEMPLATE}, spec.layout);
  Plotly.newPlot(el, spec.data, layout, {displaylogo: false, responsive: true});
}
function chosen(strip, key) {  // the app's score strip with the chosen sample drawn larger
  const trace = Object.assign({}, strip.data[0]), keys = trace.customdata || [];
  trace.marker = Object.assign({}, trace.marker, {
    size: keys.map(k => k === key ? 18 : 10),
    color: keys.map(k => k === key ? '#d62728' : '#1f77b4')});
  return {data: [trace, ...strip.data.slice(1)], layout: strip.layout};
}
function numberLines(pre) {  // numbers drawn beside the code (CSS), so copied code runs
  const bad = +(pre.dataset.line || 0);
  const lines = pre.textContent.split('\\n');
  pre.textContent = '';
  lines.forEach((text, i) => {
    const span = document.createElement('span');
    span.className = i + 1 === bad ? 'ln bad' : 'ln';
    span.textContent = text + (i + 1 < lines.length ? '\\n' : '');
    pre.appendChild(span);
  });
  const marked = pre.querySelector('span.bad');  // scrolled into view, as a crash is read
  if (marked) pre.scrollTop = Math.max(0, marked.offsetTop - pre.offsetTop - 60);
}
async function main() {
  const lib = document.createElement('script');
  lib.textContent = await unpack(document.getElementById('plotly-js').textContent);
  document.head.appendChild(lib);
  const payload = await packedJson('figures');
  TEMPLATE = payload.template;
  document.querySelectorAll('.main-fig').forEach((el, i) => draw(el, payload.figures[i]));
  const index = await packedJson('drill-index');
  const bodies = JSON.parse(document.getElementById('bodies').textContent);
  let blobs = null;  // unpacked when the first sample is opened
  const pane = document.getElementById('detail');
  async function show(key) {
    const row = document.querySelector(`tr[data-key="${CSS.escape(key)}"]`);
    if (!row || !(key in index.samples)) return;
    const body = JSON.parse(await unpack(bodies[index.samples[key]]));
    if (blobs === null) blobs = await packedJson('blobs');
    const cells = [...row.cells].map(c => c.textContent);
    const title = document.createElement('h3');
    const [model, scaffold, competition, epoch] = index.title.map(i => cells[i]);
    title.textContent = `${model} · ${scaffold} · ${competition} · epoch ${epoch}`;
    pane.innerHTML = body.html;
    pane.prepend(title);
    pane.querySelectorAll('pre[data-blob]').forEach(el => el.textContent = blobs[+el.dataset.blob]);
    pane.querySelectorAll('pre.code').forEach(numberLines);
    const strip = pane.querySelector('.fig.strip'), tree = pane.querySelector('.fig.tree');
    if (strip) draw(strip, chosen(index.strips[cells[index.competition]], key));
    if (tree && body.tree) draw(tree, body.tree);
    document.querySelectorAll('tr.chosen').forEach(r => r.classList.remove('chosen'));
    row.classList.add('chosen');
  }
  document.querySelectorAll('tr[data-key]').forEach(r => r.addEventListener('click', () => {
    location.hash = encodeURIComponent(r.dataset.key);
  }));
  window.addEventListener('hashchange', () => show(decodeURIComponent(location.hash.slice(1))));
  document.body.dataset.ready = Object.keys(index.samples).length;
  if (location.hash) show(decodeURIComponent(location.hash.slice(1)));
}
main();
"""


def payload_html(
    figures: list[dict[str, Any]], template: Any, samples: pd.DataFrame, keys: list[str],
    title_cells: list[int], competition_cell: int,
) -> str:  # fmt: skip
    """plotly.js, the report's figures and every sample's drill-down, packed, and the script.

    ``title_cells``: the grid columns that make a drill-down's title (model, scaffold,
    competition, epoch); ``competition_cell``: the one naming its score strip.
    """
    found = drills(samples, keys)
    index = {"samples": found.by_sample, "strips": strips(samples, keys),
             "title": title_cells, "competition": competition_cell}  # fmt: skip
    blobs = {
        "plotly-js": packed(PLOTLY_JS.read_text(encoding="utf-8")),
        "figures": packed(json.dumps({"template": template, "figures": figures})),
        "drill-index": packed(json.dumps(index)),
        "blobs": packed(json.dumps(found.blobs.texts())),
        "bodies": json.dumps(found.bodies),
    }
    scripts = "".join(
        f"<script type='application/octet-stream' id='{name}'>{data}</script>"
        for name, data in blobs.items()
    )
    return f"{scripts}<script>{SCRIPT}</script>"
