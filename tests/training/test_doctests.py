"""The examples in the reward, chat and config docstrings run (TRL-style reward functions)."""

from __future__ import annotations

import doctest

import pytest

pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")

from sandmle.env import chat, rewards
from sandmle.specs import episode, files
from sandmle.training import generators, sft


@pytest.mark.parametrize(
    "module", [rewards, chat, generators, sft, files, episode], ids=lambda m: m.__name__
)
def test_docstring_examples(module) -> None:
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


def test_import_sandmle_loads_no_torch() -> None:
    import subprocess
    import sys

    code = "import sandmle, sandmle.training.cli, sandmle.env.rewards, sys; print('torch' in sys.modules or 'trl' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
