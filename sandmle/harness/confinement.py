"""A pack is data: the paths it names stay in its folders, no symlink leads out, no code of it runs.

Packs travel (a lab's held-out pack, a generated pack on a shared drive), so each competition
folder is checked as untrusted input when it is loaded, before any sample or grader sees it:

- every path ``competition.yaml`` names is relative, has no ``..``, and resolves inside its own
  folder: answers in ``prepared/private``, the description in ``prepared/public``, the sample
  submission and leaderboards in the competition folder;
- ``prepared/public`` (mounted into the agent's sandbox) is a real directory of the
  competition, apart from ``prepared/private``, holding only plain files and folders: no
  symlink, FIFO, socket or device anywhere in it;
- a grader that runs code the pack brings is refused unless the user trusts the pack's code
  (``SANDMLE_TRUST_PACK_CODE=1``, which ``--trust-pack-code`` flags set).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from sandmle.errors import CompetitionError

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
"""Competition and pack task ids: a folder name, never a path."""
TRUST_ENV = "SANDMLE_TRUST_PACK_CODE"
"""Set to 1 to let graders run code a pack brings (on this machine, as this user)."""
_PACK_CODE_GRADERS: set[str] = set()
_WARNED: set[str] = set()
logger = logging.getLogger(__name__)


class UnsafePackError(CompetitionError):
    """A pack names a path outside its folder, links out of it, or brings code to run."""


def path_problem(value: str) -> str | None:
    """Why ``value`` is not a plain path inside a folder (None when it is one)."""
    if not value.strip():
        return "is empty"
    if "\0" in value:
        return "holds a NUL byte"
    path = PurePosixPath(value)
    if path.is_absolute():
        return "is an absolute path"
    if ".." in path.parts:
        return "climbs out with '..'"
    return None


def relative_path(value: str) -> str:
    """A pydantic check: ``value`` as given, or a ValueError that says what to write."""
    problem = path_problem(value)
    if problem is not None:
        raise ValueError(f"{value!r} {problem}; give a path inside the competition folder")
    return value


def data_dir(root: Path, relative: Path, *, linked: bool = False) -> Path:
    """``root/relative`` resolved, after checking no part of it is a symlink.

    ``linked`` lets the folder itself be a symlink (a view sandmle wrote onto data the user
    prepared, e.g. MLE-Dojo's); nothing inside it may be one either way.
    """
    here = root
    for part in relative.parts:
        here = here / part
        if here.is_symlink() and not linked:
            raise UnsafePackError(
                f"{root}: {here.relative_to(root)} is a symlink; "
                "a competition's folders must be real directories inside it"
            )
    return here.resolve()


def check_data_dirs(public: Path, private: Path, root: Path) -> None:
    """The public folder is mounted for the agent: it must not hold the private one, nor lie in it."""
    if public.is_relative_to(private) or private.is_relative_to(public):
        raise UnsafePackError(
            f"{root}: prepared/public resolves to {public}, which overlaps prepared/private"
        )


def check_tree(folder: Path, field: str) -> None:
    """Every entry below ``folder`` is a plain file or directory (no symlink, FIFO, device)."""
    if not folder.is_dir():
        return
    pending = [folder]
    while pending:
        current = pending.pop()
        with os.scandir(current) as entries:
            for entry in entries:  # d_type answers these: no stat call per file
                if entry.is_dir(follow_symlinks=False):
                    pending.append(Path(entry.path))
                elif entry.is_symlink() or not entry.is_file(follow_symlinks=False):
                    kind = "a symlink" if entry.is_symlink() else "not a regular file"
                    raise UnsafePackError(
                        f"{field}: {entry.path} is {kind}; only plain files and folders "
                        "may be mounted into a sandbox"
                    )


def check_inside(
    root: Path, field: str, relative: str, allowed: Iterable[Path], where: str
) -> None:
    """``root/relative``, resolved (symlinks followed), lies inside one of ``allowed``."""
    target = (root / relative).resolve()
    if not any(target.is_relative_to(folder) for folder in allowed):
        raise UnsafePackError(f"{root}: {field}: {relative!r} resolves outside {where}")


def mark_pack_code_grader(name: str) -> None:
    """Record that grader ``name`` runs code the competition folder supplies."""
    _PACK_CODE_GRADERS.add(name)


def runs_pack_code(name: str) -> bool:
    """Whether grader ``name`` runs code the competition folder supplies."""
    if name not in _PACK_CODE_GRADERS:
        from sandmle.harness.plugins import GRADER_PLUGINS, load_plugins

        load_plugins(GRADER_PLUGINS)  # benchmark graders register on import
    return name in _PACK_CODE_GRADERS


def trusts_pack_code() -> bool:
    """Whether the user said to trust code packs bring (``SANDMLE_TRUST_PACK_CODE=1``)."""
    return os.environ.get(TRUST_ENV, "").strip().lower() in ("1", "true", "yes")


def trust_pack_code() -> None:
    """Trust code packs bring, in this process and those it starts (a CLI flag's effect)."""
    os.environ[TRUST_ENV] = "1"


def check_grader_code(grader: str, source: str, trust: bool | None = None) -> None:
    """Refuse a grader that would run the pack's own code, unless the user trusts it."""
    if grader == "standard" or not runs_pack_code(grader):
        return
    if trust if trust is not None else trusts_pack_code():
        if source not in _WARNED:  # once per competition: loads repeat
            _WARNED.add(source)
            logger.warning("%s: grader %r runs the pack's own code on this host", source, grader)
        return
    raise UnsafePackError(
        f"{source}: grader.name: {grader!r} runs code the pack supplies (grader.options); "
        f"refused: pass --trust-pack-code or set {TRUST_ENV}=1 only for a pack you trust"
    )
