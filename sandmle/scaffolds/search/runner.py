"""Running one node's script in the sandbox and keeping its submission.

Each node gets ``/home/agent/nodes/<id>/``: its ``solution.py``, the run's ``output.log`` and,
when the run wrote one (to ``SUBMISSION_PATH`` as the task says, or to its own working dir),
a copy of its ``submission.csv``. Between runs ``SUBMISSION_PATH`` holds the best node's copy,
so a sample that is cut short is still scored on the best solution so far.
"""

from __future__ import annotations

import json
import shlex
import time
from dataclasses import dataclass

from inspect_ai.util import OutputLimitExceededError, sandbox

from sandmle.harness.layout import DATA_DIR, SUBMISSION_PATH, WORK_DIR
from sandmle.sandbox_scripts import SCRIPTS_DIR

NODES_DIR = f"{WORK_DIR}/nodes"
OUTPUT_HEAD = 3000
OUTPUT_TAIL = 3000
"""Characters of output kept from the start and end of a run (the traceback is at the end)."""


@dataclass(frozen=True)
class RunResult:
    """What one run of a node's script produced."""

    output: str
    """Combined stdout/stderr, truncated in the middle."""
    exit_code: int | None
    """The script's exit status; None when it was killed for time."""
    timed_out: bool
    exec_time_s: float
    has_submission: bool
    """The run left a ``submission.csv`` (kept in the node's dir)."""


def node_dir(node_id: int) -> str:
    return f"{NODES_DIR}/{node_id}"


def truncate(text: str, head: int = OUTPUT_HEAD, tail: int = OUTPUT_TAIL) -> str:
    """Keep the start and the end of a long output, saying how much was cut."""
    if len(text) <= head + tail:
        return text
    cut = len(text) - head - tail
    return f"{text[:head]}\n... [{cut} characters cut] ...\n{text[-tail:]}"


async def _sh(script: str, timeout: int = 60) -> str:
    result = await sandbox().exec(["bash", "-c", script], timeout=timeout)
    return result.stdout


async def run_script(node_id: int, code: str, timeout: int) -> RunResult:
    """Write ``code`` to the node's dir, run it with a timeout, and keep its submission."""
    here = node_dir(node_id)
    await _sh(f"mkdir -p {here} && rm -f {SUBMISSION_PATH}")
    await sandbox().write_file(f"{here}/solution.py", code)
    started = time.monotonic()
    exit_code: int | None
    try:
        result = await sandbox().exec(
            ["bash", "-c", "python solution.py > output.log 2>&1"], cwd=here, timeout=timeout
        )
        exit_code = result.returncode
    except TimeoutError:
        exit_code = None
    except OutputLimitExceededError:  # the log goes to a file; this is only a safety net
        exit_code = -1
    elapsed = time.monotonic() - started
    output = await _read_output(here)
    if exit_code is None:
        output += f"\nTimeoutError: the script ran past the {timeout} s limit and was killed."
    has_submission = await _keep_submission(here)
    return RunResult(
        output=output,
        exit_code=exit_code,
        timed_out=exit_code is None,
        exec_time_s=round(elapsed, 3),
        has_submission=has_submission,
    )


async def _read_output(here: str) -> str:
    size = OUTPUT_HEAD + OUTPUT_TAIL
    text = await _sh(
        f"f={here}/output.log; [ -f $f ] || exit 0; n=$(wc -c < $f); "
        f'if [ "$n" -le {size} ]; then cat $f; else head -c {OUTPUT_HEAD} $f; '
        f'echo; echo "... [$((n - {size})) bytes cut] ..."; tail -c {OUTPUT_TAIL} $f; fi'
    )
    return text


async def _keep_submission(here: str) -> bool:
    """Move the run's submission into the node's dir; True when there was one."""
    local = f"{here}/submission.csv"
    out = await _sh(
        f"if [ -f {SUBMISSION_PATH} ]; then mv -f {SUBMISSION_PATH} {local}; fi; "
        f"[ -f {local} ] && echo yes || echo no"
    )
    return out.strip() == "yes"


async def publish(node_id: int | None) -> None:
    """Put the given node's submission at ``SUBMISSION_PATH`` (remove it for None)."""
    if node_id is None:
        await _sh(f"rm -f {SUBMISSION_PATH}")
        return
    source = shlex.quote(f"{node_dir(node_id)}/submission.csv")
    await _sh(f"cp -f {source} {SUBMISSION_PATH}")


@dataclass(frozen=True)
class Probe:
    """What the sandbox shows before the search: the data preview, hardware and packages."""

    preview: str = ""
    hardware: str = ""
    packages: tuple[str, ...] = ()


PROBE_SCRIPT = SCRIPTS_DIR / "probe.py"


async def probe(data_dir: str = DATA_DIR) -> Probe:
    """Run the probe script in the sandbox (aideml-grade data preview); empty when it fails."""
    path = f"{NODES_DIR}/probe.py"
    await _sh(f"mkdir -p {NODES_DIR}")
    await sandbox().write_file(path, PROBE_SCRIPT.read_text(encoding="utf-8"))
    try:
        result = await sandbox().exec(["python3", path, data_dir], timeout=120)
        found = json.loads(result.stdout.strip().splitlines()[-1]) if result.success else {}
    except (TimeoutError, ValueError, IndexError):
        found = {}
    if not found.get("preview"):
        listing = await _sh(f"ls -la {shlex.quote(data_dir)} 2>&1 | head -40")
        found["preview"] = listing
    return Probe(
        preview=str(found.get("preview", "")),
        hardware=str(found.get("hardware", "")),
        packages=tuple(found.get("packages", ())),
    )
