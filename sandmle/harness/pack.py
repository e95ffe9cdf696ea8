"""Packs: a root folder of competitions, optionally with a ``pack.yaml`` manifest."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sandmle.errors import CompetitionError, validation_message
from sandmle.harness.competition import CONFIG_FILE, Competition, load_competition
from sandmle.harness.confinement import ID_PATTERN, UnsafePackError

PACK_FILE = "pack.yaml"


class PackTask(BaseModel):
    """One task entry of a pack manifest."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=ID_PATTERN)
    """Competition id (a sub-folder of the pack root; a folder name, never a path)."""
    modality: str | None = None
    """Modality of the task, for filtering."""
    seed_task: str | None = None
    """The real competition whose structure the task keeps, if any."""
    baselines: dict[str, float | None] = Field(default_factory=dict)
    """Scores of the generator's baseline models (dummy, linear, strong, oracle)."""
    attempts: int | None = None
    """Attempts a generator made for this slot, the accepted one included."""
    rejections: list[str] = Field(default_factory=list)
    """Why each rejected attempt was turned down (``rule: reason``), in order."""
    substitute_for: str | None = None
    """The seed task the slot was meant for, where that family failed and ``seed_task`` took over."""


class PackManifest(BaseModel):
    """The schema of ``pack.yaml``."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """Pack name."""
    version: str = "1"
    """Pack version; logs record it so results are comparable."""
    seed: int | None = None
    """Seed the pack was generated from."""
    generator_version: str | None = None
    """Version of the generator that wrote it."""
    tasks: list[PackTask] = Field(default_factory=list)
    """Tasks in the pack, in order."""


class Pack:
    """A loaded pack: manifest plus competitions, in manifest order."""

    def __init__(self, root: Path, manifest: PackManifest, competitions: list[Competition]):
        self.root = root
        self.manifest = manifest
        self.competitions = competitions

    def __len__(self) -> int:
        return len(self.competitions)

    def get(self, competition_id: str) -> Competition:
        for competition in self.competitions:
            if competition.id == competition_id:
                return competition
        raise CompetitionError(f"{self.root}: pack has no task {competition_id!r}")


def read_manifest(root: Path) -> PackManifest | None:
    path = root / PACK_FILE
    if not path.is_file():
        return None
    try:
        return PackManifest.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except yaml.YAMLError as exc:
        raise CompetitionError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    except ValidationError as exc:
        raise CompetitionError(f"{path}: {validation_message(exc)}") from None


def load_pack(
    path: str | Path, task_ids: list[str] | None = None, *, trust_code: bool | None = None
) -> Pack:
    """Load every competition under ``path`` (or only ``task_ids``), manifest order first.

    A pack is untrusted data: each task folder must be a real folder of the pack, and each
    competition is confined (``load_competition``; ``trust_code`` as there).
    """
    root = Path(path)
    if not root.is_dir():
        raise CompetitionError(f"{root}: pack folder does not exist")
    if (root / CONFIG_FILE).is_file():  # a single competition is a pack of one
        competition = load_competition(root, trust_code=trust_code)
        return Pack(
            root,
            PackManifest(name=competition.id, tasks=[PackTask(id=competition.id)]),
            [competition],
        )
    manifest = pack_manifest(root)
    ids = [t.id for t in manifest.tasks]
    if task_ids is not None:
        unknown = sorted(set(task_ids) - set(ids))
        if unknown:
            raise CompetitionError(f"{root}: pack has no task(s) {', '.join(unknown)}")
        ids = [i for i in ids if i in set(task_ids)]
    if not ids:
        raise CompetitionError(f"{root}: no competitions found (no */{CONFIG_FILE})")
    folders = [task_folder(root, i) for i in ids]
    return Pack(
        root.resolve(), manifest, [load_competition(f, trust_code=trust_code) for f in folders]
    )


def pack_manifest(root: Path) -> PackManifest:
    """``pack.yaml``, else a manifest of the task folders found, by name."""
    manifest = read_manifest(root)
    if manifest is None:
        ids = sorted(p.name for p in root.iterdir() if (p / CONFIG_FILE).is_file())
        tasks = [PackTask(id=task_folder(root, i).name) for i in ids]
        manifest = PackManifest(name=root.name, tasks=tasks)
    return manifest


def task_folder(root: Path, task_id: str) -> Path:
    """The folder of task ``task_id``: a real folder of the pack, not a link to elsewhere."""
    if not re.fullmatch(ID_PATTERN, task_id):
        raise UnsafePackError(f"{root}: task id {task_id!r} is not a folder name ({ID_PATTERN})")
    folder = root / task_id
    if folder.is_symlink():
        raise UnsafePackError(f"{root}: task {task_id!r} is a symlink; a pack holds its own tasks")
    return folder


def competition_digest(competition: Competition) -> str:
    """SHA-256 over a task's files (paths and bytes): two hosts serve the same task only when
    it is equal (a regenerated pack may reuse a task id with other contents)."""
    digest = hashlib.sha256()
    for path in sorted(competition.root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            digest.update(path.relative_to(competition.root).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def write_manifest(manifest: PackManifest, root: Path) -> Path:
    """Write ``pack.yaml`` deterministically."""
    path = root / PACK_FILE
    data = manifest.model_dump(mode="json", exclude_none=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path
