"""The task builder every benchmark uses: competitions in, an Inspect ``Task`` out."""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

from inspect_ai import Task
from inspect_ai.solver import Generate, Solver, TaskState, basic_agent
from inspect_ai.util import SandboxEnvironmentSpec
from pydantic import BaseModel, ValidationError

from sandmle.errors import SandmleError, validation_message
from sandmle.harness.competition import Competition
from sandmle.harness.profiles import DEFAULT_PROFILE, profile_values
from sandmle.harness.samples import competition_dataset, competition_sample
from sandmle.harness.sandbox import (
    DEFAULT_IMAGE,
    BwrapConfig,
    SandboxLimits,
    host_isolation,
    write_compose,
)
from sandmle.harness.sandbox.k8s import DEFAULT_DATA_CLAIM, write_values
from sandmle.harness.sandbox.limits import (
    DEFAULT_COMMAND_TIMEOUT_S,
    DEFAULT_CPU_TIME_S,
    DEFAULT_FILE_SIZE_MB,
    DEFAULT_SHM_MB,
    DEFAULT_THREADS,
)
from sandmle.harness.sandbox.runtime import AGENT_PYTHON_ENV, ensure_runtime
from sandmle.harness.sandbox.warm import WarmPythonConfig
from sandmle.harness.scorer import medal_scorer
from sandmle.harness.solvers import guard, sample_setup
from sandmle.harness.tools import agent_tools, command_timeout

logger = logging.getLogger(__name__)

SandboxType = Literal["bwrap", "docker", "k8s", "local"]

DEFAULT_TIME_LIMIT = 1800
"""Seconds of wall time per sample; micro tasks run in seconds, agents need minutes."""
DEFAULT_MESSAGE_LIMIT = 100
DEFAULT_MEMORY_MB = 8192
DEFAULT_MAX_PROCESSES = 256
DEFAULT_DISK_MB = 4096


def default_agent(timeout_s: int | None = None) -> Solver:
    """The solver used when none is given: a plain tool-using loop with the standard tools,
    ``timeout_s`` seconds per command (None: the task's)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        tools = agent_tools(command_timeout(timeout_s))
        return await basic_agent(tools=tools, max_attempts=1)(state, generate)

    return guard(solve)


def _sample_file(competition: Competition, folder: str, suffix: str) -> Path:
    key = hashlib.sha1(str(competition.root).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / folder / f"{competition.id}-{key}{suffix}"


def agent_image(limits: TaskLimits) -> str:
    """The docker/k8s agent image: ``-T image``, else the default one built with the extras."""
    if limits.image is not None:
        return limits.image
    if not limits.agent_extras:
        return DEFAULT_IMAGE
    return f"{DEFAULT_IMAGE.split(':')[0]}:{'-'.join(sorted(limits.agent_extras))}"


def bwrap_python(extras: tuple[str, ...]) -> Path | None:
    """The agent Python with ``extras`` (the agent runtime, built on first use); None: default."""
    if not extras:
        return None
    configured = os.environ.get(AGENT_PYTHON_ENV)
    if configured:
        logger.warning(
            "%s is set, so the agent runs on it; agent_extras %s are not installed by sandmle",
            AGENT_PYTHON_ENV,
            ", ".join(extras),
        )
        return Path(configured)
    return ensure_runtime(extras).python


def sandbox_spec(competition: Competition, limits: TaskLimits) -> SandboxEnvironmentSpec:
    """The sandbox for one competition's sample (only its public dir is ever mounted)."""
    box = limits.sandbox_limits()
    if limits.sandbox == "bwrap":
        config = BwrapConfig(limits=box, warm_python=WarmPythonConfig(enabled=limits.warm_python))
        python = bwrap_python(limits.agent_extras)
        if python is not None:
            config = config.model_copy(update={"python": python})
        return SandboxEnvironmentSpec("bwrap", config)
    if limits.sandbox == "docker":
        path = _sample_file(competition, "sandmle-compose", ".yaml")
        write_compose(
            path, public_dir=competition.public_dir, image=agent_image(limits), limits=box
        )
        return SandboxEnvironmentSpec("docker", str(path))
    if limits.sandbox == "k8s":
        path = _sample_file(competition, "sandmle-k8s", "-values.yaml")
        write_values(
            path,
            public_dir=competition.public_dir,
            competition_id=competition.id,
            image=agent_image(limits),
            limits=box,
            data_claim=limits.k8s_data_claim,
        )
        return SandboxEnvironmentSpec("k8s", str(path))
    logger.warning(
        "sandbox 'local' does not isolate the agent: it can read the host, answers included"
    )
    return SandboxEnvironmentSpec("local")


def limits_text(time_limit: int | None, message_limit: int | None, limits: SandboxLimits) -> str:
    parts = [
        f"{time_limit} s of wall time" if time_limit else None,
        f"{message_limit} messages" if message_limit else None,
        f"{limits.command_timeout_s} s per command",
        f"{limits.memory_mb} MiB of memory",
    ]
    return ", ".join(p for p in parts if p)


class TaskLimits(BaseModel, frozen=True, extra="forbid"):
    """The sandbox and limits every benchmark task takes as ``-T`` arguments.

    ``profile`` names a budget (``sandmle.harness.profiles``); fields given explicitly
    override it. Every field is a ``-T`` argument of every benchmark task.
    """

    profile: str = DEFAULT_PROFILE
    """Budget profile the other fields default to: ``micro`` or ``mle-bench``."""
    sandbox: SandboxType = "bwrap"
    """``bwrap`` (default, isolated), ``docker``, ``k8s`` (Inspect's Kubernetes sandbox), or
    ``local`` (no isolation)."""
    time_limit: int | None = DEFAULT_TIME_LIMIT
    """Wall-clock seconds per sample."""
    message_limit: int | None = DEFAULT_MESSAGE_LIMIT
    """Messages per sample."""
    token_limit: int | None = None
    """Tokens per sample."""
    command_timeout: int = DEFAULT_COMMAND_TIMEOUT_S
    """Seconds per agent command (a bash/python call, a search's script run, a Dojo code run),
    for every scaffold unless its own ``-S`` value says otherwise."""
    memory_mb: int = DEFAULT_MEMORY_MB
    """Memory cap in the sandbox, in MiB."""
    max_processes: int = DEFAULT_MAX_PROCESSES
    """Process cap in the sandbox."""
    disk_mb: int = DEFAULT_DISK_MB
    """Disk quota of the sample's writable dirs, in MiB."""
    cpu_time_s: int = DEFAULT_CPU_TIME_S
    """CPU seconds per process."""
    file_size_mb: int = DEFAULT_FILE_SIZE_MB
    """Largest file a process may write, in MiB."""
    shm_mb: int = DEFAULT_SHM_MB
    """Size of ``/dev/shm``, in MiB."""
    cpus: float | None = None
    """CPU cores per sample; None for no cap."""
    gpus: int = 0
    """GPUs passed in: 0 none, N the first N, -1 all."""
    threads: int = DEFAULT_THREADS
    """Threads numeric libraries start (``OMP_NUM_THREADS`` and kin)."""
    agent_extras: tuple[str, ...] = ()
    """Packages the agent gets beyond numpy/pandas/scikit-learn/scipy/pillow (bwrap: the agent
    runtime built with them; docker/k8s: the image ``sandmle-agent:<extras>``)."""
    image: str | None = None
    """Agent image for docker and k8s; default ``sandmle-agent:latest`` (or with the extras)."""
    k8s_data_claim: str = DEFAULT_DATA_CLAIM
    """k8s: the PersistentVolumeClaim holding the data dir, laid out as on this host."""
    warm_python: bool = True
    """A warm interpreter per sample (bwrap): ``python`` runs skip the ML imports."""
    epochs: int = 1
    """Runs per sample."""
    toolkit: bool = False
    """Ship the AutoML baseline as ``automl.py`` in the agent's work dir and name it in the
    prompt (``python automl.py FAMILY``): an easier setting, for small models that cannot
    write a whole modelling script in one turn (``sandmle/toolkit`` is its teacher)."""
    toolkit_memo: bool = False
    """With ``toolkit``: a toolkit call made first in a fresh sandbox runs once per process and
    task, and repeats get its output and its submission (the program is deterministic; the
    model sees the same text). Saves the repeated AutoML runs of a GRPO group
    (``harness/toolkit_memo.py``)."""

    @classmethod
    def from_args(cls, arguments: dict[str, Any]) -> TaskLimits:
        """The limits for a task's ``-T`` arguments: the profile's, overridden by those given.
        The one place every benchmark task (synthetic, MLE-bench, MLE-Dojo) turns its ``-T``
        arguments into limits.

        An unknown argument, a bad value, or a limit the chosen sandbox cannot enforce
        (set away from its default) is a one-line error naming it.
        """
        values = profile_values(arguments.get("profile") or DEFAULT_PROFILE)
        values.update(arguments)
        unknown = sorted(set(values) - set(cls.model_fields))
        if unknown:
            raise SandmleError(
                f"unknown task argument(s): {', '.join(unknown)}; "
                f"limits are: {', '.join(cls.model_fields)}"
            )
        try:
            limits = cls(**values)
        except ValidationError as exc:
            raise SandmleError(f"task argument {validation_message(exc)}") from None
        limits.check_enforced(set(arguments))
        return limits

    def check_enforced(self, given: set[str]) -> None:
        """Raise unless every limit in `given` that differs from its default is one this
        sandbox enforces (``-T cpus=1`` under ``sandbox=local`` would be a silent no-op)."""
        ignored = [
            name
            for name in sorted(given & SANDBOX_FIELDS)
            if name not in ENFORCED[self.sandbox]
            and getattr(self, name) != type(self).model_fields[name].default
        ]
        if ignored:
            enforced = ", ".join(sorted(ENFORCED[self.sandbox])) or "none of them"
            raise SandmleError(
                f"sandbox {self.sandbox!r} does not enforce {', '.join(ignored)} "
                f"(it enforces: {enforced}); drop the argument or pick another sandbox"
            )

    def sandbox_limits(self) -> SandboxLimits:
        return SandboxLimits(
            memory_mb=self.memory_mb,
            max_processes=self.max_processes,
            command_timeout_s=self.command_timeout,
            disk_mb=self.disk_mb,
            cpu_time_s=self.cpu_time_s,
            file_size_mb=self.file_size_mb,
            shm_mb=self.shm_mb,
            cpus=self.cpus,
            gpus=self.gpus,
            threads=self.threads,
        )


SANDBOX_FIELDS = frozenset(
    {
        "memory_mb", "max_processes", "disk_mb", "cpu_time_s", "file_size_mb", "shm_mb",
        "cpus", "gpus", "threads", "agent_extras", "image", "k8s_data_claim", "warm_python",
    }
)  # fmt: skip
"""`TaskLimits` fields a sandbox enforces (or not); the others hold for every sandbox."""
_CONTAINER = SANDBOX_FIELDS - {"warm_python", "k8s_data_claim"}
ENFORCED: dict[str, frozenset[str]] = {
    "bwrap": SANDBOX_FIELDS - {"image", "k8s_data_claim"},
    "docker": _CONTAINER - {"disk_mb"},  # no size limit on the container's own layer
    # k8s: cpu_time_s, file_size_mb and max_processes are pod annotations only
    "k8s": (_CONTAINER | {"k8s_data_claim"}) - {"cpu_time_s", "file_size_mb", "max_processes"},
    "local": frozenset(),
}
"""Per sandbox, the sandbox fields it puts in force (tests read each back from inside)."""


def memo_scope(limits: TaskLimits) -> str | None:
    """What a shared toolkit run must match besides the task and command (every limit but
    the sample counts), or None when the task does not share them."""
    if not (limits.toolkit and limits.toolkit_memo):
        return None
    return limits.model_dump_json(exclude={"epochs", "time_limit", "message_limit", "token_limit"})


def competition_task(
    competitions: list[Competition],
    *,
    name: str,
    limits: TaskLimits | None = None,
    solver: Solver | None = None,
    metadata: dict | None = None,
) -> Task:
    """One sample per competition, the medal scorer, and limits (all overridable with -T)."""
    limits = limits or TaskLimits()
    box = limits.sandbox_limits()
    text = limits_text(limits.time_limit, limits.message_limit, box)
    samples = [
        competition_sample(
            c, sandbox=sandbox_spec(c, limits), limits_text=text, toolkit=limits.toolkit
        )
        for c in competitions
    ]
    return Task(
        dataset=competition_dataset(samples, name),
        setup=sample_setup(
            toolkit=limits.toolkit,
            command_timeout=limits.command_timeout,
            memo_scope=memo_scope(limits),
        ),
        solver=solver or default_agent(),
        scorer=medal_scorer(),
        time_limit=limits.time_limit,
        message_limit=limits.message_limit,
        token_limit=limits.token_limit,
        epochs=limits.epochs,
        name=name,
        metadata={
            "sandbox": limits.sandbox,
            **(
                {"sandbox_isolation": host_isolation().as_metadata()}
                if limits.sandbox == "bwrap"
                else {}
            ),
            "profile": limits.profile,
            "limits": limits.model_dump(),
            **(metadata or {}),
        },
    )
