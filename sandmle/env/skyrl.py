"""sandmle's environment for SkyRL (PyPI ``skyrl-gym``): a ``BaseTextEnv`` over the server.

SkyRL's generator hands the env the model's raw text each turn and appends the observations to
the conversation; this env forwards the text to ``sandmle env serve`` (tool calls parsed there
as in sandmle's own training) and returns the environment's messages. The reward arrives on
the last step; SkyRL's trajectory-level reward is then sandmle's episode reward.

Register it once, then ``skyrl_gym.make("sandmle", extras={...})``::

    from sandmle.env.skyrl import register
    register()  # id "sandmle"

``extras`` (a dataset row's ``extra_info`` in SkyRL): ``url`` (the server, default
``http://127.0.0.1:8100``), ``task`` / ``index`` / ``seed`` (which task), ``token``.
"""

from __future__ import annotations

from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from sandmle.env.client import SandmleEnvClient
from sandmle.env.protocol import Action, Observation

ENV_ID = "sandmle"
DEFAULT_URL = "http://127.0.0.1:8100"
PICKS = ("task", "index", "seed", "episode_id")


class SandmleSkyRLEnv(BaseTextEnv):
    """One episode of a sandmle task per instance: ``init`` resets it, ``step`` plays a turn."""

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None) -> None:
        super().__init__()
        extras = {**(extras or {}), **(extras or {}).get("extra_info", {})}
        self.url = str(extras.get("url", DEFAULT_URL))
        self.reset_args = {k: extras[k] for k in PICKS if extras.get(k) is not None}
        self.client = SandmleEnvClient(self.url, token=extras.get("token")).sync()
        self.last = Observation()
        self.max_turns = 10**6  # the episode's own turn budget ends it, not SkyRL's count

    def init(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The task's first prompt (SkyRL's dataset prompt only chose the row) and its tools."""
        result = self.client.reset(**self.reset_args)
        self.last = result.observation
        return self.last.messages, {"tools": self.last.tools, "episode_id": self.last.episode_id}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        self.last = self.client.step(Action(text=action)).observation
        return BaseTextEnvStepOutput(
            observations=self.last.messages,
            reward=float(self.last.reward or 0.0) if self.last.done else 0.0,
            done=self.last.done,
            metadata={
                "components": self.last.components,
                "grade": self.last.grade,
                "error": self.last.error,
                "log": self.last.log,
            },
        )

    def get_metrics(self) -> dict[str, Any]:
        return {"turns": self.turns, **self.last.components}

    def close(self) -> None:
        self.client.close()  # the server ends an unfinished episode with the session


def register() -> None:
    """Register ``SandmleSkyRLEnv`` under ``ENV_ID`` with skyrl_gym (once)."""
    from skyrl_gym.envs import register as skyrl_register
    from skyrl_gym.envs.registration import registry

    if ENV_ID not in registry:
        skyrl_register(id=ENV_ID, entry_point=f"{__name__}:SandmleSkyRLEnv")
