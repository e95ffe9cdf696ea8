"""``sandmle/<policy>``: one Inspect model provider whose model name picks a reference policy.

Inspect matches a provider by its unqualified registry name, so ``@modelapi(name="sandmle")``
(registered as ``sandmle/sandmle`` from this package) serves ``sandmle/heuristic``,
``sandmle/sample-submission``, ``sandmle/toolkit`` (``sandmle/toolkit/<option>``: one fixed
option), ``sandmle/smollm2`` and ``sandmle/chaos``. Policies are plain functions of the
conversation and the offered tools; none of them calls a network.
"""

from __future__ import annotations

import asyncio
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from sandmle.errors import SandmleError
from sandmle.policies.base import Policy

POLICIES = ("heuristic", "sample-submission", "toolkit", "smollm2", "chaos")


def get_policy(name: str, **model_args: Any) -> Policy:
    """The policy behind ``sandmle/<name>``; heavy ones (SmolLM2) are imported only here."""
    if name == "heuristic":
        from sandmle.policies.heuristic import heuristic_policy

        return heuristic_policy
    if name == "sample-submission":
        from sandmle.policies.sample_submission import sample_submission_policy

        return sample_submission_policy
    if name == "toolkit" or name.startswith("toolkit/"):
        from sandmle.policies.toolkit import toolkit_policy

        # sandmle/toolkit/<option>: one fixed option, under a name of its own in the logs
        fixed = {"option": name.split("/", 1)[1]} if "/" in name else {}
        return toolkit_policy(**{**model_args, **fixed})
    if name == "smollm2":
        from sandmle.policies.smollm2 import smollm2_policy

        return smollm2_policy(**model_args)
    if name == "chaos":
        from sandmle.policies.chaos import chaos_policy

        return chaos_policy(**model_args)
    raise SandmleError(f"unknown sandmle model {name!r} (known: {', '.join(POLICIES)})")


@modelapi(name="sandmle")
class SandmlePolicyAPI(ModelAPI):
    """Reference policies as an Inspect model: deterministic baselines and a tiny local LLM."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        self.policy = get_policy(model_name, **model_args)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        # SmolLM2 generation is CPU-bound: keep the event loop free for other samples.
        if self.model_name == "smollm2":
            return await asyncio.to_thread(self.policy, input, tools, config)
        return self.policy(input, tools, config)

    def max_connections(self) -> int:
        return 1 if self.model_name == "smollm2" else 32
