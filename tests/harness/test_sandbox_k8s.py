"""The values file ``-T sandbox=k8s`` writes for Inspect's Kubernetes sandbox."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from sandmle.errors import SandmleError
from sandmle.harness.layout import DATA_DIR, SUBMISSION_DIR, WORK_DIR
from sandmle.harness.sandbox import SandboxLimits
from sandmle.harness.sandbox.k8s import k8s_values, public_subpath, write_values

CID = "spooky-author-identification"


@pytest.fixture
def public(tmp_path: Path) -> Path:
    folder = tmp_path / "data" / CID / "prepared" / "public"
    folder.mkdir(parents=True)
    (folder.parent / "private").mkdir()
    return folder


def _service(values: dict) -> dict:
    assert list(values["services"]) == ["default"]
    return values["services"]["default"]


def test_no_network_is_allowed(public: Path) -> None:
    values = k8s_values(public_dir=public, competition_id=CID, image="img:1")
    assert values["networkPolicy"] == {"enabled": True}
    assert values["allowDomains"] == values["allowCIDR"] == values["allowEntities"] == []
    assert values["automountServiceAccountToken"] is False


def test_only_the_public_folder_is_mounted_read_only(public: Path) -> None:
    service = _service(k8s_values(public_dir=public, competition_id=CID, image="img:1"))
    (data,) = [m for m in service["volumeMounts"] if m["name"] == "data"]
    assert data == {
        "name": "data",
        "mountPath": DATA_DIR,
        "subPath": f"{CID}/prepared/public",
        "readOnly": True,
    }
    claims = [v for v in service["volumes"] if "persistentVolumeClaim" in v]
    assert claims == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "sandmle-data", "readOnly": True}}
    ]
    assert "private" not in json.dumps(service)
    writable = {m["mountPath"] for m in service["volumeMounts"] if not m.get("readOnly")}
    assert writable == {WORK_DIR, SUBMISSION_DIR, "/tmp", "/dev/shm"}


def test_dojo_views_mount_the_folder_they_link_to(tmp_path: Path) -> None:
    real = tmp_path / "dojo" / CID / "data" / "public"
    real.mkdir(parents=True)
    view = tmp_path / "views" / "k" / CID / "prepared"
    view.mkdir(parents=True)
    (view / "public").symlink_to(real, target_is_directory=True)
    assert public_subpath(view / "public", CID) == f"{CID}/data/public"
    with pytest.raises(SandmleError, match="does not lie under"):
        public_subpath(tmp_path, CID)


def test_limits_and_hardening(public: Path) -> None:
    limits = SandboxLimits(memory_mb=4096, disk_mb=900, cpus=4, gpus=1, shm_mb=4096, threads=4)
    service = _service(k8s_values(public_dir=public, competition_id=CID, image="i", limits=limits))
    caps = {
        "memory": "4096Mi",
        "ephemeral-storage": "900Mi",
        "cpu": "4.0",
        "nvidia.com/gpu": 1,
    }
    assert service["resources"] == {"limits": caps, "requests": caps}  # Guaranteed QoS
    (shm,) = [v for v in service["volumes"] if v["name"] == "shm"]
    assert shm["emptyDir"] == {"medium": "Memory", "sizeLimit": "4096Mi"}
    security = service["securityContext"]
    assert security["runAsNonRoot"] and security["runAsUser"] == 1000
    assert security["allowPrivilegeEscalation"] is False and security["readOnlyRootFilesystem"]
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert service["runtimeClassName"] == "gvisor"
    assert {"name": "OMP_NUM_THREADS", "value": "4"} in service["env"]


def test_all_gpus_needs_a_count(public: Path) -> None:
    with pytest.raises(SandmleError, match="gpus=N"):
        k8s_values(public_dir=public, competition_id=CID, image="i", limits=SandboxLimits(gpus=-1))


def test_written_file_is_the_values(public: Path, tmp_path: Path) -> None:
    path = write_values(
        tmp_path / "v" / "values.yaml", public_dir=public, competition_id=CID, image="i"
    )
    assert yaml.safe_load(path.read_text()) == k8s_values(
        public_dir=public, competition_id=CID, image="i"
    )


@pytest.mark.skipif(
    importlib.util.find_spec("k8s_sandbox") is None, reason="inspect-k8s-sandbox is not installed"
)
def test_values_satisfy_the_agent_env_charts_schema(public: Path) -> None:
    import jsonschema
    import k8s_sandbox

    chart = Path(k8s_sandbox.__file__).parent / "resources" / "helm" / "agent-env"
    schema = json.loads((chart / "values.schema.json").read_text())
    limits = SandboxLimits(cpus=2, gpus=1)
    values = k8s_values(public_dir=public, competition_id=CID, image="i", limits=limits)
    defaults = yaml.safe_load((chart / "values.yaml").read_text())
    jsonschema.validate(_helm_merge(defaults, values), schema)  # as `helm install -f` checks


def _helm_merge(base: dict, override: dict) -> dict:
    """Helm's coalescing of a values file over the chart's defaults: maps merge, the rest wins."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merged[key] = _helm_merge(base[key], value)
        else:
            merged[key] = value
    return merged


def test_the_task_builds_a_k8s_sample_per_competition(tmp_path: Path) -> None:
    from sandmle.benchmarks.mle_bench.replicas.build import build_replicas
    from sandmle.benchmarks.mle_bench.task import mle_bench_lite

    build_replicas(tmp_path / "data", [CID])
    task = mle_bench_lite(
        data_dir=str(tmp_path / "data"), competitions=CID, sandbox="k8s", image="reg/agent:1"
    )
    (sample,) = task.dataset
    assert sample.sandbox is not None and sample.sandbox.type == "k8s"
    service = _service(yaml.safe_load(Path(sample.sandbox.config).read_text()))
    assert service["image"] == "reg/agent:1"
    assert service["volumeMounts"][0]["subPath"] == f"{CID}/prepared/public"
