"""Programs that run inside the agent's sandbox, under the agent's interpreter.

Every file here is copied into (or handed to) a sandbox and run there: the warm Python server
and its client, the AutoML baseline the reference policies write, and the search scaffolds'
data probe. They must run on the agent's Python with only the standard library and the
agent's own packages, so none of them imports ``sandmle`` or ``inspect_ai``
(``tests/sandbox_scripts/test_isolation.py`` parses each and fails on such an import).
Host code reads them as files: ``SCRIPTS_DIR / "<name>.py"``.
"""

from pathlib import Path

SCRIPTS_DIR = Path(__file__).parent
"""The folder of the in-sandbox programs, for host code that copies or sends them."""

__all__ = ["SCRIPTS_DIR"]
