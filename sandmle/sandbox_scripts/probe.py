"""sandmle sandbox probe: run inside the agent's sandbox as ``python3 probe.py DATA_DIR``.

Prints one JSON object: ``preview``, ``hardware`` and ``packages``. The preview carries what
aideml's ``aide/utils/data_preview.py`` (WecoAI/aideml @ 9643875) shows for the same folder:
the tree with line counts for text files, each table's full row and column counts (every row
is read, ``:70``) and per column its type with the share of true values, its distinct values
when fewer than 10, its range, or its number of distinct values and the commonest four, and
missing values (``:86-106``); JSON schemas; text files under 30 lines in full (``:137-143``);
over 6000 characters, only the column names (``:147-151``). Stand-alone: it needs only the
standard library, and pandas for the table details when installed.
"""

from __future__ import annotations

import json
import os
import sys
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd  # the agent's Python may lack it: imported in `table` when it has it

MAX_FILES = 40
MAX_CHARS = 6000
"""Longer previews fall back to the short form (columns only), as aideml's at 6000 chars."""
FEW_UNIQUE = 10
"""Columns with fewer distinct values list them all (aideml's ``nunique() < 10``)."""
SMALL_TEXT_LINES = 30
"""Text files with fewer lines are shown whole (aideml's ``< 30``)."""
SHORT_COLUMNS = 15
TEXT_SUFFIXES = {".txt", ".csv", ".json", ".tsv", ".py", ".sh", ".yaml", ".yml", ".md",
                 ".html", ".xml", ".log", ".rst"}  # fmt: skip
PACKAGES = (
    "numpy", "pandas", "scikit-learn", "scipy", "statsmodels", "xgboost", "lightgbm",
    "catboost", "torch", "torchvision", "timm", "transformers", "Pillow", "opencv-python",
)  # fmt: skip


def size(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def line_count(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


def file_size(path: Path) -> str:
    """Lines for text files, bytes otherwise (as aideml's file tree)."""
    if path.suffix in TEXT_SUFFIXES:
        return f"{line_count(path)} lines"
    return size(path.stat().st_size)


def tree(root: Path) -> list[str]:
    files = sorted(p for p in root.rglob("*") if p.is_file())
    lines = [f"{p.relative_to(root)} ({file_size(p)})" for p in files[:MAX_FILES]]
    if len(files) > MAX_FILES:
        lines.append(f"... and {len(files) - MAX_FILES} more files")
    return lines


def column_line(name: str, series: pd.Series) -> str:
    """aideml's per-column facts: bool share, the few distinct values, range, or top values."""
    missing = int(series.isna().sum())
    kind = str(series.dtype)
    present = series.dropna()
    distinct = int(present.nunique())
    if kind == "bool":
        share = 100 * float(present.mean()) if len(present) else 0.0
        detail = f"{share:.2f}% true"
    elif distinct < FEW_UNIQUE:
        detail = f"{distinct} unique values: {present.unique().tolist()}"
    elif kind.startswith(("int", "uint")):
        detail = f"range [{series.min()}, {series.max()}]"  # exact, so ids show their span
    elif kind.startswith("float"):
        detail = f"range [{series.min():.6g}, {series.max():.6g}]"
    else:
        top = ", ".join(repr(str(v)[:30]) for v in present.value_counts().index[:4])
        detail = f"{distinct} unique, e.g. {top}"
    return f"  {name} ({kind}): {detail}, {missing} missing"


def table(path: Path, root: Path, short: bool) -> list[str]:
    try:
        import pandas as pd
    except ImportError:
        return [f"-> {path.relative_to(root)}: " + path.open().readline().strip()[:400]]
    frame = pd.read_csv(path)  # every row, as aideml: counts and ranges are the file's
    lines = [f"-> {path.relative_to(root)}: {len(frame)} rows x {frame.shape[1]} columns"]
    if short:
        names = [str(c) for c in frame.columns]
        more = f" ... and {len(names) - SHORT_COLUMNS} more" if len(names) > SHORT_COLUMNS else ""
        return [*lines, "  columns: " + ", ".join(names[:SHORT_COLUMNS]) + more]
    return lines + [column_line(str(c), frame[c]) for c in sorted(frame.columns, key=str)]


def schema(value: Any, depth: int = 0) -> str:
    if isinstance(value, dict) and depth < 2:
        inner = ", ".join(f"{k}: {schema(v, depth + 1)}" for k, v in list(value.items())[:10])
        return "{" + inner + "}"
    if isinstance(value, list):
        return f"list[{len(value)}] of {schema(value[0], depth + 1) if value else 'nothing'}"
    return type(value).__name__


def details(path: Path, root: Path, short: bool) -> list[str]:
    if path.suffix == ".csv":
        return table(path, root, short)
    name = path.relative_to(root)
    if path.suffix == ".json" and path.stat().st_size < 5_000_000:
        return [f"-> {name}: {schema(json.loads(path.read_text()))}"]
    if path.suffix in TEXT_SUFFIXES and line_count(path) < SMALL_TEXT_LINES:
        return [f"-> {name} holds:", "```", path.read_text(errors="replace").rstrip(), "```"]
    return []


def preview(root: Path, short: bool = False) -> str:
    """The tree, then each file's details; the short form when the long one is too long."""
    if not root.is_dir():
        return f"{root} is not a folder"
    lines = ["Files:", *tree(root), ""]
    for path in sorted(p for p in root.rglob("*") if p.is_file())[:MAX_FILES]:
        try:
            lines += details(path, root, short)
        except Exception as exc:  # noqa: BLE001 - one unreadable file must not hide the rest
            lines.append(f"-> {path.relative_to(root)}: unreadable ({type(exc).__name__})")
    text = "\n".join(lines)
    if len(text) > MAX_CHARS and not short:
        return preview(root, short=True)
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + "\n... (preview cut)"


def hardware() -> str:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    memory = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f", {int(line.split()[1]) / 1024 / 1024:.0f} GiB memory"
    except OSError:
        pass
    gpu = "GPU available" if Path("/dev/nvidia0").exists() else "no GPU"
    return f"{cpus} CPUs{memory}, {gpu}"


def packages() -> list[str]:
    found = []
    for name in PACKAGES:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            continue
    return found


if __name__ == "__main__":
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "/home/data")
    print(json.dumps({"preview": preview(folder), "hardware": hardware(), "packages": packages()}))
