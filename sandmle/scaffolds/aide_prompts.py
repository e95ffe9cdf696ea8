"""AIDE's operator prompts (draft, improve, debug), after aideml's ``aide/agent.py``.

Written in our words and in the shared ``prompt_format`` layout: an intro saying who the
model is and what to do, the task, the memory of earlier solutions (draft and improve),
the parent's code and output (improve, debug), then guidelines and the response format.
"""

from __future__ import annotations

from dataclasses import dataclass

from sandmle.harness.search_tree import Operator, SearchNode
from sandmle.scaffolds.search.journal import Journal
from sandmle.scaffolds.search.prompts import (
    RESPONSE_FORMAT,
    code_part,
    fence,
    instructions_part,
    memory_part,
    memory_text,
    output_part,
    script_rules,
    sections,
    task_part,
)

DATA_SECTION = "# Data overview"

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
    "Take the memory into account: propose something different from what was tried.",
    "State in the plan which evaluation metric you will compute, and how.",
    "Do not explore the data or plot; the data is already prepared.",
)
IMPROVE_GUIDES = (
    "Propose one single, atomic change that can be tested on its own.",
    "Take the memory into account: do not repeat a change that was already tried.",
    "Keep the evaluation the same so that metrics stay comparable.",
)
DEBUG_GUIDES = ("Read the execution output and fix the cause of the failure.",)
CODE_GUIDES = (
    "Use 5-fold cross-validation, or a hold-out split if that is too slow, and print the "
    "validation metric.",
    "Keep the whole solution in one file; do not rely on files written by other runs.",
)


@dataclass
class AidePrompter:
    """Writes AIDE's prompts for one sample."""

    task: str
    data_overview: str = ""
    exec_timeout: int = 3600

    def __call__(self, operator: Operator, parents: list[SearchNode], journal: Journal) -> str:
        if operator == "draft":
            return self.draft(journal)
        if operator == "improve":
            return self.improve(parents[0], journal)
        if operator == "debug":
            return self.debug(parents[0])
        raise ValueError(f"AIDE has no {operator!r} operator")

    def _data(self) -> tuple[str, str]:
        return DATA_SECTION, fence(self.data_overview) if self.data_overview else ""

    def _rules(self, *guides: str) -> tuple[str, str]:
        return instructions_part(
            *guides, *CODE_GUIDES, script_rules(self.exec_timeout), RESPONSE_FORMAT
        )

    def draft(self, journal: Journal) -> str:
        return sections(
            "draft",
            DRAFT_INTRO,
            [
                task_part(self.task),
                memory_part(memory_text(journal.good_nodes)),
                self._data(),
                self._rules(*DRAFT_GUIDES),
            ],
        )

    def improve(self, parent: SearchNode, journal: Journal) -> str:
        return sections(
            "improve",
            IMPROVE_INTRO,
            [
                task_part(self.task),
                memory_part(memory_text(journal.good_nodes)),
                code_part(parent),
                self._rules(*IMPROVE_GUIDES),
            ],
        )

    def debug(self, parent: SearchNode) -> str:
        return sections(
            "debug",
            DEBUG_INTRO,
            [
                task_part(self.task),
                code_part(parent),
                output_part(parent),
                self._data(),
                self._rules(*DEBUG_GUIDES),
            ],
        )
