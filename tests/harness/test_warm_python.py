"""Warm Python in the bwrap sandbox: a run served by the fork server is a fresh process.

Every corpus case runs twice in one shared sample (starting a warm server imports scikit-learn
once, so the corpus shares it): cold, with the shim off PATH, and warm, through the shim;
stdout, stderr, exit status (or exception) and the files left must be the same, and the
server's log must show the warm run was really served warm.
"""

from __future__ import annotations

import asyncio
import doctest
import os
import shutil
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.util import OutputLimitExceededError

from sandmle.harness.sandbox import BwrapConfig, BwrapSandboxEnvironment, SandboxLimits, _command
from sandmle.harness.sandbox.warm import (
    LOG_NAME,
    SERVER_SCRIPT,
    SERVER_SOURCE,
    SHIM_DIR,
    SOCKET_NAME,
    WARM_DIR,
    WARM_PACKAGE,
    WarmPythonConfig,
    prepare_warm_dir,
)
from sandmle.sandbox_scripts import warm_client
from sandmle.sandbox_scripts.warm_server import imports, request

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")

LIMITS = SandboxLimits(
    memory_mb=1024,
    max_processes=128,
    cpu_time_s=120,
    command_timeout_s=60,
    max_output_bytes=256 * 1024,
    disk_mb=200,
    poll_interval_s=0.2,
)
READY_TIMEOUT_S = 180
CASES_DIR = "cases"


@dataclass(frozen=True)
class Outcome:
    """Everything a caller can see of one exec."""

    returncode: int | None
    stdout: str
    stderr: str
    error: str | None
    files: dict[str, bytes]


class Sample:
    """A live sample with a ready warm server, driven from synchronous tests."""

    def __init__(self, config: BwrapConfig) -> None:
        self.config = config
        self.loop = asyncio.new_event_loop()
        envs = self.loop.run_until_complete(
            BwrapSandboxEnvironment.sample_init("warm-test", config, {})
        )
        self.envs = envs
        self.sandbox = envs["default"].as_type(BwrapSandboxEnvironment)
        warm = self.sandbox.warm
        assert warm is not None
        if not warm.ready.wait(READY_TIMEOUT_S):
            raise AssertionError(f"warm server not ready: {self.log()}")

    def log(self) -> str:
        if self.sandbox.warm is not None:
            self.sandbox.warm.log.sync()
        path = self.sandbox.dirs.root / LOG_NAME
        return path.read_text() if path.exists() else ""

    def served(self) -> int:
        return sum(1 for line in self.log().splitlines() if line.startswith("warm: "))

    def cold_path(self) -> str:
        path = self.sandbox._path
        return ":".join(part for part in path.split(":") if part != SHIM_DIR)

    def exec(self, cmd: list[str], **kwargs: Any) -> Any:
        return self.loop.run_until_complete(self.sandbox.exec(cmd, **kwargs))

    def close(self) -> None:
        self.loop.run_until_complete(
            BwrapSandboxEnvironment.sample_cleanup("warm-test", self.config, self.envs, False)
        )
        self.loop.close()


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sample]:
    base = tmp_path_factory.mktemp("warm") / "sandboxes"
    # ready before the first case; every case to the server, trivial ones too
    warm = WarmPythonConfig(enabled=True, start="sample", cold_trivial=False)
    config = BwrapConfig(limits=LIMITS, base_dir=base, warm_python=warm)
    live = Sample(config)
    try:
        yield live
    finally:
        live.close()
    assert list(base.iterdir()) == []


def _host_files(root: Path) -> dict[str, bytes]:
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            found[str(path.relative_to(root))] = path.read_bytes()
    return found


def run_case(
    sample: Sample, name: str, cmd: list[str], *, warm: bool, served: bool = True, **kwargs: Any
) -> Outcome:
    """Run `cmd` in a fresh case dir holding the case's files; collect what it left.

    warm: the shim leads PATH (else it is left out); served: the server must serve the run.
    """
    host = sample.sandbox.dirs.work / CASES_DIR / name
    files = kwargs.pop("files", {})
    if host.exists():
        shutil.rmtree(host)
    host.mkdir(parents=True)
    for rel, text in files.items():
        (host / rel).write_text(text)
    uid = sample.sandbox.dirs.uid
    for path in [host, *host.rglob("*"), host.parent]:
        os.chown(path, uid, uid)
    env = {} if warm else {"PATH": sample.cold_path()}
    served_before = sample.served()
    try:
        result = sample.exec(cmd, cwd=f"{CASES_DIR}/{name}", env=env, **kwargs)
        outcome = Outcome(result.returncode, result.stdout, result.stderr, None, {})
    except (TimeoutError, OutputLimitExceededError) as error:
        truncated = getattr(error, "truncated_output", None)
        outcome = Outcome(None, truncated or "", "", type(error).__name__, {})
    time.sleep(0.3)  # a killed run's monitor finishes its kill
    outcome = Outcome(**{**outcome.__dict__, "files": _host_files(host)})
    if warm:
        now_served = sample.served() > served_before
        assert now_served == served, f"{name}: served warm is {now_served}: {sample.log()}"
    return outcome


def same_warm_and_cold(sample: Sample, name: str, cmd: list[str], **kwargs: Any) -> Outcome:
    cold = run_case(sample, name, cmd, warm=False, **dict(kwargs))
    warm = run_case(sample, name, cmd, warm=True, **dict(kwargs))
    assert warm == cold
    return warm


# --- the corpus ----------------------------------------------------------------------------

EXCEPTION = """
import json

def parse(text):
    return json.loads(text)

def main():
    try:
        parse("{bad")
    except ValueError as error:
        raise RuntimeError("could not read the config") from error

print("before")
main()
"""

FILES = """
import os
import pandas as pd

os.makedirs("out/sub", exist_ok=True)
pd.DataFrame({"id": range(5), "y": [0.5] * 5}).to_csv("out/submission.csv", index=False)
with open("out/sub/notes.txt", "w") as handle:
    handle.write("closed\\n")
left_open = open("unclosed.txt", "w")
left_open.write("flushed at exit\\n")
print(sorted(os.listdir("out")))
"""

THREADS = """
import threading
import time

results = []

def work(i):
    time.sleep(0.05 * (3 - i))
    results.append(i)

threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(sorted(results))

def late():
    time.sleep(0.3)
    print("non-daemon thread finished before exit", flush=True)

threading.Thread(target=late).start()
print("main done")
"""

SUBPROCESS = """
import subprocess
import sys

print(subprocess.run(["echo", "from echo"], capture_output=True, text=True).stdout.strip())
out = subprocess.run([sys.executable, "-c", "import sys; print(sys.argv[1:])", "a", "b"],
                     capture_output=True, text=True)
print(out.stdout.strip(), out.returncode)
code = subprocess.run(["python", "-c", "import sys; sys.exit(7)"]).returncode
print("nested python exit", code)
"""

MULTIPROCESSING = """
import multiprocessing as mp

def square(x):
    return x * x

if __name__ == "__main__":
    with mp.Pool(2) as pool:
        print(pool.map(square, range(6)))
    ctx = mp.get_context("spawn")
    with ctx.Pool(1) as pool:
        print(pool.map(square, [7]))
    queue = mp.Queue()
    proc = mp.Process(target=queue.put, args=("from child",))
    proc.start()
    print(queue.get())
    proc.join()
    print("child exit", proc.exitcode)
"""

INTROSPECT = """
import os
import sys

print(sys.argv)
print(sys.path[0])
print(__file__, __name__)
print(sorted(k for k in globals() if k.startswith("__")))
print(os.getcwd())
print(os.environ.get("CASE_VAR"))
print(sys.stdin.isatty(), sys.stdout.isatty(), sys.stdout.line_buffering)
print(sys.stdout.encoding, sys.stderr.errors)
print(oct(os.umask(0)))
"""


def test_exception_traceback_and_chained_cause(sample: Sample) -> None:
    out = same_warm_and_cold(sample, "exc", ["python", "main.py"], files={"main.py": EXCEPTION})
    assert out.returncode == 1
    assert "before" in out.stdout
    assert "The above exception was the direct cause" in out.stderr
    assert 'File "/home/agent/cases/exc/main.py", line 14, in <module>' in out.stderr


def test_sys_exit_codes(sample: Sample) -> None:
    out = same_warm_and_cold(sample, "exit3", ["python", "-c", "import sys; sys.exit(3)"])
    assert out.returncode == 3
    message = same_warm_and_cold(sample, "exitmsg", ["python", "-c", "raise SystemExit('bye')"])
    assert (message.returncode, message.stderr) == (1, "bye\n")


def test_syntax_error(sample: Sample) -> None:
    out = same_warm_and_cold(sample, "syntax", ["python", "bad.py"], files={"bad.py": "x = (\n"})
    assert out.returncode == 1
    assert "SyntaxError" in out.stderr


def test_reading_stdin_and_script_from_stdin(sample: Sample) -> None:
    code = "import sys\ndata = sys.stdin.read()\nprint(len(data), data.upper())\n"
    out = same_warm_and_cold(
        sample, "stdin", ["python", "read.py"], files={"read.py": code}, input="abc\ndef\n"
    )
    assert out.stdout == "8 ABC\nDEF\n\n"
    piped = same_warm_and_cold(
        sample, "dash", ["python", "-"], input="import sys\nprint(sys.argv, __file__)\n"
    )
    assert piped.stdout == "['-'] <stdin>\n"
    # Inspect's python tool: bash --login -c "python3 -" with the code on stdin
    tool = same_warm_and_cold(
        sample, "tool", ["bash", "--login", "-c", "python3 -"], input="print(6 * 7)\n"
    )
    assert tool.stdout == "42\n"


def test_argv_path_globals_env_and_streams(sample: Sample) -> None:
    cmd = [
        "bash", "-c",
        "mkdir -p sub && cp show.py sub/ && umask 027 && CASE_VAR=set python sub/show.py x 'y z'",
    ]  # fmt: skip
    out = same_warm_and_cold(sample, "introspect", cmd, files={"show.py": INTROSPECT})
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert lines[0] == "['sub/show.py', 'x', 'y z']"
    assert lines[1] == "/home/agent/cases/introspect/sub"
    assert lines[2] == "/home/agent/cases/introspect/sub/show.py __main__"
    assert lines[5] == "set"
    assert lines[-1] == "0o27"


def test_writing_files_including_one_left_open(sample: Sample) -> None:
    out = same_warm_and_cold(sample, "files", ["python", "w.py"], files={"w.py": FILES})
    assert out.files["unclosed.txt"] == b"flushed at exit\n"
    assert out.files["out/submission.csv"].startswith(b"id,y\n0,0.5\n")


def test_threads_joined_before_exit(sample: Sample) -> None:
    out = same_warm_and_cold(sample, "threads", ["python", "t.py"], files={"t.py": THREADS})
    assert out.stdout.splitlines() == [
        "[0, 1, 2]",
        "main done",
        "non-daemon thread finished before exit",
    ]


def test_subprocesses(sample: Sample) -> None:
    out = same_warm_and_cold(sample, "subproc", ["python", "s.py"], files={"s.py": SUBPROCESS})
    assert out.stdout.splitlines() == ["from echo", "['a', 'b'] 0", "nested python exit 7"]


def test_multiprocessing_fork_and_spawn(sample: Sample) -> None:
    out = same_warm_and_cold(
        sample, "mp", ["python", "m.py"], files={"m.py": MULTIPROCESSING}, timeout=120
    )
    assert out.stdout.splitlines() == [
        "[0, 1, 4, 9, 16, 25]",
        "[49]",
        "from child",
        "child exit 0",
    ]


def test_segfault_via_ctypes(sample: Sample) -> None:
    code = "import ctypes\nprint('about to crash', flush=True)\nctypes.string_at(0)\n"
    out = same_warm_and_cold(sample, "segv", ["python", "crash.py"], files={"crash.py": code})
    assert out.returncode == 128 + 11
    shell = same_warm_and_cold(
        sample,
        "segv-sh",
        ["bash", "-c", "python crash.py; echo status=$?"],
        files={"crash.py": code},
    )
    assert "status=139" in shell.stdout


HEARTBEAT = """
import time
while True:
    with open("beats.txt", "a") as handle:
        handle.write("x")
    time.sleep(0.05)
"""


def test_timeout_kills_the_run(sample: Sample) -> None:
    for warm in (False, True):
        out = run_case(
            sample, "timeout", ["python", "beat.py"], warm=warm, files={"beat.py": HEARTBEAT},
            timeout=3,
        )  # fmt: skip
        assert out.error == "TimeoutError"
        beats = sample.sandbox.dirs.work / CASES_DIR / "timeout" / "beats.txt"
        before = beats.read_bytes()
        time.sleep(0.5)
        assert beats.read_bytes() == before, f"the run outlived its timeout (warm={warm})"


def test_output_past_the_limit(sample: Sample) -> None:
    code = "import sys\nfor i in range(100000):\n    sys.stdout.write(f'{i:08d}\\n')\n"
    out = same_warm_and_cold(sample, "flood", ["python", "flood.py"], files={"flood.py": code})
    assert out.error == "OutputLimitExceededError"
    assert out.stdout.startswith("00000000\n00000001\n")


def test_signals_are_relayed(sample: Sample) -> None:
    driver = """
import signal, subprocess, sys
child = subprocess.Popen(["python", "-c", "import time; print('up', flush=True); time.sleep(30)"],
                         stdout=subprocess.PIPE, text=True)
print(child.stdout.readline().strip(), flush=True)
child.send_signal(getattr(signal, sys.argv[1]))
print("status", child.wait())
"""
    interrupt = same_warm_and_cold(
        sample, "sigint", ["python", "d.py", "SIGINT"], files={"d.py": driver}
    )
    assert interrupt.stdout.splitlines() == ["up", "status -2"]
    assert interrupt.stderr.rstrip().endswith("KeyboardInterrupt")
    term = same_warm_and_cold(
        sample, "sigterm", ["python", "d.py", "SIGTERM"], files={"d.py": driver}
    )
    assert term.stdout.splitlines() == ["up", "status -15"]


def test_signals_the_harness_ignores_are_not_ignored_in_the_sandbox(sample: Sample) -> None:
    """Under `nohup` or a script's background job the harness ignores SIGHUP/SIGINT/SIGQUIT,
    and an ignored signal survives exec: the CI rehearsal (run with `&`) saw
    test_signals_are_relayed's child ignore SIGINT, warm and cold."""
    probe = ["python", "-c", "import signal as s; print([s.getsignal(x) == s.SIG_IGN "
             "for x in (s.SIGHUP, s.SIGINT, s.SIGQUIT)])"]  # fmt: skip
    ignored = (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT)
    saved = {number: signal.signal(number, signal.SIG_IGN) for number in ignored}
    try:
        # twice: the first cold exec may take a bwrap started before the signals were ignored
        for round_ in range(2):
            out = same_warm_and_cold(sample, f"ignored-{round_}", probe)
            assert out.stdout.splitlines() == ["[False, False, False]"], out
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)


def test_an_env_without_default_signal_is_said_once_and_leaves_execs_as_they_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """coreutils < 8.31 (Ubuntu 20.04, Debian 10) has no `env --default-signal`: prefixing
    it would fail every exec of a harness run under nohup, so it is left out, with a warning."""
    old_env = tmp_path / "env"
    old_env.write_text('#!/bin/sh\n[ "$1" = --default-signal ] && exit 125\nexec "$@"\n')
    old_env.chmod(0o755)
    saved = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        assert _command._signal_prefix() == [_command.ENV, "--default-signal"]
        monkeypatch.setattr(_command, "ENV", str(old_env))
        with caplog.at_level("WARNING"):
            assert _command._signal_prefix() == [] and _command._signal_prefix() == []
    finally:
        signal.signal(signal.SIGHUP, saved)
    warned = [r.message for r in caplog.records if "--default-signal" in r.message]
    assert len(warned) == 1 and str(old_env) in warned[0]


def test_memory_hog_is_stopped(sample: Sample) -> None:
    hog = "chunks = []\nwhile True:\n    chunks.append(bytearray(b'x' * (64 * 1024 * 1024)))\n"
    out = same_warm_and_cold(sample, "hog", ["python", "hog.py"], files={"hog.py": hog})
    if sample.sandbox.cgroup is not None:  # the sample's cgroup kills it, warm or cold
        assert out.returncode == 128 + 9
        assert "memory limit" in out.stderr
    else:  # no cgroup here: the per-process address-space limit stops it
        assert out.returncode == 1
        assert "MemoryError" in out.stderr


def test_state_does_not_leak_between_runs(sample: Sample) -> None:
    first = """
import os, sys
import numpy
import xml.dom.minidom
numpy.PATCHED_BY_AGENT = True
sys.modules["json"].loads = None
os.environ["LEAKED"] = "1"
os.chdir("/tmp")
print("patched")
"""
    second = """
import json, os, sys
import numpy
print("xml.dom.minidom" in sys.modules, hasattr(numpy, "PATCHED_BY_AGENT"))
print(json.loads("[1]"), os.environ.get("LEAKED"), os.getcwd())
"""
    files = {"first.py": first, "second.py": second}
    assert run_case(sample, "leak", ["python", "first.py"], warm=True, files=files).stdout == (
        "patched\n"
    )
    out = run_case(sample, "leak", ["python", "second.py"], warm=True, files=files)
    assert out.stdout == "False False\n[1] None /home/agent/cases/leak\n"


SERVER_TRACES = """
import sys
print(sorted(m for m in sys.modules if "warm" in m))
print([p for p in sys.path if "sandmle-warm" in p])
print([p for p in sys.path_importer_cache if "sandmle-warm" in p])
sys.dont_write_bytecode = True  # its .pyc holds the source's mtime: warm and cold would differ
import sandmle_warm
print(sandmle_warm.__file__)
"""


def test_a_run_sees_nothing_of_the_server(sample: Sample) -> None:
    """The server's own modules are not a run's: none in sys.modules or on its paths, and a
    run's file named like the server's package is the one it imports."""
    files = {"trace.py": SERVER_TRACES, "sandmle_warm.py": ""}
    out = same_warm_and_cold(sample, "traces", ["python", "trace.py"], files=files)
    assert out.stdout == "[]\n[]\n[]\n/home/agent/cases/traces/sandmle_warm.py\n"


def test_random_state_differs_between_runs(sample: Sample) -> None:
    code = "import random, numpy\nprint(random.random(), numpy.random.rand())\n"
    outs = {run_case(sample, "rand", ["python", "-c", code], warm=True).stdout for _ in range(3)}
    assert len(outs) == 3


def test_what_the_server_cannot_serve_runs_cold(sample: Sample) -> None:
    before = sample.log().count("cold: ")
    args = {"warm": True, "served": False}
    out = run_case(sample, "module", ["python", "-m", "json.tool"], input='{"a":1}', **args)
    assert out.stdout == '{\n    "a": 1\n}\n'
    assert sample.log().count("cold: ") == before  # -m never reaches the server
    cmd = ["bash", "-c", "OMP_NUM_THREADS=2 python -c 'import os; print(os.getpid() > 0)'"]
    assert run_case(sample, "env", cmd, **args).stdout == "True\n"
    assert sample.log().splitlines()[-1] == "cold: environment OMP_NUM_THREADS"
    venv = run_case(
        sample,
        "venv",
        ["bash", "-c", "python -m venv --without-pip v && . v/bin/activate && "
         "python -c 'import sys; print(sys.prefix)'"],
        timeout=120,
        **args,
    )  # fmt: skip
    assert venv.stdout == "/home/agent/cases/venv/v\n"


def test_warm_is_faster_than_cold(sample: Sample) -> None:
    """Not a timing assertion on speed figures (bench/ has those): the server really skips
    the imports, seen as a library the run names already present when the run starts."""
    code = (
        "import sys\nhad = 'sklearn.ensemble' in sys.modules\nimport sklearn.ensemble\nprint(had)\n"
    )
    assert run_case(sample, "pre", ["python", "-c", code], warm=True).stdout == "True\n"
    assert run_case(sample, "pre", ["python", "-c", code], warm=False).stdout == "False\n"


def test_what_a_library_imports_on_first_use_comes_with_it(sample: Sample) -> None:
    """pandas' CSV writer and scikit-learn's DataFrame backend (narwhals) are imported lazily by
    their first call; the server imports them with the library, so no warm run pays them."""
    lazy = ("pandas.io.formats.csvs", "narwhals._pandas_like.dataframe")
    code = f"import sys\nhad = [m for m in {lazy!r} if m in sys.modules]\nimport pandas, sklearn\nprint(had)\n"
    assert run_case(sample, "lazy", ["python", "-c", code], warm=True).stdout == f"{list(lazy)}\n"
    assert run_case(sample, "lazy", ["python", "-c", code], warm=False).stdout == "[]\n"


def test_a_file_that_shadows_a_loaded_module_runs_cold(sample: Sample) -> None:
    files = {"pandas.py": "print('the local pandas')\n", "use.py": "import pandas\nprint('ran')\n"}
    run_case(sample, "warmup", ["python", "-c", "import pandas"], warm=True)
    cold = run_case(sample, "shadow", ["python", "use.py"], warm=False, files=files)
    out = run_case(sample, "shadow", ["python", "use.py"], warm=True, served=False, files=files)
    assert (out.returncode, out.stdout, out.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    assert out.stdout == "the local pandas\nran\n"  # (pyc stamps differ: files rewritten)
    assert sample.log().splitlines()[-1] == "cold: shadowed pandas"


def test_libraries_are_imported_when_a_run_first_names_them(tmp_path: Path) -> None:
    """On demand (the default): the server imports nothing until a run's source names a
    preload module; then it imports it once, before that run and for every later one. A
    run naming none of them goes straight to the real interpreter (cold_trivial)."""
    config = BwrapConfig(
        limits=LIMITS, base_dir=tmp_path / "b", warm_python=WarmPythonConfig(enabled=True)
    )
    live = Sample(config)
    try:
        present = "import sys\nprint([m for m in ('numpy', 'pandas', 'scipy') if m in sys.modules])"
        names_pandas = "import sys\nhad = 'pandas' in sys.modules\nimport pandas\nprint(had)"
        live.loop.run_until_complete(live.sandbox.write_file("plain.py", "print(6 * 7)\n"))
        outs = [
            live.exec(["python", "-c", "print(6 * 7)"]).stdout,  # trivial: never reaches it
            live.exec(["python", "plain.py"]).stdout,
            live.exec(["python", "-c", present]).stdout,
            live.exec(["python", "-c", names_pandas]).stdout,
            live.exec(["python", "-c", present]).stdout,
            # the python tool's way: the source on a pipe, read by the server without taking it
            live.exec(
                ["bash", "-c", "python3 -"], input="from scipy import special\nprint(1)"
            ).stdout,
            live.exec(["python", "-c", present]).stdout,
        ]
        log = live.log().splitlines()
    finally:
        live.close()
    assert outs == [
        "42\n",
        "42\n",
        "[]\n",
        "True\n",
        "['numpy', 'pandas']\n",
        "1\n",
        "['numpy', 'pandas', 'scipy']\n",
    ]
    assert log == [
        "warm: code",
        "warm: code (imported pandas)",
        "warm: code",
        "warm: stdin (imported scipy)",
        "warm: code",
    ]


def test_referenced_modules() -> None:
    source = b"""
import os, numpy as np
from sklearn.ensemble import (RandomForestClassifier,
    GradientBoostingClassifier)
from sklearn import metrics, linear_model as lm
def f():
    import scipy.stats
x = "import not_at_line_start"
"""
    assert imports.referenced_modules(source) == {
        "os", "numpy", "sklearn.ensemble", "sklearn.ensemble.RandomForestClassifier",
        "sklearn", "sklearn.metrics", "sklearn.linear_model", "scipy.stats",
    }  # fmt: skip


def test_the_warm_dir_holds_the_launcher_the_package_and_the_client(tmp_path: Path) -> None:
    host = prepare_warm_dir(tmp_path, "/usr/bin/python3", WarmPythonConfig())
    modules = {p.name for p in SERVER_SOURCE.glob("*.py")} - {"launcher.py"}
    assert {p.name for p in (host / WARM_PACKAGE).iterdir()} == modules
    assert (host / SERVER_SCRIPT).read_text() == (SERVER_SOURCE / "launcher.py").read_text()
    assert f'"{WARM_PACKAGE}.serve"' in (host / SERVER_SCRIPT).read_text()
    assert {p.name for p in host.iterdir()} == {"bin", "client.py", SERVER_SCRIPT, WARM_PACKAGE}
    assert {oct(p.stat().st_mode & 0o777) for p in host.rglob("*.py")} == {"0o644"}


def test_server_and_client_share_their_constants() -> None:
    assert warm_client.SOCKET == f"{WARM_DIR}/{SOCKET_NAME}"
    assert warm_client.RLIMITS == request.RLIMITS


def test_parse_args() -> None:
    assert request.parse_args(["-c", "pass", "x"], False).rest == ["-c", "x"]
    assert request.parse_args(["s.py", "-m"], False).kind == "script"
    assert request.parse_args([], False).rest == [""]
    for args in (["-m", "x"], ["-u", "s.py"], ["-I", "-c", "1"], ["-c"]):
        assert request.parse_args(args, False) is None
    assert request.parse_args(["-"], True) is None


def test_benchmark_tasks_turn_warm_python_on_unless_told(plant_dir: Path) -> None:
    from sandmle.harness.competition import load_competition
    from sandmle.harness.task import TaskLimits, competition_task

    def warm_in(limits: TaskLimits) -> bool:
        built = competition_task([load_competition(plant_dir)], name="t", limits=limits)
        sandbox = built.dataset[0].sandbox
        assert sandbox is not None and isinstance(sandbox.config, BwrapConfig)
        return sandbox.config.warm_python.enabled

    assert warm_in(TaskLimits())
    assert not warm_in(TaskLimits.from_args({"warm_python": "false"}))
    assert not BwrapConfig().warm_python.enabled  # a bare sandbox starts no server


def test_server_starts_at_the_first_python_exec(tmp_path: Path) -> None:
    """start="first_python": no server until an exec names python; that run waits for the
    eager imports and is warm."""
    warm = WarmPythonConfig(enabled=True, start="first_python", imports="eager")
    config = BwrapConfig(limits=LIMITS, base_dir=tmp_path / "b", warm_python=warm)

    async def main() -> tuple[bool, Any, str]:
        envs = await BwrapSandboxEnvironment.sample_init("lazy", config, {})
        sandbox = envs["default"].as_type(BwrapSandboxEnvironment)
        try:
            await sandbox.exec(["ls"])
            started_early = sandbox.warm is not None
            code = "import sys; print('sklearn' in sys.modules)"
            result = await sandbox.exec(["bash", "-c", f'python -c "{code}"'])
            assert sandbox.warm is not None
            sandbox.warm.log.sync()
            return started_early, result, (sandbox.dirs.root / LOG_NAME).read_text()
        finally:
            await BwrapSandboxEnvironment.sample_cleanup("lazy", config, envs, False)

    started_early, result, log = asyncio.run(main())
    assert not started_early
    assert (result.returncode, result.stdout) == (0, "True\n")
    assert log.splitlines()[-1] == "warm: code"


def test_demo_and_training_rollouts_have_a_warm_python_switch(plant_dir: Path) -> None:
    from sandmle.specs.training import RolloutSettings
    from sandmle.study.demo import demo_study
    from sandmle.study.runner import study_tasks
    from sandmle.training.rollouts import training_task

    def demo_warm(**switch: bool) -> set[bool]:
        study = demo_study(plant_dir.parent, Path("unused"), tasks=[plant_dir.name], **switch)
        return {t.dataset[0].sandbox.config.warm_python.enabled for t in study_tasks(study)}

    assert demo_warm() == {True} and demo_warm(warm_python=False) == {False}

    def rollout_warm(**switch: bool) -> bool:
        settings = RolloutSettings(pack=str(plant_dir.parent), limits=dict(switch))
        task = training_task(settings, [plant_dir.name])
        return task.dataset[0].sandbox.config.warm_python.enabled

    assert rollout_warm() and not rollout_warm(warm_python=False)


def test_a_trivial_direct_exec_skips_the_shim() -> None:
    """skip_shim's examples: where the shim would exec the interpreter at once, the host
    does it (what runs is the same; bench/synth_step_time.py measures the exec saved)."""
    from sandmle.harness.sandbox import warm

    result = doctest.testmod(warm)
    assert result.attempted >= 3 and result.failed == 0
