"""sandmle sandbox probe: run inside the agent's sandbox as ``python3 probe.py DATA_DIR``.

Prints one JSON object: ``preview`` (the data folder's tree with sizes; for each table its
shape and, per column, type, range or distinct values and missing count; for JSON files their
schema), ``hardware`` and ``packages``. Stand-alone: it needs only the standard library,
and pandas for the table details when installed.
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
MAX_COLUMNS = 25
MAX_ROWS = 100_000
MAX_CHARS = 6000
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


def tree(root: Path) -> list[str]:
    files = sorted(p for p in root.rglob("*") if p.is_file())
    lines = [f"{p.relative_to(root)} ({size(p.stat().st_size)})" for p in files[:MAX_FILES]]
    if len(files) > MAX_FILES:
        lines.append(f"... and {len(files) - MAX_FILES} more files")
    return lines


def column_line(name: str, series: pd.Series) -> str:
    missing = int(series.isna().sum())
    kind = str(series.dtype)
    if kind.startswith(("int", "float")):
        detail = f"range [{series.min():.4g}, {series.max():.4g}]"
    elif kind == "bool":
        detail = f"{int(series.sum())} true"
    else:
        values = series.dropna().astype(str)
        top = ", ".join(repr(v[:30]) for v in values.value_counts().index[:4])
        detail = f"{values.nunique()} unique, e.g. {top}"
    return f"  {name} ({kind}): {detail}, {missing} missing"


def table(path: Path) -> list[str]:
    try:
        import pandas as pd
    except ImportError:
        return [f"{path.name}: " + " | ".join(path.open().readline().strip().split(",")[:20])]
    frame = pd.read_csv(path, nrows=MAX_ROWS)
    shown = frame.columns[:MAX_COLUMNS]
    lines = [f"-> {path.name}: {len(frame)} rows x {frame.shape[1]} columns"]
    lines += [column_line(str(c), frame[c]) for c in shown]
    if frame.shape[1] > MAX_COLUMNS:
        lines.append(f"  ... and {frame.shape[1] - MAX_COLUMNS} more columns")
    return lines


def schema(value: Any, depth: int = 0) -> str:
    if isinstance(value, dict) and depth < 2:
        inner = ", ".join(f"{k}: {schema(v, depth + 1)}" for k, v in list(value.items())[:10])
        return "{" + inner + "}"
    if isinstance(value, list):
        return f"list[{len(value)}] of {schema(value[0], depth + 1) if value else 'nothing'}"
    return type(value).__name__


def preview(root: Path) -> str:
    if not root.is_dir():
        return f"{root} is not a folder"
    lines = ["Files:", *tree(root), ""]
    for path in sorted(root.rglob("*"))[:MAX_FILES]:
        try:
            if path.suffix == ".csv":
                lines += table(path)
            elif path.suffix == ".json" and path.stat().st_size < 5_000_000:
                lines.append(f"-> {path.name}: {schema(json.loads(path.read_text()))}")
        except Exception as exc:  # noqa: BLE001 - one unreadable file must not hide the rest
            lines.append(f"-> {path.name}: unreadable ({type(exc).__name__})")
    text = "\n".join(lines)
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
