"""Where the agent's Python appears inside the sandbox: fixed, read-only paths under /opt.

Its host location may be anywhere (a venv in `/tmp/x/venv`, `/root/venv`, a home dir, a
system install), and some of those are paths the sandbox makes writable (`/tmp`), so
mounting it at its host path could put a mount point where the agent can replace it with a
symlink. So the base install is mounted at `/opt/sandmle/python` (a `/usr` install stays
where it is), a venv at `/opt/sandmle/venv` with a `pyvenv.cfg` naming the moved base, and
`python`/`python3` links lead PATH. Nothing of it is writable inside.
"""

import functools
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sandmle.errors import SandmleError

PYTHON_ROOT = "/opt/sandmle"
BASE_MOUNT = f"{PYTHON_ROOT}/python"
VENV_MOUNT = f"{PYTHON_ROOT}/venv"
SHIM_BIN = f"{PYTHON_ROOT}/bin"
SYSTEM_PREFIXES = ("/usr/",)
_PROBE = (
    "import json, os, sys; print(json.dumps({'prefix': sys.prefix, 'base_prefix': "
    "sys.base_prefix, 'real': os.path.realpath(sys.executable), "
    "'version': '%d.%d' % sys.version_info[:2]}))"
)
_SYSTEM_SITE = re.compile(r"^\s*include-system-site-packages\s*=\s*true\s*$", re.I | re.M)

Bind = tuple[str, str, str]  # (bwrap flag, host path or link target, sandbox path)


@dataclass(frozen=True)
class PythonLayout:
    """The agent Python's mounts and environment inside the sandbox."""

    binds: tuple[Bind, ...]
    """Mounts and links under /opt/sandmle (`--tmpfs` entries have an empty host path)."""
    bin_dir: str
    """Leads PATH; holds `python`, `python3` and `pythonX.Y`."""
    env: tuple[tuple[str, str], ...]
    """Extra environment (LD_LIBRARY_PATH for a moved base that links libpython)."""
    pyvenv_cfg: str | None
    """Contents of the venv's `pyvenv.cfg` as seen inside (None: not a venv)."""

    def pyvenv_bind(self, host_file: Path) -> list[Bind]:
        """The bind that shows `host_file` (holding `pyvenv_cfg`) as the venv's config."""
        if self.pyvenv_cfg is None:
            return []
        return [("--ro-bind", str(host_file), f"{VENV_MOUNT}/pyvenv.cfg")]


def _system(path: str) -> bool:
    return (path.rstrip("/") + "/").startswith(SYSTEM_PREFIXES)


def _probe(python: Path) -> dict[str, str]:
    try:
        out = subprocess.run(
            [str(python), "-I", "-c", _PROBE], capture_output=True, text=True, check=True
        )
        return json.loads(out.stdout)
    except (OSError, subprocess.CalledProcessError, ValueError) as error:
        raise SandmleError(
            f"agent Python {python} does not run ({error}); set SANDMLE_AGENT_PYTHON to a "
            f"working interpreter or run `sandmle sandbox runtime`"
        ) from None


@functools.cache
def python_layout(python: Path) -> PythonLayout:
    """Mounts that show `python` (and its venv's base) at fixed paths inside.

    Raises:
      SandmleError: it does not run, or its real executable is outside its base prefix.
    """
    info = _probe(python)
    base, real = info["base_prefix"], info["real"]
    if not (real + "/").startswith(base.rstrip("/") + "/"):
        raise SandmleError(
            f"agent Python {python} runs {real}, outside its base prefix {base}; "
            f"set SANDMLE_AGENT_PYTHON to a venv or a standard install"
        )
    binds: list[Bind] = []
    env: list[tuple[str, str]] = []
    inside_base = base
    if not _system(base):
        inside_base = BASE_MOUNT
        binds.append(("--ro-bind", base, BASE_MOUNT))
        if any(Path(base, "lib").glob("libpython*.so*")):  # linked by an absolute RUNPATH
            env.append(("LD_LIBRARY_PATH", f"{BASE_MOUNT}/lib"))
    executable = inside_base + real[len(base.rstrip("/")) :]
    pyvenv_cfg = None
    bin_dir = SHIM_BIN
    if info["prefix"] != base:
        cfg = Path(info["prefix"], "pyvenv.cfg")
        system_site = bool(_SYSTEM_SITE.search(cfg.read_text())) if cfg.is_file() else False
        pyvenv_cfg = (
            f"home = {os.path.dirname(executable)}\n"
            f"include-system-site-packages = {str(system_site).lower()}\n"
            f"version = {info['version']}\n"
        )
        binds.append(("--ro-bind", info["prefix"], VENV_MOUNT))
        bin_dir = f"{VENV_MOUNT}/bin"  # Python finds pyvenv.cfg beside the bin dir it runs from
    binds.append(("--tmpfs", "", bin_dir))
    if bin_dir == SHIM_BIN:
        # A venv the agent makes records home = SHIM_BIN; Python looks for the standard
        # library beside it (SHIM_BIN/../lib) without resolving the link it ran through.
        binds.append(("--symlink", f"{inside_base}/lib", f"{PYTHON_ROOT}/lib"))
    for name in ("python", "python3", f"python{info['version']}"):
        binds.append(("--symlink", executable, f"{bin_dir}/{name}"))
    return PythonLayout(tuple(binds), bin_dir, tuple(env), pyvenv_cfg)
