"""OpenEnv, imported without its Gradio web UI.

``openenv.core`` imports its optional Gradio playground on any import (two thirds of its
import time: ~6 of 9 CPU seconds here) and skips it when Gradio is missing. sandmle serves no
playground, so Gradio is held off while OpenEnv loads; a later ``import gradio`` works as usual.
"""

from __future__ import annotations

import sys


def load_openenv() -> None:
    """Import ``openenv.core`` (once) with its web UI skipped."""
    if "openenv.core" in sys.modules:
        return
    held = "gradio" not in sys.modules
    if held:
        sys.modules["gradio"] = None  # type: ignore[assignment]  # import fails: UI skipped
    try:
        import openenv.core  # noqa: F401
    finally:
        if held:
            del sys.modules["gradio"]


load_openenv()
