"""The task text an agent sees: the competition's description plus the harness's instructions."""

from __future__ import annotations

from sandmle.harness.competition import Competition
from sandmle.harness.layout import DATA_DIR, SUBMISSION_PATH, WORK_DIR

INSTRUCTIONS = """You are solving a machine-learning engineering task, a Kaggle-style competition.

- The competition's data is in `{data_dir}` (read-only): {files}.
- Write your predictions for the test set to `{submission_path}`, in the format of the sample \
submission{sample_hint}. Only that file is graded, after you finish.
- Work in `{work_dir}` (your own scratch directory). There is no internet access.
- Use the tools to run shell commands and Python code.{validate_hint}{toolkit_hint}
- Limits: {limits}.

The competition's description follows.

---

{description}
"""


def public_files(competition: Competition, max_listed: int = 20) -> list[str]:
    """Top-level entries of the public dir (folders marked with a slash), sorted."""
    entries = sorted(competition.public_dir.iterdir(), key=lambda p: p.name)
    names = [p.name + ("/" if p.is_dir() else "") for p in entries]
    if len(names) > max_listed:
        names = names[:max_listed] + [f"... ({len(names) - max_listed} more)"]
    return names


TOOLKIT_HINT = """
- A baseline helper is in your work dir: `python automl.py FAMILY` fits gradient boosting on \
one family of the data's inputs and writes the submission. FAMILY is `table` (the numeric, \
categorical and date columns), or the table plus `text` (text columns), `images` (image \
files), `audio` (audio files) or `series` (time trends, for forecasting); a family the data \
lacks fails. An optional LEVEL after it sets the model: 0 dummy, 1 linear, 2 random forest, \
3 gradient boosting, 4 the best of them by cross-validation."""


def task_prompt(
    competition: Competition,
    *,
    limits: str = "none stated",
    validate_tool: bool = True,
    toolkit: bool = False,
) -> str:
    """The full text given to the agent for one competition."""
    description = competition.description_path.read_text(encoding="utf-8")
    sample = competition.sample_submission_path
    sample_hint = (
        f" (`{DATA_DIR}/{sample.relative_to(competition.public_dir).as_posix()}`)"
        if sample.is_relative_to(competition.public_dir)
        else ""
    )
    files = ", ".join(f"`{name}`" for name in public_files(competition)) or "no files"
    validate_hint = (
        " Call `validate_submission` to check your file's format (it reveals no score)."
        if validate_tool
        else ""
    )
    return INSTRUCTIONS.format(
        data_dir=DATA_DIR,
        files=files,
        submission_path=SUBMISSION_PATH,
        sample_hint=sample_hint,
        work_dir=WORK_DIR,
        validate_hint=validate_hint,
        toolkit_hint=TOOLKIT_HINT if toolkit else "",
        limits=limits,
        description=description.strip(),
    )
