"""Freeing what bwrap samples killed before their own cleanup left behind."""

from pathlib import Path

from ._cgroup import remove_cgroup_named
from ._quota import release_tree
from ._samples import BASE_NAME


def release_sandboxes(tmp: Path) -> None:
    """Remove the samples under a temp folder (its ``sandmle-sandboxes``): their cgroups, their
    quota mounts, then the folder itself."""
    base = tmp / BASE_NAME
    for sample in sorted(base.iterdir()) if base.is_dir() else []:
        remove_cgroup_named(sample.name)
    release_tree(tmp)
