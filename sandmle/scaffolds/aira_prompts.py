"""AIRA-dojo's operator prompts (draft, improve, debug, crossover), in our words.

After facebookresearch/aira-dojo @ c795d86 ``src/dojo/configs/solver/operators/mlebench/
aira_operators/{draft,improve,debug,crossover}.yaml`` and ``src/dojo/core/solvers/operators/
memory.py``: one idea per reply, different from those in memory; 5-fold cross-validation;
memory is every good node (``simple_memory``: ``include_buggy_nodes: false``) for draft and
improve, none for crossover, and for debug the chain of failed attempts from the buggy parent
back to the last good ancestor, plans included (``ancestral_memory``). Improve shows the
parent's output; parents show their code, not their plans; crossover the two parents' code
only, as aira-dojo's template (no outputs, no data overview). aira-dojo's library notes
(``torch.optim.AdamW``, lightgbm's early-stopping callback, ``timm`` names) stand where its
templates have them. With ``use_complexity`` (off in the released MLE-bench configs) a tier grows with the drafts made or the parent's children (under 2: simple, under 4: normal).
The analyze step is AIDE's (AIRA reuses it), shared in ``search.prompts``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from sandmle.harness.search_tree import Operator, SearchNode
from sandmle.scaffolds.search.journal import Journal
from sandmle.scaffolds.search.prompts import (
    Environment,
    PromptParts,
    buggy_part,
    crossover_parts,
    environment_part,
    improve_part,
    memory_of,
    output_part,
    sections,
    task_part,
)

Complexity = Literal["simple", "normal", "complex"]
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
    "from the improvements already tried, and implement it in the full script."
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
LIBRARY_TIPS = (
    "For AdamW use `torch.optim.AdamW`; the one in `transformers` is deprecated.",
    "In `lightgbm.train()` pass `callbacks=[lightgbm.early_stopping(stopping_rounds=...)]` "
    "instead of the deprecated `early_stopping_rounds`.",
    "Name `timm` models without a dataset prefix or suffix (such as `cifar`): those names "
    "are deprecated.",
)
"""aira-dojo's library notes in its draft, improve and crossover templates
(``aira_operators/draft.yaml:37-39``, ``improve.yaml:44-46``, ``crossover.yaml:56-58`` @ c795d86)."""
DEBUG_TIPS = (
    "If a `timm` model cannot be found, `print(timm.list_models())` shows the names.",
    LIBRARY_TIPS[2],
)
"""The debug template's two ``timm`` notes (``aira_operators/debug.yaml:63-64``)."""


def complexity_tier(count: int) -> Complexity:
    """AIRA's tier from how many solutions already exist at that point of the tree."""
    if count < 2:
        return "simple"
    return "normal" if count < 4 else "complex"


@dataclass
class AiraPrompter:
    """Writes AIRA's prompts for one sample."""

    parts: PromptParts
    use_complexity: bool = False

    def __call__(
        self, operator: Operator, parents: list[SearchNode], journal: Journal, env: Environment
    ) -> str:
        task, data, environment = (
            task_part(self.parts.task),
            self.parts.data(),
            environment_part(env),
        )
        good = memory_of(journal.good_nodes, env)
        if operator == "draft":
            tier = self._tier(len(journal.drafts))
            rules = self._rules(
                env, tier, "Consider a DIFFERENT aspect than the ideas in memory.", *LIBRARY_TIPS
            )
            return sections(DRAFT_INTRO, [task, good, data, environment, rules])
        parent = parents[0]
        if operator == "improve":
            tier = self._tier(len(journal.children(parent)))
            rules = self._rules(env, tier, "Make one focused, testable change.", *LIBRARY_TIPS)
            body = [task, improve_part(parent), output_part(parent), good, data]
            return sections(IMPROVE_INTRO, [*body, environment, rules])
        if operator == "debug":
            chain = memory_of(journal.failed_chain(parent), env)
            rules = self._rules(
                env, "Do not repeat a fix from the memory that did not work.", *DEBUG_TIPS
            )
            body = [task, chain, buggy_part(parent), output_part(parent), data]
            return sections(DEBUG_INTRO, [*body, environment, rules])
        rules = self._rules(
            env, "Keep what makes each solution work; drop what does not.", *LIBRARY_TIPS
        )
        body = [task, *crossover_parts(parent, parents[1])]
        return sections(CROSSOVER_INTRO, [*body, environment, rules])

    def _tier(self, count: int) -> str:
        return TIER_GUIDES[complexity_tier(count)] if self.use_complexity else ""

    def _rules(self, env: Environment, *guides: str) -> tuple[str, str]:
        return self.parts.instructions(env, *guides, CV_GUIDE, *STYLE_GUIDES)
