"""The agent runtime: a Python with the standard ML stack in which sandmle is not importable.

Agents must not run on sandmle's own interpreter: with ``sandmle`` and the synthetic generator
importable, a task's answers could be regenerated from its seed. The runtime is a venv made
from the host's base interpreter with no system site-packages, holding only the stack
(numpy, pandas, scikit-learn, scipy, pillow, plus chosen extras), each pinned at the host's
installed version where the host has it, so agents compute what the host would.

It lives under ``$SANDMLE_RUNTIME_DIR`` (default ``~/.cache/sandmle/runtime``) in a folder
named by a hash of the interpreter and the pins, is built once under a file lock (parallel
evals wait instead of racing), and is marked complete only after a check that the stack
imports and ``sandmle``/``inspect_ai`` do not. Nothing in it depends on its own location
(no entry-point scripts are used; run tools as ``python -m``); it does need the base
interpreter's prefix (``sys.base_prefix``, its stdlib and libpython), which the sandbox mounts.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sandmle.errors import SandmleError

if TYPE_CHECKING:
    from rich.console import Console

AGENT_PYTHON_ENV = "SANDMLE_AGENT_PYTHON"
"""Environment variable naming a user's own agent Python; it wins over the runtime."""
RUNTIME_DIR_ENV = "SANDMLE_RUNTIME_DIR"
"""Environment variable naming the folder that holds built runtimes."""
STACK = ("numpy", "pandas", "scikit-learn", "scipy", "pillow")
"""Distributions every runtime holds."""
KNOWN_EXTRAS = ("lightgbm", "xgboost", "torch")
"""Optional distributions tested as extras (any plain distribution name is accepted)."""
STACK_MODULES = ("numpy", "pandas", "sklearn", "scipy", "PIL")
FORBIDDEN_MODULES = ("sandmle", "inspect_ai")
"""Modules that must not import inside the runtime."""
MARKER = "sandmle-runtime.json"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_CHECK = """
import importlib, json, sys
stack = [importlib.import_module(m).__name__ for m in sys.argv[1].split(",")]
leaked = []
for name in sys.argv[2].split(","):
    try:
        importlib.import_module(name)
    except ImportError:
        continue
    leaked.append(name)
import importlib.metadata as md
versions = {d.metadata["Name"].lower(): d.version for d in md.distributions()}
print(json.dumps({"stack": stack, "leaked": leaked, "prefix": sys.prefix,
                  "base_prefix": sys.base_prefix, "versions": versions}))
"""


class RuntimeBuildError(SandmleError):
    """The agent runtime could not be built or failed its check."""


@dataclass(frozen=True)
class Runtime:
    """A built agent runtime."""

    root: Path
    """The venv folder."""
    requirements: tuple[str, ...]
    """What was installed (``name==version`` where pinned)."""

    @property
    def python(self) -> Path:
        """The interpreter agents run (a venv link to the base interpreter)."""
        return self.root / "bin" / "python"


def runtime_home() -> Path:
    """The folder holding built runtimes: ``$SANDMLE_RUNTIME_DIR`` or the user cache."""
    configured = os.environ.get(RUNTIME_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "sandmle" / "runtime"


def base_interpreter() -> Path:
    """The base interpreter of the running Python (outside any venv)."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    return Path(base)


def host_pin(name: str) -> str:
    """``name==<host version>`` when the host has the distribution, else the bare name."""
    try:
        return f"{name}=={importlib.metadata.version(name)}"
    except importlib.metadata.PackageNotFoundError:
        return name


def requirements(extras: Sequence[str] = ()) -> tuple[str, ...]:
    """The runtime's requirements: the stack and the extras, pinned at the host's versions."""
    names = list(STACK)
    for extra in extras:
        if not _NAME.match(extra):
            raise RuntimeBuildError(f"runtime extra {extra!r} is not a distribution name")
        if extra.lower() not in names:
            names.append(extra.lower())
    return tuple(host_pin(name) for name in names)


def runtime_key(reqs: Sequence[str], base: Path) -> str:
    """A folder name that changes whenever the interpreter or a pin does."""
    text = json.dumps([str(base.resolve()), sys.version, sorted(reqs)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def runtime_path(extras: Sequence[str] = ()) -> Path:
    """Where the runtime with these extras lives (built or not)."""
    return runtime_home() / runtime_key(requirements(extras), base_interpreter())


def find_runtime(extras: Sequence[str] = ()) -> Runtime | None:
    """The runtime with these extras if it is built and complete, else None."""
    return _read_marker(runtime_path(extras))


def ensure_runtime(
    extras: Sequence[str] = (), *, rebuild: bool = False, quiet: bool = False
) -> Runtime:
    """Find the runtime with these extras, building it first if needed (or if ``rebuild``).

    Raises:
      RuntimeBuildError: the venv or a package install failed, or the check found the stack
        missing or sandmle importable; the message names the log and the fix.
    """
    reqs = requirements(extras)
    base = base_interpreter()
    root = runtime_home() / runtime_key(reqs, base)
    if not rebuild and (found := _read_marker(root)) is not None:
        return found
    root.parent.mkdir(parents=True, exist_ok=True)
    with _locked(root.parent / f"{root.name}.lock"):
        if not rebuild and (found := _read_marker(root)) is not None:
            return found  # another process built it while we waited
        _build(root, base, reqs, quiet=quiet)
        runtime = _read_marker(root)
    if runtime is None:
        raise RuntimeBuildError(f"agent runtime at {root} has no {MARKER} after its build")
    return runtime


def agent_python(extras: Sequence[str] = ()) -> Path:
    """The agent runtime's interpreter, built on first use (see :func:`ensure_runtime`)."""
    return ensure_runtime(extras).python


def prepare_agent_python() -> Path:
    """The agent's Python for an eval about to start: ``$SANDMLE_AGENT_PYTHON`` if set, else
    the agent runtime, built now if it is not yet (``sandmle demo``/``eval``/``study`` call
    this first, so the sandbox never falls back to sandmle's own interpreter)."""
    configured = os.environ.get(AGENT_PYTHON_ENV)
    if configured:
        return Path(configured)
    return ensure_runtime().python


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _read_marker(root: Path) -> Runtime | None:
    try:
        data = json.loads((root / MARKER).read_text())
    except (OSError, ValueError):
        return None
    runtime = Runtime(root=root, requirements=tuple(data.get("requirements", ())))
    return runtime if runtime.python.exists() else None


def _build(root: Path, base: Path, reqs: tuple[str, ...], *, quiet: bool) -> None:
    from rich.console import Console

    console = Console(stderr=True, quiet=quiet)
    shutil.rmtree(root, ignore_errors=True)
    log = root.parent / f"{root.name}.log"
    # a line first: the spinner below shows nothing off a terminal, and the build takes a while
    console.print(f"building the agent runtime (first use only; about a minute): {root}")
    with console.status(f"Building the agent runtime at {root} ({', '.join(reqs)})"):
        _run([str(base), "-m", "venv", "--without-pip", str(root)], log, "creating the venv")
        installed = _install(root, reqs, log, console)
        report = _check(root / "bin" / "python", log)
    data = {"requirements": list(installed), "base": str(base)} | report
    (root / MARKER).write_text(json.dumps(data, indent=1))
    console.print(f"Agent runtime ready: {root / 'bin' / 'python'}")


def _install(root: Path, reqs: tuple[str, ...], log: Path, console: Console) -> tuple[str, ...]:
    pip = [sys.executable, "-m", "pip", "--python", str(root / "bin" / "python"), "install"]
    pip += ["--no-input", "--disable-pip-version-check", "--no-warn-script-location"]
    pending = list(reqs)
    while True:
        try:
            _run([*pip, *pending], log, "installing the stack")
            return tuple(pending)
        except RuntimeBuildError as error:
            missing = _unavailable_pin(error, pending)
            if missing is None:
                raise
        # The host's exact version is not installable here: take the index's, and say so.
        loose = missing.split("==")[0]
        console.print(f"warning: {missing} is not installable here; installing {loose} instead")
        pending[pending.index(missing)] = loose


def _unavailable_pin(error: RuntimeBuildError, pending: list[str]) -> str | None:
    found = re.search(r"No matching distribution found for (\S+)", str(error))
    pin = found.group(1) if found else None
    return pin if pin in pending and "==" in pin else None


def _check(python: Path, log: Path) -> dict:
    argv = [str(python), "-I", "-c", _CHECK, ",".join(STACK_MODULES), ",".join(FORBIDDEN_MODULES)]
    output = _run(argv, log, "checking the runtime's imports")
    report = json.loads(output.strip().splitlines()[-1])
    if report["leaked"]:
        raise RuntimeBuildError(
            f"agent runtime {python} can import {', '.join(report['leaked'])}; "
            f"remove them from its base interpreter or set {RUNTIME_DIR_ENV} elsewhere"
        )
    return report


def _run(argv: list[str], log: Path, what: str) -> str:
    result = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    with log.open("a") as handle:
        handle.write(f"$ {' '.join(argv)}\n{result.stdout}{result.stderr}\n")
    if result.returncode != 0:
        lines = [ln for ln in result.stderr.splitlines() if ln.strip()] or ["no output"]
        raise RuntimeBuildError(
            f"building the agent runtime failed while {what}: {lines[-1].strip()} "
            f"(log: {log}); make the packages installable (network or pip's cache / a local "
            f"index), or point {RUNTIME_DIR_ENV} at a built runtime or set SANDMLE_AGENT_PYTHON"
        )
    return result.stdout
