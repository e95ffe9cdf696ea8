"""Reading CSV files the way MLE-bench's reference environment reads them.

MLE-bench parses with pandas' defaults plus the round-trip float parser, under pandas 2.2.
pandas >= 3 infers a ``str`` dtype for text columns; we turn such columns back into
``object`` columns (missing values as NaN), so text comparisons and ``astype(str)``
behave as in the reference environment whatever pandas is installed.
"""

from __future__ import annotations

import csv
import errno
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pandas as pd

DEFAULT_MAX_BYTES = 512 * 1024 * 1024
"""Submissions above this size are invalid (a 1 GB file would stall grading)."""

_SNIFF_BYTES = 64 * 1024
HEADER_MAX_BYTES = 1024 * 1024
"""A header line longer than this makes the file invalid before pandas parses it."""


def read_csv_reference(path: str | Path | IO[str]) -> pd.DataFrame:
    """Parse a CSV (a file, or a text buffer) exactly as MLE-bench does (pandas defaults,
    round-trip floats)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas 3 deprecates float_precision but still honours it
        frame = pd.read_csv(path, float_precision="round_trip")
    return _object_text_columns(frame)


def _object_text_columns(frame: pd.DataFrame) -> pd.DataFrame:
    for column in frame.columns:
        if pd.api.types.is_string_dtype(frame[column].dtype) and frame[column].dtype != object:
            frame[column] = frame[column].astype(object).where(frame[column].notna(), float("nan"))
    return frame


@dataclass(frozen=True)
class LoadedSubmission:
    """The outcome of reading a submission file: a table, or why there is none."""

    frame: pd.DataFrame | None
    exists: bool
    reason: str | None = None


def load_submission(
    path: str | Path, max_bytes: int = DEFAULT_MAX_BYTES, max_columns: int | None = None
) -> LoadedSubmission:
    """Read a submission; never raises for a bad file, returns the reason instead.

    ``max_columns`` bounds the header's column count, checked on the first line before
    parsing: a 100k-column file would otherwise cost pandas and the graders seconds of CPU.
    """
    p = Path(path)
    missing = _existence_problem(p)
    if missing:
        return LoadedSubmission(None, exists=False, reason=missing)
    size = p.stat().st_size
    if size > max_bytes:
        return LoadedSubmission(
            None, True, f"file is {_mb(size)}, over the {_mb(max_bytes)} submission limit"
        )
    with p.open("rb") as fh:
        head = fh.read(max(_SNIFF_BYTES, HEADER_MAX_BYTES + 1))
    if b"\x00" in head[:_SNIFF_BYTES]:
        return LoadedSubmission(None, True, "file holds binary data (NUL bytes), not a text CSV")
    too_wide = header_problem(head, max_columns)
    if too_wide:
        return LoadedSubmission(None, True, too_wide)
    try:
        frame = read_csv_reference(p)
    except pd.errors.EmptyDataError:
        return LoadedSubmission(None, True, "file is empty (no header row)")
    except UnicodeDecodeError:
        return LoadedSubmission(None, True, "file is not UTF-8 text")
    except (pd.errors.ParserError, ValueError, OSError) as exc:
        if _out_of_memory(exc):  # the grading host's limit, not a fault of the file
            raise MemoryError(_first_line(exc)) from exc
        return LoadedSubmission(None, True, f"could not parse CSV: {_first_line(exc)}")
    return LoadedSubmission(frame, exists=True)


def header_problem(head: bytes, max_columns: int | None) -> str | None:
    """Why the first line of ``head`` (the file's first bytes) cannot be a submission header."""
    line, newline, _ = head.partition(b"\n")
    if not newline and len(head) > HEADER_MAX_BYTES:
        return f"header line is longer than {_mb(HEADER_MAX_BYTES)}"
    if max_columns is None:
        return None
    fields = next(csv.reader([line.decode("utf-8", errors="replace").rstrip("\r")]), [])
    if len(fields) > max_columns:
        return (
            f"header has {len(fields):,} columns, over the limit of {max_columns:,} for this task"
        )
    return None


def _existence_problem(p: Path) -> str | None:
    # MLE-bench: a submission exists only as a regular file with a .csv suffix.
    if p.is_dir():
        return f"{p} is a directory, not a CSV file"
    if not p.exists():
        return f"no submission file at {p}"
    if not p.is_file():
        return f"{p} is not a regular file"
    if p.suffix.lower() != ".csv":
        return f"{p.name} does not have a .csv suffix"
    return None


def _out_of_memory(exc: BaseException) -> bool:
    if isinstance(exc, OSError) and exc.errno == errno.ENOMEM:
        return True
    return "out of memory" in str(exc).lower()  # pandas' C tokenizer says so in a ParserError


def _mb(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
