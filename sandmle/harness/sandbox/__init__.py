"""Sandboxes for agent code: `bwrap` (bubblewrap, no Docker needed) and Docker compose."""

from sandmle.harness.layout import PUBLIC_DIR_METADATA_KEY

from ._isolation import HostIsolation, host_isolation
from ._preflight import AgentPythonError, SandboxPreflightError
from ._release import process_start_time, release_sandboxes
from .bwrap import BwrapSandboxEnvironment
from .bwrap_config import BwrapConfig, BwrapUnavailableError
from .docker import (
    DEFAULT_IMAGE,
    build_image,
    compose_for,
    compose_yaml,
    write_compose,
)
from .limits import SandboxLimits

__all__ = [
    "DEFAULT_IMAGE",
    "PUBLIC_DIR_METADATA_KEY",
    "AgentPythonError",
    "BwrapConfig",
    "BwrapSandboxEnvironment",
    "BwrapUnavailableError",
    "HostIsolation",
    "SandboxPreflightError",
    "SandboxLimits",
    "build_image",
    "compose_for",
    "compose_yaml",
    "host_isolation",
    "process_start_time",
    "release_sandboxes",
    "write_compose",
]
