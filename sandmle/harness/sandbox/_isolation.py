"""What this host lets the sandbox enforce, said once and loudly when it is less than all.

Full isolation needs root (a per-sample uid, cgroup and tmpfs) and libseccomp. Anything
missing is named in a warning the first time a task starts, and in each sample's log
(an info event `sandbox_isolation`), so a weaker run is never mistaken for a full one.
"""

import functools
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue

from ._cgroup import CgroupUnavailableError, cgroup_roots
from ._quota import mount_quota, unmount_quota
from ._seccomp import SeccompUnavailableError, seccomp_program

logger = logging.getLogger(__name__)
ISOLATION_EVENT = "sandbox_isolation"


@dataclass(frozen=True)
class HostIsolation:
    """The isolation this host supports."""

    cgroup: str | None
    """"v2" or "v1" when samples get a cgroup (total memory, pids, CPU), else None."""
    disk_quota: bool
    """Whether samples get a sized tmpfs (else the disk quota is polled with `du`)."""
    seccomp: bool
    """Whether the syscall deny list is applied."""
    missing: tuple[str, ...]
    """One line per missing part: what is weaker, and why."""

    def as_metadata(self) -> dict[str, JsonValue]:
        return {
            "cgroup": self.cgroup,
            "disk_quota": "tmpfs" if self.disk_quota else "polled",
            "seccomp": self.seccomp,
            "missing": list(self.missing),
        }


def _quota_works() -> bool:
    if os.geteuid() != 0:
        return False
    with tempfile.TemporaryDirectory(prefix="sandmle-quota-probe-") as probe:
        try:
            mount_quota(Path(probe), 1)
        except OSError:
            return False
        unmount_quota(Path(probe))
    return True


@functools.cache
def host_isolation() -> HostIsolation:
    """Probe once per process what the sandbox can enforce here."""
    missing = []
    try:
        cgroup: str | None = cgroup_roots()[0]
    except (CgroupUnavailableError, OSError) as error:
        cgroup = None
        missing.append(
            f"no per-sample cgroup ({error}): memory is limited per process (RLIMIT_AS), "
            f"processes per uid (RLIMIT_NPROC), CPU not at all"
        )
    disk_quota = _quota_works()
    if not disk_quota:
        missing.append(
            "no per-sample tmpfs (needs root): the disk quota is polled and can be overshot"
        )
    try:
        seccomp_program()
        seccomp = True
    except SeccompUnavailableError as error:
        seccomp = False
        missing.append(f"no seccomp filter ({error}); install it: apt-get install -y libseccomp2")
    return HostIsolation(cgroup, disk_quota, seccomp, tuple(missing))


@functools.cache
def warn_if_weaker() -> HostIsolation:
    """`host_isolation()`, logging one warning per process when anything is missing."""
    found = host_isolation()
    if found.missing:
        logger.warning("SANDBOX ISOLATION IS WEAKER ON THIS HOST: %s", "; ".join(found.missing))
    return found
