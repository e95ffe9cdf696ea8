"""Programs that run inside the agent's sandbox, under the agent's interpreter.

Every file here but this one is copied into (or handed to) a sandbox and run there:

- ``probe.py``: the search scaffolds' data probe (one file);
- ``warm_client.py``: the ``python`` shim of warm Python (one file);
- ``warm_server/``: the warm Python fork server, a package the sandbox's warm dir holds whole
  (``harness/sandbox/warm.py`` copies it, its ``launcher.py`` as the entry point);
- ``automl/``: the AutoML baseline the reference policies hand in, one module per part,
  which ``policies/automl.py`` joins into the one program a node's single file holds.

They must run on the agent's Python with only the standard library and the agent runtime's
stack, so none of them imports ``sandmle`` or ``inspect_ai``, and a module of a folder imports
only its siblings (``tests/sandbox_scripts/test_isolation.py`` parses each file and fails on
anything else). Host code reads them as files: ``SCRIPTS_DIR / "<name>"``.
"""

from pathlib import Path

SCRIPTS_DIR = Path(__file__).parent
"""The folder of the in-sandbox programs, for host code that copies or sends them."""

__all__ = ["SCRIPTS_DIR"]
