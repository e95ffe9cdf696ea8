"""AIDE's operator prompts (draft, improve, debug), after aideml's ``aide/agent.py``.

Written in our words, section for section as aideml builds them (WecoAI/aideml @ 9643875):
draft has the task, the memory of good solutions, the guidelines and the data overview;
improve the task, the memory and the solution to improve (code, no output); debug the task,
the buggy solution, its output and the data overview; the draft also lists the installed
packages (``Agent._prompt_environment``, ``aide/agent.py:95-115``). With ``fork`` (the
``mle-bench`` preset) every prompt instead states the time and steps left, the hardware and
the packages, as MLE-bench's AIDE fork does.
"""

from __future__ import annotations

from dataclasses import dataclass

from sandmle.harness.search_tree import Operator, SearchNode
from sandmle.scaffolds.search.journal import Journal
from sandmle.scaffolds.search.prompts import (
    Environment,
    PromptParts,
    buggy_part,
    environment_part,
    improve_part,
    memory_of,
    output_part,
    packages_part,
    sections,
    task_part,
)

DRAFT_INTRO = (
    "You are a Kaggle grandmaster attending a competition. To win, come up with an "
    "excellent and creative plan for a solution, then implement it as Python code."
)
IMPROVE_INTRO = (
    "You are a Kaggle grandmaster attending a competition. You are given a solution that "
    "works; improve it to raise its (test-time) performance. First outline a brief plan "
    "for the improvement, then implement it by changing the given solution."
)
DEBUG_INTRO = (
    "You are a Kaggle grandmaster attending a competition. Your previous solution had a bug "
    "or failed to produce a valid submission. Using the information below, fix it: first "
    "outline the fix, then give the whole corrected script."
)
DRAFT_GUIDES = (
    "The first solution should be simple: no ensembling and no hyper-parameter search.",
    "Take the memory into account: propose a different model, but keep the evaluation.",
    "State in the plan which evaluation metric you will compute, and how.",
    "Do not explore the data or plot; the data is already prepared.",
)
IMPROVE_GUIDES = (
    "Propose one single, atomic change that can be tested on its own.",
    "Take the memory into account: do not repeat a change that was already tried.",
    "Do not explore the data or plot.",
)
DEBUG_GUIDES = (
    "Describe in 3-5 sentences how the problem in the previous implementation can be fixed.",
    "Do not explore the data or plot.",
)
CODE_GUIDES = (
    "Write one self-contained, single-file program that runs as-is; skip no part of it.",
    "Use 5-fold cross-validation when it suits the task, else a hold-out split.",
)


@dataclass
class AidePrompter:
    """Writes AIDE's prompts for one sample."""

    parts: PromptParts
    fork: bool = False
    """MLE-bench's AIDE fork: the time, steps and hardware in every prompt."""

    def __call__(
        self, operator: Operator, parents: list[SearchNode], journal: Journal, env: Environment
    ) -> str:
        memory = memory_of(journal.good_nodes, env)
        task = task_part(self.parts.task)
        if operator == "draft":
            body = [task, memory, self._rules(DRAFT_GUIDES, env), self.parts.data()]
            environment = environment_part(env) if self.fork else packages_part(env)
            return sections(DRAFT_INTRO, [*body, environment])
        if operator == "improve":
            body = [task, memory, improve_part(parents[0]), self._rules(IMPROVE_GUIDES, env)]
            return sections(IMPROVE_INTRO, self._with_environment(body, env))
        if operator == "debug":
            body = [task, buggy_part(parents[0]), output_part(parents[0])]
            body += [self._rules(DEBUG_GUIDES, env), self.parts.data()]
            return sections(DEBUG_INTRO, self._with_environment(body, env))
        raise ValueError(f"AIDE has no {operator!r} operator")

    def _with_environment(self, body: list, env: Environment) -> list:
        return [*body, environment_part(env)] if self.fork else body

    def _rules(self, guides: tuple[str, ...], env: Environment) -> tuple[str, str]:
        return self.parts.instructions(env, *guides, *CODE_GUIDES)
