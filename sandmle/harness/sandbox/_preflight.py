"""Checks that the agent's Python works inside the sandbox, before a task's first sample
and after each exec, so a broken runtime stops the eval (or errors the sample) instead of
scoring zeros.
"""

import json
import re
from pathlib import Path

from inspect_ai.util import ExecResult

from sandmle.errors import SandmleError

FIX = (
    "build the agent runtime with `sandmle sandbox runtime`, or set SANDMLE_AGENT_PYTHON "
    "to a Python that has the stack"
)
FORBIDDEN = ("sandmle",)
"""Modules that must not import inside (with the generator, a task's answers can be rebuilt)."""
CHECK_SCRIPT = """
import importlib, json, os, sys
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
failed = []
for name in filter(None, sys.argv[1].split(",")):
    try:
        importlib.import_module(name)
    except Exception as error:
        failed.append(f"{name} ({type(error).__name__}: {error})")
leaked = []
for name in sys.argv[2].split(","):
    try:
        importlib.import_module(name)
        leaked.append(name)
    except ImportError:
        pass
print(json.dumps({"failed": failed, "leaked": leaked, "uid": os.getuid(),
                  "seccomp": status.get("Seccomp", "").strip()}))
"""
_PYTHON_NOT_RUN = re.compile(
    r"(?:^|[\s/])python3?: (?:command not found|not found|No such file or directory"
    r"|Permission denied)"
    r"|failed to execute python3?\b",
    re.M,
)


class SandboxPreflightError(SandmleError):
    """The sandbox cannot give the agent a working, isolated Python."""


class AgentPythonError(SandmleError):
    """An exec found the agent's Python unable to run; the sample is an error, not a 0."""


def preflight_argv(modules: tuple[str, ...]) -> list[str]:
    return ["python", "-c", CHECK_SCRIPT, ",".join(modules), ",".join(FORBIDDEN)]


def check_preflight(
    python: Path, result: ExecResult[str], *, seccomp: bool, privileged: bool
) -> None:
    """Raise a one-line `SandboxPreflightError` unless the check ran and found all well."""
    lines = [line for line in (result.stderr + result.stdout).splitlines() if line.strip()]
    if not result.success:
        last = lines[-1].strip() if lines else f"exit {result.returncode}"
        raise SandboxPreflightError(
            f"the agent Python {python} does not run inside the sandbox ({last}); {FIX}"
        )
    report = json.loads(result.stdout.strip().splitlines()[-1])
    if report["failed"]:
        raise SandboxPreflightError(
            f"the agent Python {python} cannot import {'; '.join(report['failed'])} inside "
            f"the sandbox; {FIX}"
        )
    if report["leaked"]:
        raise SandboxPreflightError(
            f"the agent Python {python} can import {', '.join(report['leaked'])} inside the "
            f"sandbox (an agent could regenerate a task's answers); {FIX} but not sandmle"
        )
    if seccomp and report["seccomp"] != "2":
        raise SandboxPreflightError(
            "the seccomp filter is not in force inside the sandbox; upgrade bubblewrap "
            "(apt-get install -y bubblewrap)"
        )
    if privileged and report["uid"] == 0:
        raise SandboxPreflightError("sandboxed code runs as root; check that setpriv works")


def python_failure(result: ExecResult[str], stack: tuple[str, ...]) -> str | None:
    """The line saying the agent's Python could not run or import its stack, if any."""
    if result.success:
        return None
    if result.returncode in (126, 127) and (found := _PYTHON_NOT_RUN.search(result.stderr)):
        return found.group(0).strip()
    for module in stack:
        marker = f"ModuleNotFoundError: No module named '{module}'"
        if marker in result.stderr:
            return marker
    return None
