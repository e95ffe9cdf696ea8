"""The competition format: one folder per competition, the same for every benchmark.

```
<root>/<competition_id>/
  competition.yaml      this schema (CompetitionConfig)
  prepared/public/      what the agent sees
  prepared/private/     hidden answers: never copied into an agent's sandbox
```
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from sandmle.errors import CompetitionError, validation_message
from sandmle.harness.confinement import (
    ID_PATTERN,
    check_data_dirs,
    check_grader_code,
    check_inside,
    check_tree,
    data_dir,
    relative_path,
)

CONFIG_FILE = "competition.yaml"
PUBLIC_DIR = Path("prepared/public")
PRIVATE_DIR = Path("prepared/private")
RelativePath = Annotated[str, AfterValidator(relative_path)]
"""A path inside the competition folder: relative, no ``..`` (checked again once resolved)."""


class Thresholds(BaseModel):
    """Milestone scores, in the metric's own units; all four NaN means unknown (no medals)."""

    model_config = ConfigDict(extra="forbid")

    gold: float
    """Score at or beyond which a submission earns gold."""
    silver: float
    """Score at or beyond which a submission earns silver."""
    bronze: float
    """Score at or beyond which a submission earns bronze."""
    median: float
    """Median of the leaderboard; a submission must be strictly better to be above median."""


class GraderSpec(BaseModel):
    """Which registered grader scores this competition, and its options."""

    model_config = ConfigDict(extra="forbid")

    name: str = "standard"
    """A grader registered with ``@grader`` (``sandmle.harness.grading.registry``)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Grader-specific options (see the grader's docstring)."""


class HumanLeaderboards(BaseModel):
    """Leaderboards for MLE-Dojo's HumanRank, paths relative to the competition folder."""

    model_config = ConfigDict(extra="forbid")

    private: RelativePath
    """CSV with a ``score`` column, best first (Kaggle's private board)."""
    public: RelativePath | None = None
    """CSV with a ``score`` column, best first (Kaggle's public board)."""


class CompetitionConfig(BaseModel):
    """The schema of ``competition.yaml``."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=ID_PATTERN)
    """Competition id; also the folder name."""
    name: str
    """Human-readable title."""
    metric: str
    """A metric registered in ``sandmle.harness.grading.metrics``."""
    is_lower_better: bool | None = None
    """Direction of the metric; from the leaderboard, else the metric's default, when omitted."""
    id_columns: list[str] = Field(default_factory=lambda: ["id"])
    """Columns that identify a row; empty means rows are matched by position."""
    target_columns: list[str] = Field(min_length=1)
    """Columns that are graded."""
    answers: RelativePath = "prepared/private/answers.csv"
    """Answers file, relative to the competition folder; must lie under prepared/private."""
    sample_submission: RelativePath = "prepared/public/sample_submission.csv"
    """Sample submission, relative to the competition folder."""
    description: RelativePath = "prepared/public/description.md"
    """Task text shown to the agent, relative to the competition folder; under prepared/public."""
    thresholds: Thresholds | None = None
    """Explicit milestones; exactly one of ``thresholds`` and ``leaderboard`` is set."""
    leaderboard: RelativePath | None = None
    """CSV with a ``score`` column (best first) to derive milestones from by MLE-bench's rule."""
    human_leaderboards: HumanLeaderboards | None = None
    """Private/public boards for HumanRank, where they exist."""
    grader: GraderSpec = Field(default_factory=GraderSpec)
    """Grader and its options."""
    modality: Literal["tabular", "text", "image", "audio", "time-series", "other"] = "tabular"
    """What the data is; informational."""
    task_type: str = ""
    """E.g. binary-classification, regression; informational."""
    tags: dict[str, Any] = Field(default_factory=dict)
    """Free-form metadata (seed task, generator version, flags)."""

    @model_validator(mode="after")
    def _one_source_of_thresholds(self) -> CompetitionConfig:
        if (self.thresholds is None) == (self.leaderboard is None):
            raise ValueError("set exactly one of 'thresholds' and 'leaderboard'")
        if not Path(self.answers).as_posix().startswith(PRIVATE_DIR.as_posix() + "/"):
            raise ValueError(f"'answers' must lie under {PRIVATE_DIR}/, got {self.answers!r}")
        return self


class Competition:
    """A loaded competition: its config plus resolved paths."""

    def __init__(self, root: Path, config: CompetitionConfig) -> None:
        self.root = root
        self.config = config

    @property
    def id(self) -> str:
        return self.config.id

    @property
    def public_dir(self) -> Path:
        return self.root / PUBLIC_DIR

    @property
    def private_dir(self) -> Path:
        return self.root / PRIVATE_DIR

    @property
    def answers_path(self) -> Path:
        return self.root / self.config.answers

    @property
    def sample_submission_path(self) -> Path:
        return self.root / self.config.sample_submission

    @property
    def description_path(self) -> Path:
        return self.root / self.config.description

    def resolve(self, relative: str) -> Path:
        return self.root / relative

    def __repr__(self) -> str:
        return f"Competition({self.id!r}, root={str(self.root)!r})"


def _first_error(exc: ValidationError) -> str:
    return validation_message(exc, where="competition.yaml")


def parse_config(data: Any, source: str = CONFIG_FILE) -> CompetitionConfig:
    """Validate a parsed ``competition.yaml``; a bad field is a one-line CompetitionError."""
    if not isinstance(data, dict):
        raise CompetitionError(f"{source}: expected a mapping of fields, got {type(data).__name__}")
    try:
        config = CompetitionConfig.model_validate(data)
    except ValidationError as exc:
        raise CompetitionError(f"{source}: {_first_error(exc)}") from None
    _check_metric(config, source)
    _check_thresholds_order(config, source)
    return config


def _check_metric(config: CompetitionConfig, source: str) -> None:
    from sandmle.harness.grading.metrics import metric_names
    from sandmle.harness.plugins import GRADER_PLUGINS, load_plugins

    if config.metric not in metric_names():
        load_plugins(GRADER_PLUGINS)  # benchmarks may register metrics beside their graders
    if config.metric not in metric_names():
        known = ", ".join(sorted(metric_names()))
        raise CompetitionError(f"{source}: metric {config.metric!r} is unknown (known: {known})")


def _check_thresholds_order(config: CompetitionConfig, source: str) -> None:
    t = config.thresholds
    if t is None:
        return
    values = [t.gold, t.silver, t.bronze, t.median]
    if all(math.isnan(v) for v in values):
        return  # milestones unknown (no leaderboard exists): graded, never medalled
    if any(math.isnan(v) for v in values):
        raise CompetitionError(f"{source}: thresholds must all be numbers, or all NaN (unknown)")
    lower = metric_direction(config)
    ordered = t.gold <= t.silver <= t.bronze if lower else t.gold >= t.silver >= t.bronze
    if not ordered:
        direction = "lower" if lower else "higher"
        raise CompetitionError(
            f"{source}: thresholds gold={t.gold}, silver={t.silver}, bronze={t.bronze} are out of "
            f"order for a {direction}-is-better metric (check is_lower_better)"
        )


def metric_direction(config: CompetitionConfig) -> bool:
    """``is_lower_better`` as configured, else the metric's default direction."""
    if config.is_lower_better is not None:
        return config.is_lower_better
    from sandmle.harness.grading.metrics import get_metric

    return get_metric(config.metric).lower_is_better


def load_competition(
    path: str | Path, *, linked_dirs: bool = False, trust_code: bool | None = None
) -> Competition:
    """Load one competition folder (the folder holding ``competition.yaml``).

    The folder is untrusted data (:mod:`sandmle.harness.confinement`): a path that leads out
    of it, a link out of ``prepared/public``, or a grader that runs the folder's own code
    (unless ``trust_code``, default ``$SANDMLE_TRUST_PACK_CODE``) is a one-line error.
    ``linked_dirs`` accepts ``prepared/public`` and ``prepared/private`` as symlinks, for views
    sandmle itself writes onto data the user prepared.
    """
    root = Path(path)
    config_path = root / CONFIG_FILE
    if not root.is_dir():
        raise CompetitionError(f"{root}: competition folder does not exist")
    if not config_path.is_file():
        return _load_from_sources(root, linked_dirs, trust_code)
    if config_path.is_symlink():
        raise CompetitionError(
            f"{config_path}: is a symlink; a competition's files must be its own"
        )
    try:
        data = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CompetitionError(f"{config_path}: not valid YAML ({first})") from None
    config = parse_config(data, str(config_path))
    if config.id != root.name:
        raise CompetitionError(
            f"{config_path}: id {config.id!r} does not match the folder name {root.name!r}"
        )
    competition = Competition(root.resolve(), config)
    confine(competition, linked_dirs, trust_code)
    _check_files(competition, config_path)
    return competition


def _load_from_sources(root: Path, linked_dirs: bool, trust_code: bool | None) -> Competition:
    """A folder without competition.yaml: ask the registered competition sources."""
    from sandmle.harness.plugins import COMPETITION_SOURCES, load_plugins

    for describe in load_plugins(COMPETITION_SOURCES):
        config = describe(root)
        if config is not None:
            competition = Competition(root.resolve(), config)
            confine(competition, linked_dirs, trust_code)
            _check_files(competition, root)
            return competition
    raise CompetitionError(f"{root}: no {CONFIG_FILE} in this folder, and no known layout")


def confine(competition: Competition, linked_dirs: bool = False, trust: bool | None = None) -> None:
    """Every path the config names stays in its folder; the public folder is plain and apart."""
    root, config = competition.root, competition.config
    public = data_dir(root, PUBLIC_DIR, linked=linked_dirs)
    private = data_dir(root, PRIVATE_DIR, linked=linked_dirs)
    check_data_dirs(public, private, root)
    check_tree(public, str(PUBLIC_DIR))
    check_inside(root, "answers", config.answers, [private], str(PRIVATE_DIR))
    check_inside(root, "description", config.description, [public], str(PUBLIC_DIR))
    anywhere = [root, public, private]
    named = {"sample_submission": config.sample_submission, "leaderboard": config.leaderboard}
    if config.human_leaderboards is not None:
        named["human_leaderboards.private"] = config.human_leaderboards.private
        named["human_leaderboards.public"] = config.human_leaderboards.public
    for field, relative in named.items():
        if relative is not None:
            check_inside(root, field, relative, anywhere, "the competition folder")
    check_grader_code(config.grader.name, str(root / CONFIG_FILE), trust)


def _check_files(competition: Competition, source: Path) -> None:
    config = competition.config
    required = {"answers": config.answers, "sample_submission": config.sample_submission}
    if config.leaderboard:
        required["leaderboard"] = config.leaderboard
    for field, rel in required.items():
        if not competition.resolve(rel).is_file():
            raise CompetitionError(f"{source}: {field} file {rel!r} does not exist")


def write_config(config: CompetitionConfig, root: Path) -> Path:
    """Write ``competition.yaml`` deterministically (same config, same bytes)."""
    data = config.model_dump(mode="json", exclude_none=True)
    path = root / CONFIG_FILE
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path
