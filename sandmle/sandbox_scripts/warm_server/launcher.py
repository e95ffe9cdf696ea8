"""The warm server's entry point: the host copies it into the warm dir as ``server.py``.

The package's modules go beside it as the package ``sandmle_warm`` (``warm.WARM_PACKAGE``),
so the server's own modules have names no run's code uses, and leave a run's ``sys.modules``
before its code starts (``run.forget_server``). The snapshot comes first: what the
interpreter loaded before this file's first line is what a run's dir cannot shadow.
"""

# ruff: noqa: E402 - the snapshot below must come before the server's own imports
import sys

STARTUP_MODULES = frozenset(sys.modules)

import importlib

if __name__ == "__main__":
    # By name: the package is importable as sandmle_warm only in the sandbox's warm dir.
    importlib.import_module("sandmle_warm.serve").main(STARTUP_MODULES)
