"""One step of any tree search: prompt, parse, run, analyze, record.

Policies (AIDE's greedy rule, AIRA's MCTS and evolution) decide which operator to apply
to which parents; ``Search.expand`` does the rest and never raises on the model's mistakes:
no code, a crashing or endless script, or a bad review all give a buggy node.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Protocol

from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model
from inspect_ai.solver import TaskState
from inspect_ai.tool import ToolFunction
from inspect_ai.util import LimitExceededError, sample_limits, span, store

from sandmle.errors import SandmleError
from sandmle.harness.competition import Competition, metric_direction
from sandmle.harness.samples import competition_for
from sandmle.harness.scorer import grade_sandbox_submission
from sandmle.harness.search_tree import STORE_KEY, Operator, SearchNode
from sandmle.scaffolds.search.journal import Journal
from sandmle.scaffolds.search.prompts import analyze_prompt
from sandmle.scaffolds.search.responses import Review, parse_proposal, parse_review, review_tool
from sandmle.scaffolds.search.runner import RunResult, data_overview, publish, run_script

logger = logging.getLogger(__name__)

RESERVE_S = 20
"""Seconds kept back from the sample's time limit for the last analysis and the copy."""
MIN_RUN_S = 5
"""No step starts when less than this is left for its run."""


class PrompterFactory(Protocol):
    """Makes a sample's prompter from its task text and data overview."""

    def __call__(self, task: str, data_overview: str) -> Prompter: ...


class Prompter(Protocol):
    """Writes the prompt for an operator applied to some parents."""

    def __call__(self, operator: Operator, parents: list[SearchNode], journal: Journal) -> str: ...


@dataclass
class Budget:
    """How much search a sample gets."""

    steps: int
    """Nodes to create (each is one operator call, one run and one analysis)."""
    time_limit: float | None = None
    """Seconds of wall time for the whole search (None: only the sample's own limit)."""
    exec_timeout: int = 3600
    """Seconds per script run."""
    started: float = field(default_factory=time.monotonic)

    def remaining_s(self) -> float | None:
        left = [] if self.time_limit is None else [self.time_limit - self.elapsed_s()]
        try:
            limits = sample_limits()
            left += [r for r in (limits.time.remaining, limits.working.remaining) if r is not None]
        except RuntimeError:  # not inside a sample (unit use)
            pass
        return min(left) - RESERVE_S if left else None

    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def run_timeout(self) -> int:
        left = self.remaining_s()
        return self.exec_timeout if left is None else max(0, min(self.exec_timeout, int(left)))


@dataclass
class Search:
    """The state of one sample's search and the step that grows it."""

    task: str
    journal: Journal
    prompter: Prompter
    budget: Budget
    scaffold: str
    competition: Competition | None = None
    """When given, each submission's format is checked (never its score)."""
    code_config: GenerateConfig = field(default_factory=GenerateConfig)
    review_config: GenerateConfig = field(default_factory=GenerateConfig)

    @property
    def steps_used(self) -> int:
        return len(self.journal)

    @property
    def exhausted(self) -> bool:
        """No steps left, or too little time left for another run."""
        left = self.budget.remaining_s()
        return self.steps_used >= self.budget.steps or (left is not None and left < MIN_RUN_S)

    async def expand(self, operator: Operator, parents: list[SearchNode]) -> SearchNode:
        """Apply ``operator`` to ``parents`` and add the resulting node to the journal."""
        node_id = self.journal.next_id()
        async with span(f"node {node_id}: {operator}", type="search_node"):
            prompt = self.prompter(operator, parents, self.journal)
            reply = await get_model().generate(
                [ChatMessageUser(content=prompt)], config=self.code_config
            )
            proposal = parse_proposal(reply.completion)
            node = SearchNode(
                id=node_id,
                parent=parents[0].id if parents else None,
                parents=[p.id for p in parents],
                operator=operator,
                step=self.steps_used,
                plan=proposal.plan,
                code=proposal.code,
                created_s=round(self.budget.elapsed_s(), 3),
            )
            if not proposal.code:
                node.is_bug, node.summary = True, "The reply had no python code block; not run."
            else:
                await self._run_and_review(node)
            self.journal.add(node)
            await publish(self.submission_node())
            self.record(node)
        return node

    async def _run_and_review(self, node: SearchNode) -> None:
        run = await run_script(node.id, node.code, self.budget.run_timeout())
        node.output, node.exec_time_s = run.output, run.exec_time_s
        problem = await self._check_run(node.id, run)
        if problem:
            node.output += f"\n{problem}"
        node.extra["usable_submission"] = not problem
        review, why = await self._review(node)
        node.extra["exit_code"] = run.exit_code
        if review is None:
            node.is_bug, node.summary = True, f"No usable review: {why}."
            return
        node.summary, node.lower_is_better = review.summary, review.lower_is_better
        node.is_bug = review.is_bug or review.metric is None or bool(problem)
        node.metric = None if node.is_bug else review.metric

    async def _check_run(self, node_id: int, run: RunResult) -> str:
        """Why the run cannot count as a solution, or "" (AIDE/AIRA's validity checks)."""
        if run.timed_out:
            return "The run was killed for time."
        if run.exit_code != 0:
            return f"The script exited with status {run.exit_code}."
        if not run.has_submission:
            return "The script wrote no submission.csv."
        if self.competition is None:
            return ""
        await publish(node_id)
        report = await grade_sandbox_submission(self.competition)
        if report.valid_submission:
            return ""
        return f"submission.csv is not a valid submission: {report.invalid_reason}"

    async def _review(self, node: SearchNode) -> tuple[Review | None, str]:
        prompt = analyze_prompt(self.task, node)
        try:
            reply = await get_model().generate(
                [ChatMessageUser(content=prompt)],
                tools=[review_tool()],
                tool_choice=ToolFunction(name=review_tool().name),
                config=self.review_config,
            )
        except LimitExceededError:
            raise
        except Exception as exc:  # noqa: BLE001 - e.g. a provider rejecting forced tool use
            logger.warning("analyze call failed: %s", exc)
            return None, f"the review call failed ({type(exc).__name__})"
        return parse_review(reply)

    def submission_node(self) -> int | None:
        """The node whose submission to hand in: the best, else the latest usable one."""
        best = self.journal.best_node()
        if best is not None:
            return best.id
        usable = [n for n in self.journal.nodes if n.extra.get("usable_submission")]
        return usable[-1].id if usable else None

    def record(self, node: SearchNode | None = None) -> None:
        """Write the whole tree to the store and the new node to the transcript."""
        store().set(STORE_KEY, self.journal.dump())
        if node is not None:
            transcript().info(
                {"scaffold": self.scaffold, "node": node.model_dump()},
                source=f"{self.scaffold}/search",
            )

    async def finish(self) -> SearchNode | None:
        """Leave the best node's submission in place and log the final tree."""
        best = self.journal.best_node()
        await publish(self.submission_node())
        self.record()
        transcript().info(
            {
                "scaffold": self.scaffold,
                "best_node": None if best is None else best.id,
                "best_metric": None if best is None else best.metric,
                "nodes": len(self.journal),
            },
            source=f"{self.scaffold}/search",
        )
        return best


def sample_competition(state: TaskState) -> Competition | None:
    """The sample's competition, or None for a sample that is not a sandmle competition."""
    try:
        return competition_for(state.metadata)
    except SandmleError:
        return None


async def start_search(
    state: TaskState,
    *,
    scaffold: str,
    prompter: PrompterFactory,
    budget: Budget,
    validate: bool = True,
    code_config: GenerateConfig | None = None,
    review_config: GenerateConfig | None = None,
) -> Search:
    """A fresh search for this sample, in the task's metric direction when it is known."""
    competition = sample_competition(state)
    direction = None if competition is None else metric_direction(competition.config)
    overview = await data_overview()
    return Search(
        task=state.input_text,
        journal=Journal(lower_is_better=direction),
        prompter=prompter(state.input_text, overview),
        budget=budget,
        scaffold=scaffold,
        competition=competition if validate else None,
        code_config=code_config or GenerateConfig(),
        review_config=review_config or GenerateConfig(),
    )
