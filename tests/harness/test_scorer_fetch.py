"""Copying submission.csv out of a sandbox for grading: host dir, docker stream, any size."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from inspect_ai.util import (
    ExecResult,
    OutputLimitExceededError,
    SandboxConnection,
    SandboxEnvironment,
)

from sandmle.harness.competition import Competition, load_competition
from sandmle.harness.layout import SUBMISSION_PATH
from sandmle.harness.scorer import grade_sandbox_submission
from sandmle.harness.submission_fetch import copy_host_file, copy_tar_stream, fetch_submission

MiB = 1024**2


def _write_source(directory: Path, data: bytes = b"id,y\na,1\n") -> Path:
    directory.mkdir(exist_ok=True)
    (directory / "submission.csv").write_bytes(data)
    return directory


def test_a_regular_file_is_copied(tmp_path: Path) -> None:
    source = _write_source(tmp_path / "sub", b"id,y\na,1\n" * 1000)
    dest = tmp_path / "out.csv"
    assert copy_host_file(source, dest, 10 * MiB) is None
    assert dest.read_bytes() == (source / "submission.csv").read_bytes()


def test_a_symlink_is_never_followed(tmp_path: Path) -> None:
    secret = tmp_path / "answers.csv"
    secret.write_text("id,y\nsecret,1\n")
    source = tmp_path / "sub"
    source.mkdir()
    (source / "submission.csv").symlink_to(secret)
    dest = tmp_path / "out.csv"
    assert "symbolic link" in copy_host_file(source, dest, MiB)
    assert not dest.exists()


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    source = tmp_path / "sub"
    source.mkdir()
    os.mkfifo(source / "submission.csv")
    assert "not a regular file" in copy_host_file(source, tmp_path / "out.csv", MiB)


def test_missing_directory_and_oversized_files(tmp_path: Path) -> None:
    source = tmp_path / "sub"
    source.mkdir()
    dest = tmp_path / "out.csv"
    assert copy_host_file(source, dest, MiB) is None and not dest.exists()
    (source / "submission.csv").mkdir()
    assert copy_host_file(source, dest, MiB) is None and dest.is_dir()
    dest.rmdir()
    (source / "submission.csv").rmdir()
    (source / "submission.csv").write_bytes(b"x" * 2048)
    assert "over the 0.0 MiB submission limit" in copy_host_file(source, dest, 1024)


def _fake_docker(tmp_path: Path, source: Path) -> Path:
    """A `docker` that answers `docker cp <c>:<path> -` with a tar of `source`'s file."""
    script = tmp_path / "bin" / "docker"
    script.parent.mkdir()
    script.write_text(
        "#!/bin/sh\n"
        f'[ -e "{source}/submission.csv" ] || '
        '{ echo "Error: Could not find the file $3 in container c1" >&2; exit 1; }\n'
        f'exec tar -C "{source}" -cf - submission.csv\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_a_docker_cp_stream_is_copied_in_chunks(tmp_path: Path) -> None:
    data = b"id,y\n" + b"row,0.5\n" * 300_000
    source = _write_source(tmp_path / "sub", data)
    docker = _fake_docker(tmp_path, source)
    dest = tmp_path / "out.csv"
    assert copy_tar_stream([str(docker), "cp", "c1:x", "-"], dest, 10 * MiB) is None
    assert dest.read_bytes() == data
    assert "over the" in copy_tar_stream([str(docker), "cp", "c1:x", "-"], dest, MiB)
    (source / "submission.csv").unlink()
    dest.unlink()
    assert copy_tar_stream([str(docker), "cp", "c1:x", "-"], dest, MiB) is None
    assert not dest.exists()


def test_a_tar_of_a_link_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "link.tar"
    with tarfile.open(archive, "w") as tar:
        info = tarfile.TarInfo("submission.csv")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/shadow"
        tar.addfile(info)
    argv = ["cat", str(archive)]
    assert "not a regular file" in copy_tar_stream(argv, tmp_path / "out.csv", MiB)


class DockerLike(SandboxEnvironment):
    """Stands for Inspect's docker sandbox: a container name, and a capped read_file."""

    async def exec(self, cmd: list[str], *args: Any, **kwargs: Any) -> ExecResult[str]:
        raise AssertionError("the submission is streamed, not exec'd")

    async def write_file(self, file: str, contents: str | bytes) -> None:
        raise AssertionError("not used")

    async def read_file(self, file: str, text: bool = True) -> Any:
        raise OutputLimitExceededError(limit_str="100 MiB", truncated_output=None)

    async def connection(self, *, user: str | None = None) -> SandboxConnection:
        return SandboxConnection(type="docker", command="docker exec -it c1 bash", container="c1")

    @classmethod
    async def sample_cleanup(cls, *args: Any, **kwargs: Any) -> None:
        pass


def test_a_docker_sandbox_is_streamed_past_read_files_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = b"id,y\n" + b"row,0.5\n" * 1000
    docker = _fake_docker(tmp_path, _write_source(tmp_path / "sub", data))
    monkeypatch.setenv("PATH", f"{docker.parent}:{os.environ['PATH']}")
    dest = tmp_path / "out.csv"
    assert asyncio.run(fetch_submission(DockerLike(), dest)) is None
    assert dest.read_bytes() == data


# --- a submission over Inspect's 100 MiB read_file cap, graded through a real bwrap sandbox ---

PAD = "p" * 1000
ROWS = 110_000  # 110k rows of ~1 kB: 106 MiB, over the cap


def _wide_competition(root: Path) -> Competition:
    (root / "prepared" / "private").mkdir(parents=True)
    (root / "prepared" / "public").mkdir(parents=True)
    ids = "".join(f"r{i},{i % 7}\n" for i in range(ROWS))
    (root / "prepared" / "private" / "answers.csv").write_text("id,y\n" + ids)
    (root / "prepared" / "public" / "sample_submission.csv").write_text("id,y\nr0,0\n")
    config = {
        "id": "big-rows",
        "name": "Big rows",
        "metric": "rmse",
        "target_columns": ["y"],
        "thresholds": {"gold": 0.1, "silver": 0.2, "bronze": 0.3, "median": 1.0},
    }
    (root / "competition.yaml").write_text(yaml.safe_dump(config))
    return load_competition(root)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")
def test_a_submission_over_100_mib_is_graded(tmp_path: Path) -> None:
    from sandmle.harness.sandbox import BwrapConfig, BwrapSandboxEnvironment, SandboxLimits

    competition = _wide_competition(tmp_path / "big-rows")
    rows = "".join(f"r{i},{i % 7 + 0.5},{PAD}\n" for i in range(ROWS))
    data = ("id,y,pad\n" + rows).encode()
    assert len(data) > 100 * MiB
    config = BwrapConfig(limits=SandboxLimits(disk_mb=512), base_dir=tmp_path / "boxes")

    async def run() -> Any:
        envs = await BwrapSandboxEnvironment.sample_init("t", config, {})
        env = envs["default"]
        try:
            await env.write_file(SUBMISSION_PATH, data)
            with pytest.raises(OutputLimitExceededError):  # the tool channel's cap
                await env.read_file(SUBMISSION_PATH, text=False)
            return await grade_sandbox_submission(competition, env)
        finally:
            await BwrapSandboxEnvironment.sample_cleanup("t", config, envs, False)

    report = asyncio.run(run())
    assert report.valid_submission, report.invalid_reason
    assert report.score == 0.5
    assert report.submission_path == SUBMISSION_PATH


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")
def test_messages_name_the_sandbox_path_not_the_host_temp_dir(tmp_path: Path) -> None:
    from sandmle.harness.sandbox import BwrapConfig, BwrapSandboxEnvironment

    competition = _wide_competition(tmp_path / "big-rows")
    config = BwrapConfig(base_dir=tmp_path / "boxes")

    async def run() -> list[str]:
        envs = await BwrapSandboxEnvironment.sample_init("t", config, {})
        env = envs["default"]
        try:
            missing = await grade_sandbox_submission(competition, env)
            await env.exec(["mkdir", SUBMISSION_PATH])
            directory = await grade_sandbox_submission(competition, env)
            return [missing.invalid_reason, directory.invalid_reason]
        finally:
            await BwrapSandboxEnvironment.sample_cleanup("t", config, envs, False)

    reasons = asyncio.run(run())
    assert reasons == [
        f"no submission file at {SUBMISSION_PATH}",
        f"{SUBMISSION_PATH} is a directory, not a CSV file",
    ]


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")
def test_the_host_dir_is_found_through_inspects_sandbox_proxy(tmp_path: Path) -> None:
    # What `sandbox()` returns inside an eval: the environment wrapped in an event proxy.
    from inspect_ai.util._sandbox.events import SandboxEnvironmentProxy

    from sandmle.harness.sandbox import BwrapConfig, BwrapSandboxEnvironment, SandboxLimits
    from sandmle.harness.submission_fetch import host_submission_dir

    config = BwrapConfig(limits=SandboxLimits(disk_mb=64), base_dir=tmp_path / "boxes")

    async def run() -> tuple[Path | None, Path]:
        envs = await BwrapSandboxEnvironment.sample_init("t", config, {})
        env = envs["default"]
        try:
            found = host_submission_dir(SandboxEnvironmentProxy(env))
            return found, env.as_type(BwrapSandboxEnvironment).dirs.submission
        finally:
            await BwrapSandboxEnvironment.sample_cleanup("t", config, envs, False)

    found, expected = asyncio.run(run())
    assert found == expected
    assert host_submission_dir(SandboxEnvironmentProxy(DockerLike())) is None
