"""The floor plan: no import circle anywhere in ``sandmle``, each floor imports only the floors
below it, and no module is over 600 lines.

The import graph is read from the source with ``ast``: every ``import`` counts, also those
inside functions and under ``TYPE_CHECKING`` (a function-level import hides a circle, it does
not break it). ``from pkg import name`` is an edge to ``pkg.name`` when that is a module, else to
``pkg`` itself.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "sandmle"
MAX_LINES = 600
DATA_TABLES: dict[str, str] = {}
"""Modules allowed past ``MAX_LINES`` because they are mostly literal data, with the reason."""

FLOORS: dict[str, set[str]] = {
    "errors": set(),
    "sandbox_scripts": set(),
    "harness": {"errors", "sandbox_scripts"},
    "scaffolds": {"errors", "harness", "sandbox_scripts"},
    "policies": {"errors", "harness", "sandbox_scripts", "scaffolds"},
    "benchmarks": {"errors", "harness", "sandbox_scripts"},
    "specs": {"errors", "harness"},
    "env": {"errors", "harness", "benchmarks", "scaffolds", "specs"},
    "training": {"errors", "harness", "benchmarks", "scaffolds", "specs", "env"},
    "leaderboard": {"errors", "harness", "specs"},
    "study": {"errors", "harness", "benchmarks", "leaderboard", "specs", "_registry"},
}
"""What each top-level subpackage may import (besides itself). ``cli`` and ``_registry`` sit on
top and may import anything (``study`` builds tasks and solvers through ``_registry``);
``specs`` is the typed config floor (episodes, run files, profiles, studies, checkpoint
metadata) that ``training``, ``leaderboard`` and ``study`` share without importing each other."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The sandmle modules that ``name`` imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in known:  # an attribute: its module
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: set(imported(name, path, known)) for name, path in known.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def floor(name: str) -> str:
    return name.split(".")[1] if name.count(".") else ""


def test_the_checker_finds_a_planted_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]


def test_the_checker_sees_imports_inside_functions(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("def f():\n    from sandmle.x import y\n")
    known = {"sandmle.m": path, "sandmle.x": path}
    assert list(imported("sandmle.m", path, known)) == ["sandmle.x"]


def test_no_import_circle_anywhere() -> None:
    found = circles(import_graph())
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_each_floor_imports_only_the_floors_below() -> None:
    wrong = [
        f"{name} imports {target}"
        for name, targets in import_graph().items()
        if floor(name) in FLOORS
        for target in targets
        if floor(target) not in FLOORS[floor(name)] | {floor(name)}
    ]
    assert not wrong, "\n".join(wrong)


def test_no_module_over_600_lines() -> None:
    long = {
        name: n
        for name, path in modules().items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
        and name not in DATA_TABLES
    }
    assert not long, f"modules over {MAX_LINES} lines (split them, or list a data table): {long}"


ARCHITECTURE_PAGE = PACKAGE.parent / "docs" / "architecture.md"
INDEX_HEADING = "## Module index"
INDEX_ROW = re.compile(r"^\| `(sandmle/[\w/]+\.py)` \|", re.M)


def summary(path: Path) -> str:
    """A module's first docstring sentence, as an index row would start it."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    first = " ".join(doc.split("\n\n")[0].split())
    return first.split(". ")[0].rstrip(".").replace("|", "\\|")


def index_row(path: Path) -> str:
    return f"| `{path.relative_to(PACKAGE.parent).as_posix()}` | {summary(path)} |"


def test_the_architecture_page_indexes_every_module() -> None:
    """docs/architecture.md's module index names every module of the package, and no other:
    a new module comes with its line (the message gives rows to paste, from the docstrings)."""
    text = ARCHITECTURE_PAGE.read_text(encoding="utf-8")
    assert INDEX_HEADING in text, f"{ARCHITECTURE_PAGE} has no {INDEX_HEADING!r} section"
    listed = set(INDEX_ROW.findall(text.split(INDEX_HEADING, 1)[1]))
    on_disk = {
        p.relative_to(PACKAGE.parent).as_posix(): p
        for p in PACKAGE.rglob("*.py")
        if p.name != "__init__.py"
    }
    missing = sorted(set(on_disk) - listed)
    rows = "\n".join(index_row(on_disk[name]) for name in missing)
    assert not missing, f"modules missing from the module index; add:\n{rows}"
    assert listed <= set(on_disk), (
        f"the index names no such module: {sorted(listed - set(on_disk))}"
    )
