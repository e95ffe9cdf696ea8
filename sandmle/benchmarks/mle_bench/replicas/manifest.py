"""The committed manifest of what ``mlebench prepare`` writes, and a check of a folder against it.

``manifest.yaml`` (its header says how it was derived) lists, for each lite competition,
every top-level file and folder of ``prepared/public`` and ``prepared/private`` and the shape of
each. ``check_prepared(folder, competition_id)`` returns one line per mismatch, so the same check
runs on a micro replica and on data prepared by MLE-bench itself.
"""

from __future__ import annotations

import csv
import fnmatch
import functools
import json
import zipfile
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

MANIFEST = Path(__file__).with_name("manifest.yaml")
DEFAULT_MIN_WORDS = 300
"""Words a ``description.md`` needs: enough to describe data, metric and submission format."""


class Entry(BaseModel):
    """One file or folder of a prepared competition and the shape it must have."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["csv", "json", "lines", "zip", "dir", "file", "description"]
    columns: list[str] | None = None
    """csv: the exact header."""
    first_columns: list[str] | None = None
    """csv: the header's first names (with ``n_columns``)."""
    n_columns: int | None = None
    """csv: how many columns."""
    quoting: Literal["minimal", "nonnumeric"] = "minimal"
    """csv: ``nonnumeric`` when every text field, the header included, is quoted."""
    header: str | None = None
    """lines: the first line."""
    fields: int | None = None
    """json: keys per record; lines: comma-separated values per line after the header."""
    members: str | None = None
    """zip: a pattern every member matches (at least one member)."""
    files: str | None = None
    """dir: a pattern (relative to the folder) of its files; at least one, none empty."""
    count: int | None = None
    """dir: exactly this many files."""
    entries: dict[str, Entry] | None = None
    """dir: its exact listing."""
    empty: bool = False
    """dir: must hold nothing."""
    min_words: int = Field(default=DEFAULT_MIN_WORDS, gt=0)
    """description: the least number of words."""


class CompetitionManifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    public: dict[str, Entry]
    private: dict[str, Entry]


@functools.cache
def load_manifest() -> dict[str, CompetitionManifest]:
    raw = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    return {cid: CompetitionManifest.model_validate(spec) for cid, spec in raw.items()}


def _csv_problems(path: Path, entry: Entry) -> list[str]:
    with path.open(encoding="utf-8", newline="") as handle:
        first = handle.readline()
    header = next(csv.reader([first]), [])
    problems = []
    if entry.columns is not None and header != entry.columns:
        problems.append(f"columns {header[:6]}... are not {entry.columns[:6]}...")
    if (
        entry.first_columns is not None
        and header[: len(entry.first_columns)] != entry.first_columns
    ):
        problems.append(f"first columns {header[:3]} are not {entry.first_columns}")
    if entry.n_columns is not None and len(header) != entry.n_columns:
        problems.append(f"{len(header)} columns, not {entry.n_columns}")
    quoted = all(field.startswith('"') for field in first.rstrip("\r\n").split(","))
    if quoted != (entry.quoting == "nonnumeric"):
        problems.append(f"header quoting is not {entry.quoting}")
    return problems


def _json_problems(path: Path, entry: Entry) -> list[str]:
    records = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(records, list) or not records:
        return ["not a non-empty list of records"]
    sizes = sorted({len(r) for r in records})
    return [] if sizes == [entry.fields] else [f"records have {sizes} fields, not {entry.fields}"]


def _lines_problems(path: Path, entry: Entry) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    problems = []
    if not lines or (entry.header is not None and lines[0] != entry.header):
        problems.append(f"header is not {entry.header!r}")
    if len(lines) < 2:
        problems.append("no rows after the header")
    elif entry.fields is not None:
        sizes = sorted({len(line.split(",")) for line in lines[1:]})
        if sizes != [entry.fields]:
            problems.append(f"rows have {sizes} fields, not {entry.fields}")
    return problems


def _zip_problems(path: Path, entry: Entry) -> list[str]:
    with zipfile.ZipFile(path) as archive:
        names = [n for n in archive.namelist() if not n.endswith("/")]
    if not names:
        return ["empty zip"]
    odd = [n for n in names if not fnmatch.fnmatchcase(n, entry.members or "*")]
    return [f"members {odd[:3]} do not match {entry.members!r}"] if odd else []


def _dir_problems(path: Path, entry: Entry) -> list[str]:
    files = sorted(p for p in path.rglob("*") if p.is_file())
    if entry.empty:
        return [] if not any(path.iterdir()) else ["should be empty"]
    if not files:
        return ["no files"]
    problems = []
    relative = [p.relative_to(path).as_posix() for p in files]
    odd = [r for r in relative if not fnmatch.fnmatchcase(r, entry.files or "*")]
    if odd:
        problems.append(f"files {odd[:3]} do not match {entry.files!r}")
    empty = [r for r, p in zip(relative, files, strict=True) if p.stat().st_size == 0]
    if empty:
        problems.append(f"{len(empty)} empty file(s), e.g. {empty[0]}")
    if entry.count is not None and len(files) != entry.count:
        problems.append(f"{len(files)} files, not {entry.count}")
    return problems


def _entry_problems(path: Path, entry: Entry, where: str) -> list[str]:
    if entry.kind == "dir":
        if not path.is_dir():
            return [f"{where}: not a folder"]
        if entry.entries is not None:
            return _listing_problems(path, entry.entries, where)
        return [f"{where}: {problem}" for problem in _dir_problems(path, entry)]
    if not path.is_file():
        return [f"{where}: not a file"]
    if path.stat().st_size == 0:
        return [f"{where}: empty file"]
    if entry.kind == "description":
        words = len(path.read_text(encoding="utf-8").split())
        found = [] if words >= entry.min_words else [f"{words} words, fewer than {entry.min_words}"]
    else:
        check = {"csv": _csv_problems, "json": _json_problems, "lines": _lines_problems}
        check |= {"zip": _zip_problems}
        found = check[entry.kind](path, entry) if entry.kind in check else []
    return [f"{where}: {problem}" for problem in found]


def _listing_problems(folder: Path, entries: dict[str, Entry], where: str) -> list[str]:
    present = {p.name for p in folder.iterdir()} if folder.is_dir() else set()
    problems = [f"{where}/{name}: missing" for name in sorted(set(entries) - present)]
    problems += [
        f"{where}/{name}: not written by prepare.py" for name in sorted(present - set(entries))
    ]
    for name, entry in entries.items():
        if name in present:
            problems += _entry_problems(folder / name, entry, f"{where}/{name}")
    return problems


def check_prepared(folder: Path, competition_id: str) -> list[str]:
    """Every way ``folder`` (``<data_dir>/<id>``) differs from what ``mlebench prepare`` writes."""
    manifest = load_manifest()[competition_id]
    prepared = folder / "prepared"
    return _listing_problems(prepared / "public", manifest.public, "public") + _listing_problems(
        prepared / "private", manifest.private, "private"
    )


__all__ = ["MANIFEST", "Entry", "check_prepared", "load_manifest"]
