"""AIRA-dojo's operator prompts (draft, improve, debug, crossover), in our words.

After facebookresearch/aira-dojo ``src/dojo/configs/solver/operators/mlebench/aira_operators/
{draft,improve,debug,crossover}.yaml`` and ``src/dojo/solvers/utils.py``: one idea per reply,
different from the ideas in memory; 5-fold cross-validation; a complexity tier that grows
with how many children the parent already has (under 2: simple, under 4: normal, else
complex); debug prompts carry the memory of earlier fixes in the same chain. The analyze
step is AIDE's (AIRA reuses it), shared in ``search.prompts``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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

Complexity = Literal["simple", "normal", "complex"]
DATA_SECTION = "# Data overview"
GRANDMASTER = "You are a Kaggle Grandmaster attending a high-stakes competition."

TIER_GUIDES: dict[Complexity, str] = {
    "simple": "Propose a SIMPLE idea: a battle-tested baseline that is likely to work well.",
    "normal": "Propose a MORE COMPLEX idea that can beat the baselines at some cost: e.g. a "
    "stronger model, specialised feature engineering, basic ensembling or tuning.",
    "complex": "Propose an ADVANCED idea: e.g. specialised models, advanced feature "
    "engineering or augmentation, advanced ensembling or hyper-parameter optimisation.",
}
DRAFT_INTRO = (
    f"{GRANDMASTER} Provide EXACTLY ONE IDEA and ONE implementation of it, different from "
    "the ideas explored before, that is likely to perform strongly. No exploratory analysis."
)
IMPROVE_INTRO = (
    f"{GRANDMASTER} You are given a working solution. Propose ONE improvement, different "
    "from the improvements already tried on it, and implement it in the full script."
)
DEBUG_INTRO = (
    f"{GRANDMASTER} The solution below failed (see its output). Find the cause and return "
    "the whole fixed script; keep the approach unless it cannot work."
)
CROSSOVER_INTRO = (
    f"{GRANDMASTER} You are given two solutions. Combine their strengths into ONE new "
    "solution that is likely to beat both, and implement it in a full script."
)
CV_GUIDE = (
    "Evaluate with 5-fold cross-validation and print the mean CV score of the competition "
    "metric; keep the evaluation consistent with earlier solutions."
)
STYLE_GUIDES = (
    "Be specific about data processing, features, model, optimisation and evaluation.",
    "Prefer vectorised operations over Python loops; keep stdout clean.",
)


def complexity_tier(count: int) -> Complexity:
    """AIRA's tier from how many solutions already exist at that point of the tree."""
    if count < 2:
        return "simple"
    return "normal" if count < 4 else "complex"


@dataclass
class AiraPrompter:
    """Writes AIRA's prompts for one sample."""

    task: str
    data_overview: str = ""
    exec_timeout: int = 14400
    use_complexity: bool = True

    def __call__(self, operator: Operator, parents: list[SearchNode], journal: Journal) -> str:
        if operator == "draft":
            return self.draft(journal)
        if operator == "improve":
            return self.improve(parents[0], journal)
        if operator == "debug":
            return self.debug(parents[0], journal)
        return self.crossover(parents[0], parents[1])

    def _tier(self, count: int) -> str:
        return TIER_GUIDES[complexity_tier(count)] if self.use_complexity else ""

    def _rules(self, *guides: str) -> tuple[str, str]:
        return instructions_part(
            *guides, CV_GUIDE, *STYLE_GUIDES, script_rules(self.exec_timeout), RESPONSE_FORMAT
        )

    def _data(self) -> tuple[str, str]:
        return DATA_SECTION, fence(self.data_overview) if self.data_overview else ""

    def draft(self, journal: Journal) -> str:
        drafts = journal.drafts
        return sections(
            "draft",
            DRAFT_INTRO,
            [
                task_part(self.task),
                memory_part(memory_text(drafts)),
                self._data(),
                self._rules(
                    self._tier(len(drafts)), "Consider a DIFFERENT aspect than the memory."
                ),
            ],
        )

    def improve(self, parent: SearchNode, journal: Journal) -> str:
        tried = journal.children(parent)
        return sections(
            "improve",
            IMPROVE_INTRO,
            [
                task_part(self.task),
                memory_part(memory_text(tried)),
                code_part(parent),
                self._data(),
                self._rules(self._tier(len(tried)), "Make one focused, testable change."),
            ],
        )

    def debug(self, parent: SearchNode, journal: Journal) -> str:
        chain = debug_chain(parent, journal)[:-1]
        return sections(
            "debug",
            DEBUG_INTRO,
            [
                task_part(self.task),
                memory_part(memory_text(chain)),
                code_part(parent),
                output_part(parent),
                self._data(),
                self._rules("Do not repeat a fix from the memory that did not work."),
            ],
        )

    def crossover(self, first: SearchNode, second: SearchNode) -> str:
        return sections(
            "crossover",
            CROSSOVER_INTRO,
            [
                task_part(self.task),
                code_part(first),
                code_part(second, second=True),
                self._data(),
                self._rules("Keep what makes each solution work; drop what does not."),
            ],
        )


def debug_chain(node: SearchNode, journal: Journal) -> list[SearchNode]:
    """The buggy ancestors fixed in turn up to ``node`` (oldest first), for debug memory."""
    chain = [node]
    while journal.stage(chain[0]) == "debug":
        chain.insert(0, journal.parent_of(chain[0]))  # type: ignore[arg-type]
    return chain
