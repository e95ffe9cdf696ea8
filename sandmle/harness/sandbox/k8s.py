"""Helm values for Inspect's Kubernetes sandbox (``inspect-k8s-sandbox``), one file per competition.

``-T sandbox=k8s`` runs each sample in a pod of the package's ``agent-env`` chart instead of on
this machine, so an eval can hold more samples at once than one machine can. Inspect's ``k8s``
sandbox takes a values file; :func:`k8s_values` writes one with the isolation the other
sandboxes give:

* no network: the chart's Cilium policy with no allowed domain, CIDR or entity;
* answers never mounted: the only data volume is the competition's *public* folder, mounted
  read-only (``subPath``) from a PersistentVolumeClaim that holds the data dir laid out as on
  the host (``<claim>/<id>/prepared/public``, or ``<id>/data/public`` for MLE-Dojo);
* limits: memory, CPUs, GPUs and ephemeral disk as container limits (equal requests, so the pod
  is Guaranteed QoS), ``/dev/shm`` as a memory-backed ``emptyDir`` of ``shm_mb``; a non-root
  user with every capability dropped, no privilege escalation, the runtime's default seccomp
  profile, a read-only root filesystem with ``emptyDir`` volumes for the writable dirs, gVisor.

Not expressible per pod: RLIMITs (``cpu_time_s``, ``file_size_mb``) and the process cap, which
the kubelet sets cluster-wide (``podPidsLimit``); the values file records them as annotations.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from sandmle.errors import SandmleError
from sandmle.harness.layout import DATA_DIR, SUBMISSION_DIR, WORK_DIR

from .limits import ALL_GPUS, THREAD_ENV_VARS, SandboxLimits

DEFAULT_DATA_CLAIM = "sandmle-data"
"""PersistentVolumeClaim holding the data dir (``-T k8s_data_claim`` names another)."""
AGENT_UID = 1000
"""The agent image's unprivileged user (see the Dockerfile)."""
RUNTIME_CLASS = "gvisor"
K8S_INSTALL_HINT = "pip install 'sandmle[k8s]'"


def public_subpath(public_dir: Path, competition_id: str) -> str:
    """The public folder's path inside the data claim: from the ``<id>`` folder down.

    ``<data_dir>/<id>/prepared/public`` gives ``<id>/prepared/public``; symlinks are resolved
    first, so an MLE-Dojo view gives ``<id>/data/public``.
    """
    resolved = public_dir.resolve()
    for ancestor in resolved.parents:
        if ancestor.name == competition_id:
            return resolved.relative_to(ancestor.parent).as_posix()
    raise SandmleError(f"{public_dir} does not lie under a folder named {competition_id}")


def _resources(limits: SandboxLimits) -> dict[str, Any]:
    caps: dict[str, Any] = {
        "memory": f"{limits.memory_mb}Mi",
        "ephemeral-storage": f"{limits.disk_mb}Mi",
    }
    if limits.cpus is not None:
        caps["cpu"] = str(limits.cpus)
    if limits.gpus == ALL_GPUS:
        raise SandmleError("k8s needs a GPU count: set -T gpus=N (all GPUs is docker/bwrap only)")
    if limits.gpus > 0:
        caps["nvidia.com/gpu"] = limits.gpus
    return {"limits": caps, "requests": dict(caps)}


def _volumes(public: str, data_claim: str, shm_mb: int) -> tuple[list[dict], list[dict]]:
    claim = {"claimName": data_claim, "readOnly": True}
    volumes: list[dict] = [{"name": "data", "persistentVolumeClaim": claim}]
    mounts: list[dict] = [
        {"name": "data", "mountPath": DATA_DIR, "subPath": public, "readOnly": True}
    ]
    scratch = {"work": WORK_DIR, "submission": SUBMISSION_DIR, "tmp": "/tmp"}
    for name, path in scratch.items():
        volumes.append({"name": name, "emptyDir": {}})
        mounts.append({"name": name, "mountPath": path})
    volumes.append({"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": f"{shm_mb}Mi"}})
    mounts.append({"name": "shm", "mountPath": "/dev/shm"})
    return volumes, mounts


def k8s_values(
    *,
    public_dir: Path,
    competition_id: str,
    image: str,
    limits: SandboxLimits = SandboxLimits(),
    data_claim: str = DEFAULT_DATA_CLAIM,
) -> dict[str, Any]:
    """Values for the ``agent-env`` chart: one ``default`` service for one competition's agent."""
    volumes, mounts = _volumes(
        public_subpath(public_dir, competition_id), data_claim, limits.shm_mb
    )
    env = [{"name": "SANDMLE_SUBMISSION_DIR", "value": SUBMISSION_DIR}]
    env += [{"name": name, "value": str(limits.threads)} for name in THREAD_ENV_VARS]
    security = {
        "runAsNonRoot": True,
        "runAsUser": AGENT_UID,
        "runAsGroup": AGENT_UID,
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    service = {
        "image": image,
        "runtimeClassName": RUNTIME_CLASS,
        "command": ["tail", "-f", "/dev/null"],
        "workingDir": WORK_DIR,
        "env": env,
        "resources": _resources(limits),
        "securityContext": security,
        "volumes": volumes,
        "volumeMounts": mounts,
    }
    return {
        "allowDomains": [],
        "allowCIDR": [],
        "allowEntities": [],
        "networkPolicy": {"enabled": True},
        "automountServiceAccountToken": False,
        "annotations": {
            "sandmle/cpu-time-s": str(limits.cpu_time_s),
            "sandmle/file-size-mb": str(limits.file_size_mb),
            "sandmle/max-processes": str(limits.max_processes),
        },
        "services": {"default": service},
    }


def write_values(path: Path, **kwargs: Any) -> Path:
    """Write ``k8s_values(**kwargs)`` to ``path`` (for ``sandbox=("k8s", str(path))``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(k8s_values(**kwargs), sort_keys=False))
    return path
