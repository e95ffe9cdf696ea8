"""Real offline eval logs for the leaderboard tests, made once per session.

Two benchmarks (the synthetic pack of both fixture competitions, and ``mini``: plant-watering
alone), three scaffolds, and models that hand in the sample submission (no medals) or the
answers (gold), plus two checkpoints of one training run.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolCall
from inspect_ai.util import sandbox, store

from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.harness.competition import load_competition
from sandmle.harness.search_tree import STORE_KEY, SearchNode
from sandmle.harness.solvers import copy_sample_submission
from sandmle.harness.task import competition_task
from sandmle.scaffolds import aide
from tests.answers import copy_answers, hand_in_answers
from tests.conftest import copy_pack

if TYPE_CHECKING:
    from streamlit.testing.v1 import AppTest

MODELS = ("mockllm/model-a", "mockllm/model-b")
CHECKPOINTS = ("mockllm/runs/grpo/checkpoint-100", "mockllm/runs/grpo/checkpoint-200")


TRACEBACK = """Traceback (most recent call last):
  File "/home/agent/node_1.py", line 3, in <module>
    ids = train['id']
KeyError: 'id'"""
BUGGY_CODE = "import pandas as pd\ntrain = pd.read_csv('/home/data/train.csv')\nids = train['id']"
REACT_CODE = "import pandas as pd\nprint(pd.read_csv('/home/data/train.csv').shape)"


def tree_nodes() -> list[dict]:
    """A small search: two drafts, an improvement, a buggy debug attempt and its fix."""
    nodes = [
        SearchNode(id=0, operator="draft", step=0, metric=0.71, lower_is_better=False),
        SearchNode(
            id=1,
            operator="draft",
            step=1,
            is_bug=True,
            summary="The run raised an error.",
            plan="Read the ids and predict the mean.",
            code=BUGGY_CODE,
            output=TRACEBACK,
            exec_time_s=0.4,
            extra={"exit_code": 1},
        ),  # fmt: skip
        SearchNode(id=2, parent=0, operator="improve", step=2, metric=0.83, lower_is_better=False),
        SearchNode(id=3, parent=1, operator="debug", step=3, metric=0.65, lower_is_better=False),
        SearchNode(id=4, parent=2, operator="improve", step=4, is_bug=True, summary="OOM"),
    ]
    return [n.model_dump() for n in nodes]


@solver
def toy_tree_search() -> Solver:
    """A fake tree scaffold: one tool call, a stored tree, then the answers (no model calls)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        call = ToolCall(id="c1", function="bash", arguments={"cmd": "ls /home/data"})
        state.messages.append(ChatMessageAssistant(content="Listing the data.", tool_calls=[call]))
        listing = await sandbox().exec(["ls", "/home/data"])
        state.messages.append(
            ChatMessageTool(content=listing.stdout, tool_call_id="c1", function="bash")
        )
        code = ToolCall(id="c2", function="python", arguments={"code": REACT_CODE})
        state.messages.append(ChatMessageAssistant(content="Reading it.", tool_calls=[code]))
        state.messages.append(
            ChatMessageTool(content="(4, 2)", tool_call_id="c2", function="python")
        )
        store().set(STORE_KEY, tree_nodes())
        await hand_in_answers(state)
        state.completed = True
        return state

    return solve


@solver
def trained_policy() -> Solver:
    """A fake checkpoint: hands in the answers once trained past step 100, else the sample."""
    floor, perfect = copy_sample_submission(), copy_answers()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        trained = str(state.model).endswith("checkpoint-200")
        return await (perfect if trained else floor)(state, generate)

    return solve


def _run(task, model: str, solver: Solver, log_dir: Path) -> None:
    logs = inspect_eval(task, model=model, solver=solver, log_dir=str(log_dir), display="none")
    assert logs[0].status == "success", logs[0].error


@pytest.fixture(scope="session")
def pack_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_pack(tmp_path_factory.mktemp("pack"))


def mini(pack_dir: Path):
    comp = load_competition(pack_dir / "plant-watering")
    return competition_task([comp], name="mini", metadata={"benchmark": "mini"})


def make_logs(logs: Path, pack_dir: Path) -> Path:
    """Logs of real offline evals; model-a's synthetic run is split over two logs to pool."""
    pack = str(pack_dir)
    _run(synthetic(pack=pack), MODELS[0], copy_sample_submission(), logs)
    _run(synthetic(pack=pack, epochs=2), MODELS[0], copy_sample_submission(), logs)
    _run(synthetic(pack=pack), MODELS[0], copy_answers(), logs)
    _run(synthetic(pack=pack), MODELS[1], toy_tree_search(), logs)
    _run(mini(pack_dir), MODELS[1], copy_answers(), logs)
    _run(mini(pack_dir), MODELS[0], copy_sample_submission(), logs)
    for checkpoint in CHECKPOINTS:
        _run(mini(pack_dir), checkpoint, trained_policy(), logs / "training")
    return logs


@pytest.fixture(scope="session")
def log_dir(tmp_path_factory: pytest.TempPathFactory, pack_dir: Path) -> Path:
    return make_logs(tmp_path_factory.mktemp("logs"), pack_dir)


CHAOS_RATES = {
    **dict.fromkeys(("good", "unfenced", "several_blocks", "prose", "empty", "length", "long",
                     "error", "review_error"), 0.0),
    "syntax_error": 4.0,
    "crash": 1.0,
}  # fmt: skip
"""Code replies that do not compile or that crash when run: at seed ``CHAOS_SEED`` node 0 is refused
three times and node 1 crashes (``test_chaos_log_holds_refusals_and_crashes`` checks it). Chaos
draws each reply from a hash of the conversation, so a change to the AIDE prompts redraws them:
then pick the first seed for which that test passes again."""
CHAOS_SEED = 8


@pytest.fixture(scope="session")
def chaos_log_dir(tmp_path_factory: pytest.TempPathFactory, pack_dir: Path) -> Path:
    """A real AIDE search by ``sandmle/chaos`` in its own dir (the second of two log dirs)."""
    logs = tmp_path_factory.mktemp("chaos")
    [log] = inspect_eval(
        synthetic(pack=str(pack_dir), tasks="bike-rentals"),
        model="sandmle/chaos",
        model_args={"seed": CHAOS_SEED, **CHAOS_RATES},
        solver=aide(steps=3, num_drafts=2),
        log_dir=str(logs),
        display="none",
    )
    assert log.status == "success", log.error
    return logs


@pytest.fixture
def log_copy(log_dir: Path, tmp_path: Path) -> Path:
    """A writable copy of the session's logs, for tests that add broken files."""
    return Path(shutil.copytree(log_dir, tmp_path / "logs"))


@pytest.fixture(autouse=True)
def _private_leaderboard_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's app keeps its parsed-log cache in its own folder, not in ~/.cache."""
    monkeypatch.setenv("SANDMLE_LEADERBOARD_CACHE", str(tmp_path / "leaderboard-cache.pkl"))


def open_app(monkeypatch: pytest.MonkeyPatch, *dirs: Path, **params: str) -> AppTest:
    """The leaderboard app on ``dirs``, run once with ``params`` as its query parameters."""
    from streamlit.testing.v1 import AppTest

    from sandmle.leaderboard.cli import APP_FILE

    # Streamlit hands the app the arguments after ``--`` as sys.argv[1:].
    monkeypatch.setattr(sys, "argv", [str(APP_FILE), *map(str, dirs)])
    app = AppTest.from_file(str(APP_FILE), default_timeout=60)
    for key, value in params.items():
        app.query_params[key] = value
    app.run()
    assert not app.exception, app.exception
    return app
