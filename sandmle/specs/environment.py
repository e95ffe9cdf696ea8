"""What an environment server serves (``sandmle env serve --config``): the pack, the episode spec
every episode runs under, the reward, and the server's own bounds."""

from __future__ import annotations

from pydantic import Field

from sandmle.specs.episode import EpisodeSpec
from sandmle.specs.files import Strict
from sandmle.specs.training import RewardSettings

DEADLINE_MARGIN_S = 120
"""Seconds a worker gets past its task's time limit (setup, grading) before it is killed."""
FALLBACK_TIME_LIMIT_S = 3600
"""An episode's clock when its task has no time limit."""


class EnvSettings(Strict):
    """One environment server's settings (YAML; every field has a default)."""

    pack: str | None = None
    """The pack whose tasks the server serves (the built-in pack when omitted)."""
    tasks: list[str] | None = None
    """The task ids a client may ask for (all of the pack's when omitted)."""
    episode: EpisodeSpec = Field(default_factory=EpisodeSpec)
    """What every episode runs: the task's ``-T`` limits, the scaffold, the turn budget."""
    reward: RewardSettings = Field(default_factory=RewardSettings)
    """The reward a finished episode gets, with its components."""
    log_dir: str = "logs/env"
    """Where each episode's Inspect log is written."""
    state_dir: str | None = None
    """Episode folders and the ledger of live workers (``<log_dir>/.state`` when omitted)."""
    max_episodes: int = Field(default=4, ge=1)
    """Episodes that run at once; more wait in the queue."""
    max_waiting: int = Field(default=16, ge=0)
    """Sessions that may wait for a free episode slot; the next one is told the server is busy."""
    queue_timeout_s: float = Field(default=60.0, ge=0)
    """Seconds a reset waits for a free slot before it is answered "busy"."""
    deadline_s: float | None = Field(default=None, gt=0)
    """Wall seconds an episode may live, from reset (its task's time limit + 120 s when
    omitted): past it the worker and its sandbox are killed, whatever the client does."""
    idle_timeout_s: float = Field(default=300.0, gt=0)
    """An episode whose client sends no step for this long (a step's own run time does not
    count) is closed and its sandbox freed."""
    max_action_bytes: int = Field(default=1_000_000, ge=1024)
    """The largest action a client may send."""
