"""The seccomp filter every sandboxed process runs under, compiled once per host process.

A deny list in the spirit of Docker's default profile and Flatpak's bubblewrap use: the
syscalls an ML agent never needs and that widen the kernel attack surface or reach outside
the sample (the kernel keyring, new user namespaces, mounts, ptrace, eBPF, io_uring, module
and kexec loading). Denied calls fail with EPERM, so programs see a normal error; `clone3`
gets ENOSYS (its flags sit in memory a filter cannot read), which makes glibc fall back to
`clone`, whose flags are checked. Syscalls of another ABI (i386, x32) kill the process.
"""

import errno
import functools
import tempfile

DENIED = (
    # kernel keyring: keys of the host's session, and a channel between samples
    "keyctl", "add_key", "request_key",
    # mounts and namespaces
    "mount", "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr", "setns",
    # other processes' memory and fds: the warm server and the runs it forks share a uid
    # and a PID namespace, so nothing may reach into another process (its fds, its pages)
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_open", "pidfd_getfd",
    "process_madvise", "process_mrelease", "kcmp", "migrate_pages", "move_pages",
    # kernel attack surface
    "perf_event_open", "bpf", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "open_by_handle_at", "name_to_handle_at",
    # the machine itself
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "swapon", "swapoff", "reboot", "syslog", "acct", "quotactl",
)  # fmt: skip
CLONE_NEWUSER = 0x10000000
NAMESPACE_CALLS = ("clone", "unshare")
"""Calls denied only when their flags (argument 0) ask for a new user namespace."""


class SeccompUnavailableError(Exception):
    """libseccomp or its Python binding is missing."""


@functools.cache
def seccomp_program() -> bytes:
    """The filter as a BPF program, the format `bwrap --seccomp FD` reads.

    Raises:
      SeccompUnavailableError: `pyseccomp` or the libseccomp library cannot be loaded.
    """
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as error:  # OSError: libseccomp.so.2 missing
        raise SeccompUnavailableError(f"libseccomp is unavailable ({error})") from error
    deny = seccomp.ERRNO(errno.EPERM)
    program = seccomp.SyscallFilter(defaction=seccomp.ALLOW)  # other ABIs: KILL (the default)
    for name in DENIED:
        program.add_rule(deny, name)
    for name in NAMESPACE_CALLS:
        flags = seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)
        program.add_rule(deny, name, flags)
    program.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as sink:
        program.export_bpf(sink)
        sink.seek(0)
        return sink.read()
