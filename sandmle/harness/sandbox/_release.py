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


def process_start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (``/proc/<pid>/stat`` field 22), or
    None when it is gone: with the pid, it tells the process a record names from a later
    process that reused its pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()[19]
