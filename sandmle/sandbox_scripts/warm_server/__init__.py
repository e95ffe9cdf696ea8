"""Warm Python fork server: runs INSIDE a sample's sandbox, under the agent's interpreter.

Standard library only: sandmle is not importable in the sandbox. Started once per sample (as
any exec: same uid, cgroup, seccomp, mounts), it says ``ready`` on stdout and serves runs on a
listening unix socket it inherits (fd ``--fd``). It keeps one standby monitor forked, which has
already forked the next run's process from this clean parent (so no fork is on a run's path,
and no state of one run reaches the next); the standby accepts a connection, checks the
request and hands it, fds and all, to that process. The run gets the client's argv, cwd,
environment, umask, rlimits, ignored signals and stdin/stdout/stderr (passed with SCM_RIGHTS),
and ends as a fresh interpreter would: traceback, exit status, non-daemon threads joined,
``atexit``, flushing.

Imports: with ``--eager`` the server imports every ``--preload`` module before it is ready.
Otherwise (on demand) it starts with none and imports a preload module the first time a run's
source names it (``import pandas``, ``from sklearn.ensemble import ...``): the standby hands
such a request back to the server (the bounce), which imports the modules once, for this run
and every later one, and forks a monitor for it. Only modules of the ``--preload`` list are
ever imported in the server, and never with the agent's cwd or paths; a run whose own dir
holds a file or folder named like a module the server has loaded (``joblib.py``) runs cold,
as such a file would shadow that module in a fresh interpreter.

Protocol (client first): request = 4-byte length + marshal((args, cwd, env, umask, rlimits,
ignored signals)) with fds 0-2 attached; the server answers ``R`` (can serve) or ``C`` (run
cold yourself); the client answers ``G``; then the client may send ``S`` + signal byte at any
time; the server ends with ``X`` + marshal((exited, code or signal)). A client that goes
away (the exec killed for time or output) takes the run and all it started with it.

Modules: `request` (what a run asks for, whether a fork can serve it), `imports` (imports on
demand), `monitor` (the standby and its run's parent), `run` (the run's process), `serve`
(the server's loop), `launcher` (the entry point). In the sandbox this package is
``sandmle_warm`` beside the launcher (``harness/sandbox/warm.py`` copies it), and its modules
import each other relatively, never ``sandmle``.
"""
