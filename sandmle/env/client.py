"""A client for ``sandmle env serve``: OpenEnv's ``EnvClient`` with sandmle's types and token.

Any OpenEnv client speaks to the server (``GenericEnvClient`` gets plain dicts); this one
returns typed observations and sends the server's token, which a server bound beyond
127.0.0.1 requires. It imports no trainer code.

>>> with SandmleEnvClient("http://127.0.0.1:8100").sync() as env:  # doctest: +SKIP
...     result = env.reset(task="parcel-route-000")
...     result = env.step(Action(text='<tool_call>{"name": "bash", ...}</tool_call>'))
"""

from __future__ import annotations

import os
from typing import Any

# isort: off
import sandmle.env._openenv  # noqa: F401 - first: OpenEnv without its web UI
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

# isort: on
from websockets.asyncio.client import connect as ws_connect

from sandmle.env.protocol import Action, Observation

TOKEN_ENV = "SANDMLE_ENV_TOKEN"


class SandmleEnvClient(EnvClient[Action, Observation, dict[str, Any]]):
    """``reset(task=, index=, seed=, episode_id=)`` and ``step(Action)`` against a server."""

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        message_timeout_s: float = 3600.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(base_url, message_timeout_s=message_timeout_s, **kwargs)
        self._token = token if token is not None else os.environ.get(TOKEN_ENV)

    async def connect(self) -> SandmleEnvClient:
        if getattr(self, "_ws", None) is None:
            headers = {"Authorization": f"Bearer {self._token}"} if self._token else None
            try:
                self._ws = await ws_connect(
                    self._ws_url,
                    open_timeout=self._connect_timeout,
                    max_size=self._max_message_size,
                    additional_headers=headers,
                    proxy=None,
                )
            except Exception as exc:
                raise ConnectionError(f"cannot connect to {self._ws_url}: {exc}") from exc
        return self

    def _step_payload(self, action: Action) -> dict[str, Any]:
        return action.model_dump(exclude_none=True)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[Observation]:
        fields = {**payload.get("observation", {}), "done": payload.get("done", False)}
        fields["reward"] = payload.get("reward")
        observation = Observation.model_validate(fields)
        return StepResult(observation=observation, reward=observation.reward, done=observation.done)

    def _parse_state(self, payload: dict[str, Any]) -> dict[str, Any]:
        return payload
