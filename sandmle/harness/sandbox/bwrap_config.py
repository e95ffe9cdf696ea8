"""What a `bwrap` sandbox is set up from: its config, the agent's Python, the sample's data.

`BwrapConfig` is the sandbox config of a task (a model or a YAML file of its fields);
`sample_public_dir` picks the dir a sample sees at /home/data and checks that it holds only
plain files and folders (no symlink out) and that the sandbox user can read it.
"""

import functools
import os
import posixpath
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml
from inspect_ai.util import SandboxEnvironmentConfigType
from pydantic import BaseModel, Field, field_validator

from sandmle.errors import SandmleError
from sandmle.harness.confinement import check_tree
from sandmle.harness.layout import PUBLIC_DIR_METADATA_KEY

from ._command import WRITABLE_DIRS
from .limits import SandboxLimits
from .warm import WarmPythonConfig

AGENT_PYTHON_ENV = "SANDMLE_AGENT_PYTHON"
"""Environment variable naming the Python interpreter agents get (e.g. a venv with more ML libs)."""
BWRAP_INSTALL_HINT = "apt-get install -y bubblewrap"
STACK_MODULES = ("numpy", "pandas", "sklearn", "scipy")
"""Modules the agent's Python must import inside the sandbox (checked before a task's samples)."""


def default_agent_python() -> Path:
    """``$SANDMLE_AGENT_PYTHON``, else the built agent runtime, else sandmle's own Python."""
    configured = os.environ.get(AGENT_PYTHON_ENV)
    if configured:
        return Path(configured)
    from .runtime import find_runtime  # lazy: it reads package metadata

    runtime = find_runtime()
    return runtime.python if runtime is not None else Path(sys.executable)


class BwrapConfig(BaseModel, frozen=True):
    """How the `bwrap` sandbox is set up (pass as the sandbox config of a task)."""

    public_dir: Path | None = None
    """Host dir mounted read-only at /home/data; sample metadata `sandmle_public_dir` wins."""

    limits: SandboxLimits = SandboxLimits()
    """Resource limits of each sample (memory, processes, disk: totals over the sample)."""

    ro_binds: tuple[tuple[Path, str], ...] = ()
    """Extra read-only mounts as (host path, sandbox path) pairs; never inside a writable dir."""

    python: Path = Field(default_factory=default_agent_python)
    """The agent's Python (default ``$SANDMLE_AGENT_PYTHON``, else the agent runtime once
    built, else sandmle's own); mounted read-only under /opt/sandmle, first on PATH."""

    required_modules: tuple[str, ...] = STACK_MODULES
    """Modules the preflight check imports with the agent's Python before the first sample."""

    base_dir: Path | None = None
    """Where per-sample dirs are made; default `$TMPDIR/sandmle-sandboxes`."""

    warm_python: WarmPythonConfig = WarmPythonConfig()
    """A warm interpreter per sample that serves the agent's ``python`` runs (see `warm`)."""

    @field_validator("ro_binds")
    @classmethod
    def _outside_writable_dirs(
        cls, binds: tuple[tuple[Path, str], ...]
    ) -> tuple[tuple[Path, str], ...]:
        for _, dest in binds:
            clean = posixpath.normpath(posixpath.join("/", dest))
            if any(clean == d or clean.startswith(d + "/") for d in WRITABLE_DIRS):
                raise ValueError(
                    f"ro_binds target {dest} lies inside a dir the agent can write; "
                    f"mount it elsewhere (e.g. under /opt)"
                )
        return binds


class BwrapUnavailableError(SandmleError):
    """`bwrap` is not installed."""


@functools.cache
def bwrap_path() -> str:
    path = shutil.which("bwrap")
    if path is None:
        raise BwrapUnavailableError(f"bwrap not found on PATH; install it: {BWRAP_INSTALL_HINT}")
    return path


def resolve_config(config: SandboxEnvironmentConfigType | None) -> BwrapConfig:
    if config is None:
        return BwrapConfig()
    if isinstance(config, BwrapConfig):
        return config
    if isinstance(config, str):  # a YAML file holding BwrapConfig fields
        return BwrapConfig.model_validate(yaml.safe_load(Path(config).read_text()) or {})
    raise SandmleError(f"bwrap sandbox config must be a BwrapConfig or YAML path, not {config!r}")


def sample_public_dir(config: BwrapConfig, metadata: dict[str, Any]) -> Path | None:
    value = metadata.get(PUBLIC_DIR_METADATA_KEY) or config.public_dir
    if value is None:
        return None
    path = Path(value).resolve()
    if not path.is_dir():
        raise SandmleError(f"public data dir {path} does not exist; fix {PUBLIC_DIR_METADATA_KEY}")
    check_tree(path, "public data dir")  # again at start: a link planted since the load
    mode = path.stat().st_mode
    if os.geteuid() == 0 and mode & 0o005 != 0o005:  # the sample's uid is an "other"
        raise SandmleError(
            f"public data dir {path} (mode {oct(mode & 0o777)}) is unreadable to the sandbox "
            f"user; make it world-readable: chmod -R o+rX {path}"
        )
    return path
