"""One function turns any competition folder into an Inspect ``Sample``; every benchmark uses it.

Sample metadata names the competition's host folder so the scorer can grade on the host;
the agent never sees metadata, and its sandbox only mounts the public dir.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.util import SandboxEnvironmentSpec

from sandmle.errors import SandmleError
from sandmle.harness.competition import Competition, load_competition
from sandmle.harness.instructions import task_prompt
from sandmle.harness.layout import PUBLIC_DIR_METADATA_KEY

COMPETITION_ROOT_KEY = "competition_root"


def competition_sample(
    competition: Competition,
    *,
    sandbox: SandboxEnvironmentSpec | None = None,
    limits_text: str = "none stated",
    metadata: dict[str, Any] | None = None,
    toolkit: bool = False,
) -> Sample:
    """The Inspect sample for one competition: its task text, id and host-side metadata."""
    config = competition.config
    _BUILT[str(competition.root)] = competition
    return Sample(
        id=competition.id,
        input=task_prompt(competition, limits=limits_text, toolkit=toolkit),
        target="",
        sandbox=sandbox,
        metadata={
            "competition_id": competition.id,
            COMPETITION_ROOT_KEY: str(competition.root),
            PUBLIC_DIR_METADATA_KEY: str(competition.public_dir),
            "metric": config.metric,
            "modality": config.modality,
            "task_type": config.task_type,
            **(metadata or {}),
        },
    )


def competition_dataset(samples: list[Sample], name: str) -> MemoryDataset:
    return MemoryDataset(samples, name=name)


_BUILT: dict[str, Competition] = {}
"""Competitions samples were built from in this process, by root: loaded as their benchmark
loads them (an MLE-Dojo view's linked folders), so the scorer grades the same competition."""


@lru_cache(maxsize=1024)
def _load(root: str) -> Competition:
    return _BUILT.get(root) or load_competition(Path(root))


def competition_for(metadata: dict[str, Any]) -> Competition:
    """The competition a sample belongs to, loaded from its metadata (cached)."""
    root = metadata.get(COMPETITION_ROOT_KEY)
    if not root:
        raise SandmleError("sample metadata has no competition_root: not a sandmle sample")
    return _load(str(root))
