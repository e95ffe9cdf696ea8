"""What every reference policy is: a plain function of the conversation and the offered tools.

The bottom of ``sandmle.policies``: the policies build on it, and ``provider.py`` (which picks a
policy by its model name and serves it as an Inspect model) sits above them all.
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
from inspect_ai.tool import ToolInfo

Policy = Callable[[list[ChatMessage], list[ToolInfo], GenerateConfig], ModelOutput]
"""One model turn: the messages so far, the tools on offer and the config, to the reply."""

__all__ = ["Policy"]
