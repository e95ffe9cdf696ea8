"""Handing in the sample submission unchanged: the shell command, the script, the line they print.

``sandmle/sample-submission`` does only this; the heuristic falls back to it when even its
simplest model fails, and reads ``COPIED`` back from a run's output when it reviews one.
"""

from __future__ import annotations

COPIED = "Copied sample submission"
"""What the command and the script print once the copy is made."""
SUBMISSION = "/home/submission/submission.csv"


def copy_command(sample: str | None) -> str:
    """A shell command that copies the sample submission (for a ``bash`` tool)."""
    source = f'"{sample}"' if sample else '"$(ls /home/data/*sample*.csv | head -n 1)"'
    return f"mkdir -p /home/submission && cp {source} {SUBMISSION} && echo '{COPIED}'"


def copy_code(sample: str | None, submission: str | None = None) -> str:
    """A Python script that copies the sample submission (for prompts that want code)."""
    source = repr(sample) if sample else 'sorted(glob.glob("/home/data/*sample*.csv"))[0]'
    target = submission or SUBMISSION
    return (
        "import glob\nimport os\nimport shutil\n\n"
        f"os.makedirs({target.rsplit('/', 1)[0]!r}, exist_ok=True)\n"
        f"shutil.copy({source}, {target!r})\n"
        f'print("{COPIED}")\n'
    )
