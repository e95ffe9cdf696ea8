"""A finished log's header and sample summaries as stored, read without Inspect's models.

Inspect's readers validate every sample summary with pydantic and thin its text again on each
read: about 25 ms for a 24-sample log, so a folder of 1,000 logs took 35 s before the
leaderboard could show anything (bench/leaderboard_load.py). A finished local ``.eval`` log
of the current format holds both as plain JSON members (``header.json``, ``summaries.json``)
that read in about 1.5 ms. Everything else (a running log, an older format, a ``.json`` log,
a remote one, a file this reader cannot open) goes through Inspect's readers, and
``tests/leaderboard/test_logs.py`` checks that both give the same rows for every test log.
"""

from __future__ import annotations

import json
import textwrap
import zipfile
from typing import Any

from inspect_ai.log import EvalLog  # also patches zipfile for the zstd members of .eval logs

HEADER = "header.json"
SUMMARIES = "summaries.json"
FORMAT_VERSION: int = EvalLog.model_fields["version"].default
"""The log format this reader knows; other versions go through Inspect's migrations."""
THIN_WIDTH = 1024
"""Inspect's summaries keep metadata text shortened to this width (its ``thin_text``)."""

Stored = tuple[dict[str, Any], list[dict[str, Any]]]


def stored_log(path: str) -> Stored | None:
    """``path``'s header and sample summaries as Inspect's readers would give them (as JSON),
    or None where only Inspect's readers should read it."""
    if "://" in path or not path.endswith(".eval"):
        return None
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            if HEADER not in names or SUMMARIES not in names:
                return None  # still running, or cut short: Inspect reads its journal
            header = json.loads(archive.read(HEADER))
            if header.get("version") != FORMAT_VERSION or header.get("status") != "success":
                return None
            summaries = json.loads(archive.read(SUMMARIES))
    except Exception:  # noqa: BLE001 - any doubt: Inspect's reader decides, and names why
        return None
    if not isinstance(header, dict) or not isinstance(summaries, list):
        return None
    return header, [_thinned(s) for s in _last_per_sample(summaries)]


def _last_per_sample(summaries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One summary per (id, epoch), the last written: a retried sample's rerun wins, as in
    Inspect's reader."""
    by_key = {(str(s.get("id")), s.get("epoch")): s for s in summaries}
    return list(by_key.values())


def _thin(text: str) -> str:
    text = text[: THIN_WIDTH * 8]
    collapsed = " ".join(text.split())  # what ``textwrap.shorten`` returns when it fits
    if len(collapsed) <= THIN_WIDTH:
        return collapsed
    return textwrap.shorten(text, width=THIN_WIDTH, placeholder="...")


def _thin_strings(metadata: dict[str, Any] | None) -> dict[str, Any] | None:
    """Metadata text as Inspect's summary reader leaves it (whitespace collapsed, shortened)."""
    if metadata is None:
        return None
    return {k: _thin(v) if isinstance(v, str) else v for k, v in metadata.items()}


def _thinned(summary: dict[str, Any]) -> dict[str, Any]:
    scores = {
        name: {**score, "metadata": _thin_strings(score.get("metadata"))}
        for name, score in (summary.get("scores") or {}).items()
    }
    return {**summary, "metadata": _thin_strings(summary.get("metadata")) or {}, "scores": scores}
