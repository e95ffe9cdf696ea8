"""The one loader of user YAML files: run files, SFT files, profiles and studies.

Every file may start from another with ``base: other.yaml`` (a path relative to the file):
mappings merge key by key, anything else is replaced, the file's own keys win. Every error, a
missing file, broken YAML, a ``base:`` loop, an unknown key or a bad value, is one line:
``<file>: <field.path>: <what is wrong>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from sandmle.errors import SandmleError, validation_message

M = TypeVar("M", bound=BaseModel)


class Strict(BaseModel):
    """A user-file schema: an unknown key is an error, not a silent no-op."""

    model_config = ConfigDict(extra="forbid")


def read_yaml(path: Path) -> dict[str, Any]:
    """A YAML mapping; a missing file, bad YAML or another top level is a one-line error."""
    if not path.is_file():
        raise SandmleError(f"{path}: file does not exist")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SandmleError(f"{path}: cannot read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise SandmleError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SandmleError(f"{path}: expected a mapping at the top level")
    return data


def read_chain(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """A file with its ``base:`` chain merged in (the file's own keys win)."""
    data = read_yaml(path)
    base = data.pop("base", None)
    if base is None:
        return data
    parent = (path.parent / str(base)).resolve()
    if parent in seen or parent == path.resolve():
        raise SandmleError(f"{path}: base: {base} includes itself")
    if not parent.is_file():
        raise SandmleError(f"{path}: base: {base} does not exist ({parent})")
    return merge(read_chain(parent, (*seen, path.resolve())), data)


def merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """``top`` over ``base``: nested mappings merge, other values replace.

    >>> merge({"training": {"lr": 1, "steps": 2}, "model": "a"}, {"training": {"lr": 3}})
    {'training': {'lr': 3, 'steps': 2}, 'model': 'a'}
    """
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            value = merge(out[key], value)
        out[key] = value
    return out


def validate(schema: type[M], data: Any, source: Path | str, **context: Any) -> M:
    """``data`` as ``schema``; the first bad field is a one-line ``SandmleError``."""
    try:
        return schema.model_validate(data, context={"source": Path(source), **context})
    except ValidationError as exc:
        raise SandmleError(f"{source}: {validation_message(exc)}") from None


def load_file(schema: type[M], path: str | Path) -> M:
    """Read, merge the ``base:`` chain, and validate one user file."""
    file = Path(path)
    return validate(schema, read_chain(file), file)
