"""The agent runtime: the ML stack imports, sandmle and inspect_ai do not."""

import asyncio
import importlib.metadata
import io
import shutil
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest
from rich.console import Console

from sandmle.harness.sandbox import runtime
from sandmle.harness.sandbox.runtime import (
    RUNTIME_DIR_ENV,
    RuntimeBuildError,
    ensure_runtime,
    requirements,
    runtime_key,
)


@pytest.fixture(scope="module")
def built() -> runtime.Runtime:
    # The default cache: the sandbox tests use the same runtime, so it is built once.
    return ensure_runtime(quiet=True)


def _run(python: Path, code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-c", code], cwd=cwd, capture_output=True, text=True)


def test_stack_is_pinned_at_the_host_versions() -> None:
    reqs = requirements()
    assert f"numpy=={importlib.metadata.version('numpy')}" in reqs
    assert f"pandas=={importlib.metadata.version('pandas')}" in reqs
    assert [r.split("==")[0] for r in reqs] == list(runtime.STACK)


def test_extras_change_the_folder_and_bad_names_are_refused() -> None:
    base = runtime.base_interpreter()
    assert runtime_key(requirements(), base) != runtime_key(requirements(["lightgbm"]), base)
    with pytest.raises(RuntimeBuildError, match="not a distribution name"):
        requirements(["numpy; rm -rf /"])


def test_runtime_imports_the_stack(built: runtime.Runtime, tmp_path: Path) -> None:
    code = "import numpy, pandas, sklearn, scipy, PIL; print(pandas.__version__)"
    result = _run(built.python, code, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == importlib.metadata.version("pandas")


@pytest.mark.parametrize("module", ["sandmle", "inspect_ai"])
def test_sandmle_and_inspect_do_not_import(
    built: runtime.Runtime, tmp_path: Path, module: str
) -> None:
    result = _run(built.python, f"import {module}", tmp_path)
    assert result.returncode != 0
    assert "ModuleNotFoundError" in result.stderr


def test_runtime_is_found_without_a_rebuild(built: runtime.Runtime) -> None:
    assert runtime.find_runtime() == built
    assert ensure_runtime(quiet=True) == built


def test_parallel_callers_build_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RUNTIME_DIR_ENV, str(tmp_path))
    builds = []

    def fake_build(root: Path, base: Path, reqs: tuple, *, quiet: bool) -> None:
        builds.append(root)
        threading.Event().wait(0.3)  # long enough for the other callers to queue on the lock
        (root / "bin").mkdir(parents=True)
        (root / "bin" / "python").symlink_to(base)
        (root / runtime.MARKER).write_text('{"requirements": []}')

    monkeypatch.setattr(runtime, "_build", fake_build)
    threads = [threading.Thread(target=ensure_runtime) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1


def test_unbuildable_runtime_names_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RUNTIME_DIR_ENV, str(tmp_path))
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # offline, and the extra is in no local wheel dir
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    with pytest.raises(RuntimeBuildError) as info:
        ensure_runtime(["sandmle-no-such-distribution"], quiet=True)
    message = str(info.value)
    assert "\n" not in message
    assert "installing the stack" in message and "SANDMLE_AGENT_PYTHON" in message
    assert runtime.find_runtime(["sandmle-no-such-distribution"]) is None


def test_a_users_own_python_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(runtime.AGENT_PYTHON_ENV, str(tmp_path / "python"))
    monkeypatch.setattr(runtime, "ensure_runtime", lambda: pytest.fail("must not build"))
    assert runtime.prepare_agent_python() == tmp_path / "python"


def test_cli_shows_the_runtime(built: runtime.Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from sandmle.cli import app

    monkeypatch.delenv(runtime.AGENT_PYTHON_ENV, raising=False)
    result = CliRunner().invoke(app, ["sandbox", "runtime"])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines()[-1] == str(built.python)
    assert runtime.prepare_agent_python() == built.python


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")
def test_inside_the_bwrap_sandbox_the_stack_imports_and_sandmle_does_not(
    built: runtime.Runtime, tmp_path: Path
) -> None:
    from sandmle.harness.sandbox import BwrapConfig, BwrapSandboxEnvironment

    config = BwrapConfig(python=built.python, base_dir=tmp_path / "boxes")
    probe = "import numpy, pandas, sklearn, scipy, PIL, sys; print(sys.prefix)"

    async def run() -> list:
        envs = await BwrapSandboxEnvironment.sample_init("t", config, {})
        env = envs["default"]
        try:
            results = [await env.exec(["python", "-c", probe])]
            for module in ("sandmle", "inspect_ai"):
                results.append(await env.exec(["python", "-c", f"import {module}"]))
            return results
        finally:
            await BwrapSandboxEnvironment.sample_cleanup("t", config, envs, False)

    stack, *forbidden = asyncio.run(run())
    assert stack.success, stack.stderr
    assert not stack.stdout.startswith(str(built.root))  # mounted at a fixed path, not the host's
    for result in forbidden:
        assert not result.success and "ModuleNotFoundError" in result.stderr


def _probe_wheel(directory: Path) -> None:
    """A minimal pure-Python wheel, sandmle-probe 0.1, so pip needs no index."""
    info = "sandmle_probe-0.1.dist-info"
    files = {
        "sandmle_probe/__init__.py": "",
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: sandmle-probe\nVersion: 0.1\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{name},,\n" for name in files) + f"{info}/RECORD,,\n"
    with zipfile.ZipFile(directory / "sandmle_probe-0.1-py3-none-any.whl", "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)


def test_a_host_version_the_index_lacks_is_loosened_loudly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _probe_wheel(tmp_path)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    out = io.StringIO()
    pins = ("sandmle-probe==0.0.9",)
    installed = runtime._install(venv, pins, tmp_path / "log", Console(file=out, width=200))
    assert installed == ("sandmle-probe",)
    assert (
        "sandmle-probe==0.0.9 is not installable here; installing sandmle-probe" in out.getvalue()
    )
