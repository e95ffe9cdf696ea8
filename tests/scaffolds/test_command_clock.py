"""The clock the task states is the clock that runs: every scaffold hands the sandbox the task's
seconds per command (``-T command_timeout``, or its profile's) unless its own ``-S`` value says
otherwise.

Each test runs a real eval (bwrap sandbox, scripted mockllm) and reads the ``timeout`` that
``BwrapSandboxEnvironment.exec`` got for the agent's own commands (a bash/python call, a
search's ``python solution.py``, a Dojo code run), not the harness's helper execs (probe,
copies), which keep their own short limits.

The ``mle-bench`` profile asks for ``agent_extras`` (lightgbm, xgboost, torch): building that
agent runtime is the runtime's own slow test, so here ``agent_extras=[]`` runs the agent on the
default Python. Its other limits (GPUs: all the host has, none here; 4 CPUs, 64 GiB, 24 h) hold
as they are, and ``command_timeout`` 32400 is the profile's own: it is what is under test.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import Model, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import Solver

from sandmle.benchmarks.mle_dojo.solver import dojo
from sandmle.benchmarks.mle_dojo.tools import SCRIPT
from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.harness.profiles import PROFILES
from sandmle.harness.sandbox import BwrapSandboxEnvironment
from sandmle.harness.task import default_agent
from sandmle.scaffolds.aide import aide
from sandmle.scaffolds.aira import aira_evo, aira_greedy, aira_mcts
from sandmle.scaffolds.react import react
from sandmle.scaffolds.search.prompts import human_time
from tests.scaffolds.conftest import ScriptedModel, reply

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed")

PROBE = "print('clock probe')"
FAST = {"warm_python": False}
"""No warm interpreter: the commands here import nothing it would save."""
MLE_BENCH = {"profile": "mle-bench", "agent_extras": [], **FAST}
"""MLE-bench's budget, the agent on the default Python (see the module doc)."""
MLE_BENCH_CLOCK = PROFILES["mle-bench"]["command_timeout"]
LIMITS = [(MLE_BENCH, MLE_BENCH_CLOCK), ({"command_timeout": 900, **FAST}, 900)]
EXPLICIT = 45
"""A solver's own ``-S`` value, far from both task clocks."""


def _outputs(*outputs: ModelOutput) -> Model:
    for output in outputs:  # usage given, so mockllm does not count tokens with tiktoken
        output.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
    return get_model("mockllm/model", custom_outputs=list(outputs))


def _tool_loop() -> Model:
    """A python call and a bash call with the probe, then ``submit`` (react, default agent)."""
    return _outputs(
        ModelOutput.for_tool_call("m", "python", {"code": PROBE}),
        ModelOutput.for_tool_call("m", "bash", {"cmd": "echo clock probe"}),
        ModelOutput.for_tool_call("m", "submit", {"answer": "done"}),
    )


def _dojo_actions() -> Model:
    """MLE-Dojo's two code actions as JSON text, one each (``max_steps=2``)."""
    code = '{"action": "%s", "params": {"code": "print(1)"}}'
    return _outputs(
        *(ModelOutput.from_content("m", code % a) for a in ("validate_code", "execute_code"))
    )


@dataclass(frozen=True)
class Scaffold:
    solver: Callable[[int | None], Solver | None]
    """The solver, given its explicit ``-S`` timeout (None: the task's); None: the task's own
    default agent."""
    model: Callable[[], Model | ScriptedModel]
    is_agent_command: Callable[[str], bool]
    """Whether an exec (its argv and input, joined) is one of the agent's commands."""


COPY_SAMPLE = (
    "import shutil\n"
    "shutil.copy('/home/data/sample_submission.csv', '/home/submission/submission.csv')\n"
    "print('validation metric: 0.5')\n"
)
"""A good node in no time (a valid file, a metric): no debug chain follows it."""


def _search_model() -> ScriptedModel:
    return ScriptedModel(default=reply(COPY_SAMPLE))


def _search_run(text: str) -> bool:
    return "python solution.py" in text


SCAFFOLDS: dict[str, Scaffold] = {
    "react": Scaffold(lambda t: react(command_timeout=t), _tool_loop, lambda s: "clock probe" in s),
    "default_agent": Scaffold(
        lambda t: None if t is None else default_agent(t), _tool_loop, lambda s: "clock probe" in s
    ),
    "aide": Scaffold(lambda t: aide(steps=1, exec_timeout=t), _search_model, _search_run),
    "aira_greedy": Scaffold(
        lambda t: aira_greedy(steps=2, exec_timeout=t), _search_model, _search_run
    ),
    "aira_mcts": Scaffold(
        lambda t: aira_mcts(steps=2, num_children=1, exec_timeout=t), _search_model, _search_run
    ),
    "aira_evo": Scaffold(
        lambda t: aira_evo(
            steps=2, individuals_per_generation=1, num_generations=1, exec_timeout=t
        ),
        _search_model,
        _search_run,
    ),
    "dojo": Scaffold(
        lambda t: dojo(max_steps=2, command_timeout=t), _dojo_actions, lambda s: SCRIPT in s
    ),
}


@pytest.fixture
def exec_timeouts(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int | None]]:
    """Every sandbox exec of the eval: its argv and input joined, and the timeout it got."""
    calls: list[tuple[str, int | None]] = []
    real = BwrapSandboxEnvironment.exec

    async def exec(self: BwrapSandboxEnvironment, cmd: list[str], *args: Any, **kwargs: Any) -> Any:
        stdin = kwargs.get("input") or ""
        text = " ".join(cmd) + " " + (stdin if isinstance(stdin, str) else stdin.decode())
        calls.append((text, kwargs.get("timeout")))
        return await real(self, cmd, *args, **kwargs)

    monkeypatch.setattr(BwrapSandboxEnvironment, "exec", exec)
    return calls


def _run(scaffold: Scaffold, explicit: int | None, pack: Path, tmp: Path, **task_args: Any):
    model = scaffold.model()
    solver = scaffold.solver(explicit)
    [log] = inspect_eval(
        synthetic(pack=str(pack), tasks="bike-rentals", **task_args),
        model=model.model() if isinstance(model, ScriptedModel) else model,
        # None: no solver given, so the task runs its own default agent
        **({} if solver is None else {"solver": solver}),
        display="none",
        log_dir=str(tmp / "logs"),
    )
    return log, model


def _agent_timeouts(scaffold: Scaffold, calls: list[tuple[str, int | None]]) -> list[int | None]:
    timeouts = [timeout for text, timeout in calls if scaffold.is_agent_command(text)]
    assert timeouts, "the agent ran no command"
    return timeouts


def _sample_input(log: EvalLog) -> str:
    [sample] = log.samples or []
    return str(sample.input)


@pytest.mark.parametrize(("task_args", "clock"), LIMITS, ids=["mle-bench", "command_timeout=900"])
@pytest.mark.parametrize("name", sorted(SCAFFOLDS))
def test_every_scaffold_runs_the_clock_the_task_states(
    name: str, task_args: dict, clock: int, pack_dir: Path, tmp_path: Path, exec_timeouts: list
) -> None:
    scaffold = SCAFFOLDS[name]
    log, model = _run(scaffold, None, pack_dir, tmp_path, **task_args)
    assert log.status == "success", log.error
    assert f"{clock} s per command" in _sample_input(log)  # what the agent is told ...
    assert set(_agent_timeouts(scaffold, exec_timeouts)) == {clock}  # ... is what runs
    if isinstance(model, ScriptedModel):  # a search's prompts state the run's own limit
        assert f"must finish within {human_time(clock)}." in model.prompts[0]


@pytest.mark.parametrize("name", sorted(SCAFFOLDS))
def test_a_solvers_own_value_wins_over_the_task_clock(
    name: str, pack_dir: Path, tmp_path: Path, exec_timeouts: list
) -> None:
    scaffold = SCAFFOLDS[name]
    log, model = _run(scaffold, EXPLICIT, pack_dir, tmp_path, **MLE_BENCH)
    assert log.status == "success", log.error
    assert set(_agent_timeouts(scaffold, exec_timeouts)) == {EXPLICIT}
    if isinstance(model, ScriptedModel):
        assert f"must finish within {human_time(EXPLICIT)}." in model.prompts[0]
