"""Freeing what bwrap samples killed before their own cleanup left behind."""

import contextlib
import os
import signal
from pathlib import Path

from ._cgroup import remove_cgroup_named
from ._quota import release_tree
from ._samples import (
    BASE_NAME,
    LAUNCH_FILE,
    owner_gone,
    process_start_time,
    recorded_process,
    remove_root,
)

__all__ = ["process_start_time", "release_orphans", "release_sandboxes"]


def release_sandboxes(tmp: Path) -> None:
    """Remove the samples under a temp folder (its ``sandmle-sandboxes``): their cgroups, their
    quota mounts, then the folder itself."""
    base = tmp / BASE_NAME
    for sample in sorted(base.iterdir()) if base.is_dir() else []:
        remove_cgroup_named(sample.name)
    release_tree(tmp)


def release_orphans(base: Path) -> list[str]:
    """Remove the samples under ``base`` whose maker has ended (their processes, the bwrap
    started ahead for their next exec, cgroups, quota mounts and folders); the names removed.
    A live run's samples are left alone."""
    released = []
    for root in sorted(base.iterdir()) if base.is_dir() else []:
        if not (root.is_dir() and owner_gone(root)):
            continue
        launch = recorded_process(root / LAUNCH_FILE)
        if launch is not None:  # runs as us, not as the sample's uid: ended here
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(launch, signal.SIGKILL)
        remove_root(root)
        remove_cgroup_named(root.name)
        released.append(root.name)
    return released
