"""The AutoML baseline as one program text, joined from its parts (``sandbox_scripts/automl/``).

The program is one text, so that every scaffold can hand it in as a node's single file and the
task toolkit (``-T toolkit=true``) can ship it as ``automl.py``; its source is the package
``sandbox_scripts/automl/``, one module per part, each linted and importable for tests.
`script_source` joins the parts (`join_parts`): the first part's docstring, one import block
for all, then each part's body in `PARTS` order; the imports between parts are dropped, as in
one file those names are its globals.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from functools import cache

from sandmle.errors import SandmleError
from sandmle.harness.layout import TOOLKIT_PATH
from sandmle.sandbox_scripts import SCRIPTS_DIR
from sandmle.sandbox_scripts.automl.settings import FAMILIES

PROGRAM_DIR = SCRIPTS_DIR / "automl"
TOOLKIT_OPTIONS: tuple[str, ...] = FAMILIES
"""The task toolkit's options, one word each: the families ``python automl.py FAMILY`` takes."""
TOOLKIT_FILE = TOOLKIT_PATH.rsplit("/", 1)[1]


def toolkit_command(option: str) -> str:
    """The shell command for one option (the work dir is the shell's cwd)."""
    if option not in TOOLKIT_OPTIONS:
        raise SandmleError(
            f"sandmle/toolkit: no option {option!r}; options: {', '.join(TOOLKIT_OPTIONS)}"
        )
    return f"python {TOOLKIT_FILE} {option}"


PARTS = ("settings", "task", "features", "models", "structured", "output", "main")
"""The program's parts (modules of PROGRAM_DIR), in the order they are joined."""
_LINE_LENGTH = 100  # ruff's, so the joined program lints as its parts do


@cache
def script_source() -> str:
    """The AutoML program: its parts joined into one file."""
    return join_parts(
        {name: (PROGRAM_DIR / f"{name}.py").read_text(encoding="utf-8") for name in PARTS}
    )


TOOLKIT_FLAG = "TOOLKIT = False\n"
"""The settings line the task toolkit's copy turns on (its call must name a family)."""


@cache
def toolkit_source() -> str:
    """The program as the task toolkit ships it (``automl.py``): the same text, but a call
    without a family gets the usage line instead of the whole baseline."""
    source = script_source()
    if source.count(TOOLKIT_FLAG) != 1:
        raise ValueError(f"the AutoML program has no single {TOOLKIT_FLAG.strip()!r} line")
    return source.replace(TOOLKIT_FLAG, "TOOLKIT = True\n")


@dataclass(frozen=True)
class Part:
    """One module of the program, read apart."""

    name: str
    docstring: str
    """Its docstring's source text (the first part's is the program's)."""
    imports: list[ast.stmt]
    defines: set[str]
    """The top-level names its body defines."""
    body: str
    """Its source after its imports, without the blank lines around it."""
    gap: int
    """The blank lines between its imports and its body."""


def join_parts(sources: dict[str, str]) -> str:
    """One program from modules (name: source, in order) that import each other relatively.

    Each part is a docstring, its imports, then its body. Raises ValueError for a part that
    imports after its body starts, imports a name its sibling does not define, or defines a
    name another part defines or imports too (in one file the later one would silently win).
    """
    parts = {name: read_part(name, source) for name, source in sources.items()}
    owner: dict[str, str] = {}
    for part in parts.values():
        for symbol in part.defines:
            if symbol in owner:
                raise ValueError(f"{symbol!r} is defined in both {owner[symbol]} and {part.name}")
            owner[symbol] = part.name
    outside: list[ast.stmt] = []
    bound: dict[str, str] = {}
    for part in parts.values():
        for node in part.imports:
            if isinstance(node, ast.ImportFrom) and node.level:
                _check_sibling(part.name, node, parts)
            else:
                outside.append(node)
                _check_bound(part.name, node, owner, bound)
    first, *rest = parts.values()
    header = f"{first.docstring}\n\n{_import_block(outside)}" + "\n" * (first.gap + 1)
    return header + "\n\n\n".join([first.body, *(part.body for part in rest)]) + "\n"


def read_part(name: str, source: str) -> Part:
    """A part's docstring, imports (those before its first other statement) and body."""
    tree = ast.parse(source, filename=f"{name}.py")
    lines = source.splitlines()
    nodes = list(tree.body)
    docstring = ""
    if nodes and isinstance(nodes[0], ast.Expr) and isinstance(nodes[0].value, ast.Constant):
        docstring = "\n".join(lines[: nodes.pop(0).end_lineno])
    imports: list[ast.stmt] = []
    while nodes and isinstance(nodes[0], (ast.Import, ast.ImportFrom)):
        imports.append(nodes.pop(0))
    for node in nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            raise ValueError(f"{name}.py imports at line {node.lineno}, after its body starts")
    start = (imports[-1].end_lineno or 0) if imports else 0
    after = "\n".join(lines[start:]).rstrip("\n")
    body = after.lstrip("\n")
    return Part(name, docstring, imports, _defined(nodes), body, len(after) - len(body))


def _defined(nodes: list[ast.stmt]) -> set[str]:
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update(t.id for t in targets if isinstance(t, ast.Name))
    return found


def _check_sibling(name: str, node: ast.ImportFrom, parts: dict[str, Part]) -> None:
    sibling = node.module or ""
    if node.level != 1 or sibling not in parts:
        raise ValueError(f"{name}.py imports {'.' * node.level}{sibling}, which is not a part")
    missing = [a.name for a in node.names if a.name not in parts[sibling].defines]
    if missing:
        raise ValueError(
            f"{name}.py imports {missing} from {sibling}.py, which does not define them"
        )
    if any(a.asname for a in node.names):
        raise ValueError(f"{name}.py renames a name it imports from {sibling}.py")


def _check_bound(name: str, node: ast.stmt, owner: dict[str, str], bound: dict[str, str]) -> None:
    """An outside import binds its name to one thing in every part, and no part defines it."""
    assert isinstance(node, (ast.Import, ast.ImportFrom))
    for alias in node.names:
        if isinstance(node, ast.ImportFrom):
            symbol, what = alias.asname or alias.name, f"{node.module}.{alias.name}"
        else:  # `import a.b` binds a, to the module a
            symbol = alias.asname or alias.name.partition(".")[0]
            what = alias.name if alias.asname else symbol
        if symbol in owner:
            raise ValueError(f"{name}.py imports {symbol!r}, which {owner[symbol]}.py defines")
        if bound.setdefault(symbol, what) != what:
            raise ValueError(f"{name}.py binds {symbol!r} to {what}, elsewhere to {bound[symbol]}")


def _import_block(nodes: list[ast.stmt]) -> str:
    """The parts' outside imports, merged, in ruff's (isort's) order: __future__, the
    standard library, then the rest; ``import x`` before ``from x import y`` in each."""
    plain: set[tuple[str, str | None]] = set()
    members: dict[str, set[tuple[str, str | None]]] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            plain.update((a.name, a.asname) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            members.setdefault(node.module or "", set()).update(
                (a.name, a.asname) for a in node.names
            )
    sections: list[list[str]] = [[], [], []]
    for module, alias in sorted(plain, key=lambda item: (item[0].lower(), item[1] or "")):
        line = f"import {module}" + (f" as {alias}" if alias else "")
        sections[_section(module)].append(line)
    for module in sorted(members, key=str.lower):
        names = [n + (f" as {a}" if a else "") for n, a in sorted(members[module], key=_member)]
        sections[_section(module)].append(_from_line(module, names))
    return "\n\n".join("\n".join(lines) for lines in sections if lines)


def _section(module: str) -> int:
    top = module.partition(".")[0]
    return 0 if top == "__future__" else 1 if top in sys.stdlib_module_names else 2


def _member(item: tuple[str, str | None]) -> tuple[int, str]:
    """isort's order-by-type: CONSTANTS, then Classes, then the rest."""
    name = item[0]
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return kind, name


def _from_line(module: str, names: list[str]) -> str:
    line = f"from {module} import {', '.join(names)}"
    if len(line) <= _LINE_LENGTH:
        return line
    return f"from {module} import (\n" + "".join(f"    {n},\n" for n in names) + ")"
