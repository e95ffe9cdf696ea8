"""Docker compose configs for Inspect's own `docker` sandbox, and the agent image.

No wrapper provider is needed: Inspect's `docker` sandbox takes a compose file path and
fills `${SAMPLE_METADATA_<KEY>}` from each sample's metadata, so one compose file per
task mounts each sample's own public dir. Use it as `sandbox=("docker", str(path))`
with `path = write_compose(...)`.
"""

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from sandmle.errors import SandmleError
from sandmle.harness.layout import PUBLIC_DIR_METADATA_KEY

from ._command import DATA_DIR, SUBMISSION_DIR, WORK_DIR
from .limits import ALL_GPUS, THREAD_ENV_VARS, SandboxLimits

DEFAULT_IMAGE = "sandmle-agent:latest"
DOCKERFILE = Path(__file__).with_name("Dockerfile")
PUBLIC_DIR_FROM_METADATA = "${SAMPLE_METADATA_" + PUBLIC_DIR_METADATA_KEY.upper() + "}"
"""Compose variable Inspect sets from sample metadata `sandmle_public_dir`."""

DOCKER_INSTALL_HINT = "pip install 'sandmle[docker]'"


def _gpu_reservation(gpus: int) -> dict[str, Any]:
    count: int | str = "all" if gpus == ALL_GPUS else gpus
    device = {"driver": "nvidia", "count": count, "capabilities": ["gpu"]}
    return {"reservations": {"devices": [device]}}


def _thread_env(threads: int) -> dict[str, str]:
    return {name: str(threads) for name in THREAD_ENV_VARS}


def compose_for(
    *,
    public_dir: Path | str | None = None,
    image: str = DEFAULT_IMAGE,
    limits: SandboxLimits = SandboxLimits(),
) -> dict[str, Any]:
    """A compose config with one `default` service for one competition's agent.

    `public_dir` is mounted read-only at /home/data; None mounts the sample's own, named
    by its metadata. Nothing else from the host is mounted, so private answers never are.
    """
    source = PUBLIC_DIR_FROM_METADATA if public_dir is None else str(Path(public_dir).resolve())
    mount = {"type": "bind", "source": source, "target": DATA_DIR, "read_only": True}
    mib = 1024**2
    service = {
        "image": image,
        "x-local": True,  # built by build_image, never pulled
        "init": True,
        "command": "tail -f /dev/null",
        "working_dir": WORK_DIR,
        "network_mode": "none",
        "volumes": [mount],
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges:true"],
        # Service-level caps, no deploy.resources.limits: compose v2 refuses a `pids_limit`
        # beside a deploy limits block that does not repeat it.
        "mem_limit": f"{limits.memory_mb}m",
        "pids_limit": limits.max_processes,
        "shm_size": f"{limits.shm_mb}m",
        "ulimits": {"cpu": limits.cpu_time_s, "fsize": limits.file_size_mb * mib},
        "environment": {"SANDMLE_SUBMISSION_DIR": SUBMISSION_DIR, **_thread_env(limits.threads)},
    }
    if limits.cpus is not None:
        service["cpus"] = limits.cpus
    if limits.gpus != 0:
        service["deploy"] = {"resources": _gpu_reservation(limits.gpus)}
    return {"services": {"default": service}}


def compose_yaml(**kwargs: Any) -> str:
    """`compose_for(**kwargs)` as YAML text."""
    return yaml.safe_dump(compose_for(**kwargs), sort_keys=False)


def write_compose(path: Path, **kwargs: Any) -> Path:
    """Write `compose_for(**kwargs)` to `path` (for `sandbox=("docker", str(path))`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(compose_yaml(**kwargs))
    return path


def _docker_client() -> Any:
    try:
        import docker
    except ImportError as ex:
        raise SandmleError(f"the docker SDK is not installed: {DOCKER_INSTALL_HINT}") from ex
    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as ex:
        reason = " ".join(str(ex).split())
        raise SandmleError(f"Docker engine not reachable: {reason}") from ex
    return client


def _build_context(where: Path, wheels: Path | None) -> Path:
    """The Dockerfile and a ``wheels/`` dir (a copy of `wheels`, else empty)."""
    shutil.copyfile(DOCKERFILE, where / DOCKERFILE.name)
    if wheels is None:
        (where / "wheels").mkdir()
    else:
        if not any(wheels.glob("*.whl")):
            raise SandmleError(f"no wheels in {wheels}; fetch them with `pip download -d {wheels}`")
        shutil.copytree(wheels, where / "wheels")
    return where


def build_image(
    tag: str = DEFAULT_IMAGE,
    extra_packages: Sequence[str] = (),
    *,
    base_image: str | None = None,
    wheels: Path | None = None,
) -> str:
    """Build the agent image from the packaged Dockerfile; returns the image id.

    `base_image`: a local image with python3 and pip instead of ``python:3.11-slim`` (which
    needs a registry). `wheels`: install the ML stack from these wheels only, with no network
    in the build (``pip install --no-index``).
    """
    client = _docker_client()  # first: it turns a missing SDK into a pip hint
    import docker

    buildargs = {"EXTRA_PACKAGES": " ".join(extra_packages)}
    if base_image is not None:
        buildargs["BASE_IMAGE"] = base_image
    if wheels is not None:
        buildargs["PIP_OPTIONS"] = "--no-index --find-links /tmp/wheels"
    with tempfile.TemporaryDirectory(prefix="sandmle-image-") as tmp:
        context = _build_context(Path(tmp), wheels)
        try:
            image, _ = client.images.build(
                path=str(context),
                dockerfile=DOCKERFILE.name,
                tag=tag,
                buildargs=buildargs,
                rm=True,
                pull=False,
                network_mode="none" if wheels is not None else None,
            )
        except docker.errors.BuildError as ex:
            raise SandmleError(f"building {tag} failed: {_last_lines(ex)}") from ex
        except docker.errors.APIError as ex:
            raise SandmleError(f"Docker engine refused the build of {tag}: {ex}") from ex
    return str(image.id)


def _last_lines(error: Any) -> str:
    """The build's message and its last log lines, on one line."""
    logs = [str(entry.get("stream", "")).strip() for entry in getattr(error, "build_log", [])]
    tail = " | ".join(line for line in logs if line)[-400:]
    return f"{error.msg} ({tail})" if tail else str(error.msg)
