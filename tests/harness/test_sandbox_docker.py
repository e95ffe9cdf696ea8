"""Compose configs for Inspect's docker sandbox, and the image build's error paths."""

import sys
from pathlib import Path

import pytest
import yaml
from inspect_ai.util import ComposeConfig, parse_compose_yaml

from sandmle.errors import SandmleError
from sandmle.harness.sandbox import (
    PUBLIC_DIR_METADATA_KEY,
    SandboxLimits,
    build_image,
    compose_for,
    write_compose,
)
from sandmle.harness.sandbox.docker import DOCKERFILE


@pytest.fixture
def competition(tmp_path: Path) -> Path:
    """A competition folder with public data and private answers side by side."""
    for part in ("public", "private"):
        (tmp_path / "comp" / part).mkdir(parents=True)
    (tmp_path / "comp" / "private" / "answers.csv").write_text("id,y\n0,1\n")
    return tmp_path / "comp"


def _service(compose: dict) -> dict:
    assert list(compose["services"]) == ["default"]
    return compose["services"]["default"]


def test_only_public_dir_is_mounted_read_only(competition: Path) -> None:
    compose = compose_for(public_dir=competition / "public")
    service = _service(compose)
    assert service["volumes"] == [
        {
            "type": "bind",
            "source": str((competition / "public").resolve()),
            "target": "/home/data",
            "read_only": True,
        }
    ]
    text = yaml.safe_dump(compose)
    assert "private" not in text
    assert str(competition) + "/" not in text.replace(str(competition / "public"), "")


def test_network_none_and_hardening() -> None:
    service = _service(compose_for(public_dir="/data/public"))
    assert service["network_mode"] == "none"
    assert "networks" not in service and "ports" not in service
    assert service["cap_drop"] == ["ALL"]
    assert "no-new-privileges:true" in service["security_opt"]
    assert service.get("privileged") is not True


def test_limits_are_applied() -> None:
    limits = SandboxLimits(
        memory_mb=3000, max_processes=99, cpu_time_s=77, file_size_mb=5, cpus=1.5, shm_mb=4096
    )
    service = _service(compose_for(public_dir="/p", limits=limits))
    assert (service["mem_limit"], service["cpus"], service["pids_limit"]) == ("3000m", 1.5, 99)
    assert service["ulimits"] == {"cpu": 77, "fsize": 5 * 1024**2}
    assert service["shm_size"] == "4096m"
    assert "deploy" not in service  # no GPUs asked for


@pytest.mark.parametrize(("gpus", "count"), [(2, 2), (-1, "all")])
def test_gpus_are_reserved(gpus: int, count: int | str) -> None:
    service = _service(compose_for(public_dir="/p", limits=SandboxLimits(gpus=gpus)))
    devices = service["deploy"]["resources"]["reservations"]["devices"]
    assert devices == [{"driver": "nvidia", "count": count, "capabilities": ["gpu"]}]


def test_threads_reach_the_environment() -> None:
    service = _service(compose_for(public_dir="/p", limits=SandboxLimits(threads=4)))
    assert service["environment"]["OMP_NUM_THREADS"] == "4"
    assert service["environment"]["MKL_NUM_THREADS"] == "4"


def test_default_mount_comes_from_sample_metadata(tmp_path: Path) -> None:
    # Inspect's docker sandbox sets SAMPLE_METADATA_<KEY> for each key the file names.
    from inspect_ai.util._sandbox.docker.docker import resolve_config_environment

    path = write_compose(tmp_path / "compose.yaml", image="img:1")
    resolved = resolve_config_environment(
        str(path), {PUBLIC_DIR_METADATA_KEY: "/comps/a/public", "other": "x"}
    )
    assert resolved is not None
    assert resolved.env == {"SAMPLE_METADATA_SANDMLE_PUBLIC_DIR": "/comps/a/public"}
    assert _service(yaml.safe_load(path.read_text()))["image"] == "img:1"


def test_inspect_accepts_the_compose_file(tmp_path: Path) -> None:
    limits = SandboxLimits(gpus=1)
    path = write_compose(tmp_path / "nested" / "compose.yaml", public_dir="/p", limits=limits)
    config = parse_compose_yaml(str(path))
    assert isinstance(config, ComposeConfig)
    assert config.services["default"].network_mode == "none"
    assert yaml.safe_load(path.read_text()) == compose_for(public_dir="/p", limits=limits)


def test_dockerfile_installs_the_ml_stack() -> None:
    text = DOCKERFILE.read_text()
    assert text.startswith("#") and "ARG BASE_IMAGE=python:3.11-slim\nFROM ${BASE_IMAGE}" in text
    for package in ("numpy", "pandas", "scikit-learn", "scipy", "pillow", "${EXTRA_PACKAGES}"):
        assert package in text


def test_build_image_without_engine_is_one_line(monkeypatch) -> None:
    pytest.importorskip("docker")
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(SandmleError, match="^Docker engine not reachable: ") as raised:
        build_image("sandmle-test:never")
    assert "\n" not in str(raised.value)


def test_build_image_without_sdk_gives_pip_hint(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "docker", None)  # makes `import docker` fail
    with pytest.raises(SandmleError, match=r"pip install 'sandmle\[docker\]'"):
        build_image()
