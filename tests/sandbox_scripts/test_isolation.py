"""Every program under ``sandmle/sandbox_scripts`` runs on the agent's Python, never sandmle's.

Each ``.py`` file there (recursively; only the folder's own ``__init__.py`` is host-side) is
parsed with ``ast``, and every import in it counts, also those inside functions: none may
name ``sandmle`` or ``inspect_ai`` (the agent runtime holds neither), and each must be the
standard library, a package of the agent runtime's stack, or (in a subfolder, which is
shipped whole) a sibling module of that subfolder, or that subfolder by the name it is
shipped under (the warm server's launcher imports ``sandmle_warm.serve``).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from sandmle.harness.sandbox.runtime import FORBIDDEN_MODULES, STACK_MODULES
from sandmle.harness.sandbox.warm import WARM_PACKAGE
from sandmle.sandbox_scripts import SCRIPTS_DIR

RUNTIME_MODULES = frozenset(sys.stdlib_module_names) | frozenset(STACK_MODULES)
"""What the agent's Python can import: its standard library and the runtime's stack."""
SHIPPED_AS = {"warm_server": WARM_PACKAGE}
"""Subfolders the sandbox holds as a package under another name."""
IMPORTERS = ("import_module", "__import__")
"""Calls that import a module named by a string (``importlib.import_module("x")``)."""


def shipped_files() -> list[Path]:
    """The in-sandbox programs: every .py under SCRIPTS_DIR but its own ``__init__.py``."""
    return sorted(p for p in SCRIPTS_DIR.rglob("*.py") if p != SCRIPTS_DIR / "__init__.py")


def imports_of(source: str) -> list[tuple[int, int, str]]:
    """(line, relative level, module) of every import in the source, wherever it is,
    including string-named ones (``importlib.import_module("a.b")``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, 0, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, node.level, node.module or ""))
        elif isinstance(node, ast.Call) and _called_name(node.func) in IMPORTERS and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.append((node.lineno, 0, first.value))
    return sorted(found)


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def violations(source: str, in_subfolder: bool, shipped_as: str | None = None) -> list[str]:
    """What in the source the agent's Python cannot import, one line each.

    Forbidden: sandmle or inspect_ai; a module neither stdlib nor the runtime's stack; a
    relative import, except ``from .x import y`` inside a shipped subfolder (its siblings
    travel with it; anything higher is sandmle itself). ``shipped_as``: the subfolder's own
    name in the sandbox, which its modules may import.
    """
    wrong = []
    for line, level, module in imports_of(source):
        top = module.partition(".")[0]
        if level:
            if level > 1 or not in_subfolder:
                wrong.append(f"line {line}: from {'.' * level}{module} reaches into sandmle")
        elif shipped_as is not None and top == shipped_as:
            continue
        elif top in FORBIDDEN_MODULES:
            wrong.append(f"line {line}: {module} is not importable in the sandbox")
        elif top not in RUNTIME_MODULES:
            wrong.append(f"line {line}: {module} is neither stdlib nor the runtime's stack")
    return wrong


@pytest.mark.parametrize("path", shipped_files(), ids=lambda p: str(p.relative_to(SCRIPTS_DIR)))
def test_each_program_imports_only_what_the_agent_python_has(path: Path) -> None:
    folder = path.parent.relative_to(SCRIPTS_DIR).parts
    shipped_as = SHIPPED_AS.get(folder[0]) if folder else None
    assert violations(path.read_text(encoding="utf-8"), bool(folder), shipped_as) == []


def test_every_shipped_file_is_checked() -> None:
    names = {str(p.relative_to(SCRIPTS_DIR)) for p in shipped_files()}
    expected = {"probe.py", "warm_client.py", "warm_server/run.py", "automl/settings.py"}
    assert expected <= names
    assert "__init__.py" not in names
    assert "warm_server/__init__.py" in names  # shipped as the package's own __init__


PLANTED = """
import os
import numpy as np
import inspect_ai
from sandmle.harness import layout
import importlib
from .sibling import helper
from .. import SCRIPTS_DIR

def late():
    import sandmle.errors
    from inspect_ai.util import sandbox
    import requests
    return importlib.import_module("sandmle.policies")
"""


def test_the_checker_finds_planted_imports_anywhere() -> None:
    assert violations(PLANTED, in_subfolder=True) == [
        "line 4: inspect_ai is not importable in the sandbox",
        "line 5: sandmle.harness is not importable in the sandbox",
        "line 8: from .. reaches into sandmle",
        "line 11: sandmle.errors is not importable in the sandbox",
        "line 12: inspect_ai.util is not importable in the sandbox",
        "line 13: requests is neither stdlib nor the runtime's stack",
        "line 14: sandmle.policies is not importable in the sandbox",
    ]
    # at the top of SCRIPTS_DIR a sibling is sandmle.sandbox_scripts itself
    assert "line 7: from .sibling reaches into sandmle" in violations(PLANTED, in_subfolder=False)
    # a subfolder's name in the sandbox is its own, no other package's
    launcher = 'import importlib\nimportlib.import_module("sandmle_warm.serve")\n'
    assert violations(launcher, in_subfolder=True, shipped_as="sandmle_warm") == []
    assert violations(launcher, in_subfolder=True) == [
        "line 2: sandmle_warm.serve is neither stdlib nor the runtime's stack"
    ]


def test_a_clean_source_passes() -> None:
    clean = "import os\nfrom pathlib import Path\n\ndef f():\n    import pandas, sklearn.metrics\n"
    assert violations(clean, in_subfolder=False) == []
