"""Docker compose configs for Inspect's own `docker` sandbox, and the agent image.

No wrapper provider is needed: Inspect's `docker` sandbox takes a compose file path and
fills `${SAMPLE_METADATA_<KEY>}` from each sample's metadata, so one compose file per
task mounts each sample's own public dir. Use it as `sandbox=("docker", str(path))`
with `path = write_compose(...)`.
"""

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
    resources: dict[str, Any] = {"limits": {"memory": f"{limits.memory_mb}m"}}
    if limits.cpus is not None:
        resources["limits"]["cpus"] = str(limits.cpus)
    if limits.gpus != 0:
        resources |= _gpu_reservation(limits.gpus)
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
        "pids_limit": limits.max_processes,
        "shm_size": f"{limits.shm_mb}m",
        "ulimits": {"cpu": limits.cpu_time_s, "fsize": limits.file_size_mb * mib},
        "deploy": {"resources": resources},
        "environment": {"SANDMLE_SUBMISSION_DIR": SUBMISSION_DIR, **_thread_env(limits.threads)},
    }
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


def build_image(tag: str = DEFAULT_IMAGE, extra_packages: Sequence[str] = ()) -> str:
    """Build the agent image from the packaged Dockerfile; returns the image id."""
    client = _docker_client()  # first: it turns a missing SDK into a pip hint
    import docker

    try:
        image, _ = client.images.build(
            path=str(DOCKERFILE.parent),
            dockerfile=DOCKERFILE.name,
            tag=tag,
            buildargs={"EXTRA_PACKAGES": " ".join(extra_packages)},
            rm=True,
        )
    except docker.errors.BuildError as ex:
        raise SandmleError(f"building {tag} failed: {ex.msg}") from ex
    except docker.errors.APIError as ex:
        raise SandmleError(f"Docker engine refused the build of {tag}: {ex}") from ex
    return str(image.id)
