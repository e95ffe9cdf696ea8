"""The AutoML script the heuristic policy writes, at a chosen strength.

The script is one program text (``harness/automl_program.py`` joins it from its parts in
``sandbox_scripts/automl/``), so that every scaffold can hand it in as a node's single file.
The program inspects
``/home/data`` when it runs, so one text serves every task. Policies hand it in with the
``LEVEL``/``SAFE`` lines set, and read those lines back from earlier code to improve on it.
"""

from __future__ import annotations

import re

from sandmle.harness.automl_program import (  # noqa: F401 - re-exported
    PARTS,
    PROGRAM_DIR,
    join_parts,
    read_part,
    script_source,
)
from sandmle.scaffolds.prompt_format import METRIC_LINE, parse_metric  # noqa: F401 - re-exported

LEVEL_NAMES = ("dummy", "linear", "random forest", "gradient boosting", "tuned")
MAX_LEVEL = len(LEVEL_NAMES) - 1
DEFAULT_LEVEL = 3
"""Strength used when nothing says otherwise (ReAct runs): gradient boosting."""
_LEVEL_LINE = re.compile(r"^LEVEL = (\d+)", re.M)
_SAFE_LINE = re.compile(r"^SAFE = (True|False)", re.M)


def automl_code(
    level: int = DEFAULT_LEVEL,
    safe: bool = False,
    data_dir: str | None = None,
    submission_dir: str | None = None,
) -> str:
    """The AutoML script at ``level`` (0 dummy … 4 tuned); ``safe`` drops text/image/time features.

    ``data_dir`` and ``submission_dir`` replace the script's default folders (as the task's
    instructions name them; the ``SANDMLE_*_DIR`` variables still win).
    """
    level = max(0, min(MAX_LEVEL, level))
    code = _LEVEL_LINE.sub(f"LEVEL = {level}", script_source(), count=1)
    code = _SAFE_LINE.sub(f"SAFE = {safe}", code, count=1)
    if data_dir:
        code = code.replace('"SANDMLE_DATA_DIR", "/home/data"', f'"SANDMLE_DATA_DIR", {data_dir!r}')
    if submission_dir:
        old = '"SANDMLE_SUBMISSION_DIR", "/home/submission"'
        code = code.replace(old, f'"SANDMLE_SUBMISSION_DIR", {submission_dir!r}')
    return code


def code_level(code: str | None) -> int | None:
    """The level of an AutoML script, or None when the code is not ours."""
    if not code or "sandmle AutoML baseline" not in code:
        return None
    match = _LEVEL_LINE.search(code)
    return int(match.group(1)) if match else None


def code_is_safe(code: str | None) -> bool:
    match = _SAFE_LINE.search(code or "")
    return bool(match and match.group(1) == "True")
