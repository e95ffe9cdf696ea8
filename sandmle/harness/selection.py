"""Choosing tasks of a pack: ids given inline (comma-separated or a list) or in a split file."""

from __future__ import annotations

from pathlib import Path

from sandmle.errors import SandmleError


def parse_task_ids(tasks: str | list[str] | None) -> list[str] | None:
    """``None`` (all), a list, ``"a,b"``, or a path to a split file (one id per line, # comments)."""
    if tasks is None:
        return None
    if isinstance(tasks, list):
        return [str(t) for t in tasks]
    path = Path(tasks)
    if path.suffix in {".txt", ".split"} or path.is_file():
        if not path.is_file():
            raise SandmleError(f"split file {path} does not exist")
        lines = path.read_text(encoding="utf-8").splitlines()
        return [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    return [t.strip() for t in tasks.split(",") if t.strip()]
