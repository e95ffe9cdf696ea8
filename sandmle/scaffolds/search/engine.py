"""One step of any tree search: prompt, parse, run, analyze, record.

Policies (AIDE's greedy rule, AIRA's MCTS and evolution) decide which operator to apply to
which parents; ``Search.expand`` does the rest and never raises on the model's or the tools'
mistakes: every failure (a failed or cut-off call, no code, a crashing or endless script, an
unusable review, a metric the run never printed) gives a buggy node that says why in
``extra["failure"]``, and the search goes on while steps and time remain.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace
from typing import Protocol

from inspect_ai.log import transcript
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import TaskState
from inspect_ai.util import LimitExceededError, sample_limits, span, store

from sandmle.errors import SandmleError
from sandmle.harness.competition import Competition, metric_direction
from sandmle.harness.samples import competition_for
from sandmle.harness.sandbox.limits import DEFAULT_COMMAND_TIMEOUT_S
from sandmle.harness.scorer import grade_sandbox_submission
from sandmle.harness.search_tree import STORE_KEY, Operator, SearchNode
from sandmle.harness.solvers import BackendError
from sandmle.scaffolds.search.journal import Journal
from sandmle.scaffolds.search.model_io import DEFAULT_RETRIES, CallRecord, propose, review_run
from sandmle.scaffolds.search.prompts import Environment, Paths, PromptParts, analyze_prompt
from sandmle.scaffolds.search.responses import Review, printed_metric
from sandmle.scaffolds.search.runner import Probe, RunResult, probe, publish, run_script

logger = logging.getLogger(__name__)

RESERVE_S = 20
"""Seconds kept back from the sample's time limit for the last analysis and the copy."""
MIN_RUN_S = 5
"""No step starts when less than this is left for its run."""
DEFAULT_MEMORY_TOKENS = 16_000


class Prompter(Protocol):
    """Writes the prompt for an operator applied to some parents."""

    def __call__(
        self, operator: Operator, parents: list[SearchNode], journal: Journal, env: Environment
    ) -> str: ...


class PrompterFactory(Protocol):
    """Makes a sample's prompter from the parts every prompt shares."""

    def __call__(self, parts: PromptParts) -> Prompter: ...


@dataclass
class Budget:
    """How much search a sample gets."""

    steps: int
    """Nodes to create (each is one operator call, one run and one analysis)."""
    time_limit: float | None = None
    """Seconds of wall time for the whole search (None: only the sample's own limit)."""
    exec_timeout: int = DEFAULT_COMMAND_TIMEOUT_S
    """Seconds per script run (the scaffolds pass the task's, ``tools.command_timeout``)."""
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
class ModelSettings:
    """How the search talks to the model."""

    code: GenerateConfig = field(default_factory=GenerateConfig)
    review: GenerateConfig = field(default_factory=GenerateConfig)
    per_operator: dict[str, GenerateConfig] = field(default_factory=dict)
    """Operators sampled differently from ``code`` (AIRA's evolutionary crossover)."""
    retries: int = DEFAULT_RETRIES
    """Tries per call before the node is recorded as failed."""
    memory_tokens: int = DEFAULT_MEMORY_TOKENS
    """Budget of a prompt's memory section; halved after each reply cut for length."""
    submit_fallback: bool = False
    """With no good node, hand in the latest usable submission (the references hand in none)."""
    require_plan: bool = False
    """Retry a reply with code but no plan, as aideml does (``aide/agent.py:167-171`` @
    9643875); aira-dojo takes it (``requires_plan`` False, ``operators/core.py:13`` @ c795d86)."""


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
    model: ModelSettings = field(default_factory=ModelSettings)
    probe: Probe = field(default_factory=Probe)
    require_submission: bool = True
    """A run without submission.csv is buggy (aira-dojo's MLE-bench task, MLE-bench's AIDE
    fork); aideml itself judges by the review, the exit status and the metric only."""

    @property
    def steps_used(self) -> int:
        return len(self.journal)

    @property
    def steps_left(self) -> int:
        """Steps not yet used; aira-dojo's blank root takes one (negative after an overrun)."""
        return self.budget.steps - self.journal.root_steps - self.steps_used

    @property
    def out_of_time(self) -> bool:
        """Too little time left for another run."""
        left = self.budget.remaining_s()
        return left is not None and left < MIN_RUN_S

    @property
    def exhausted(self) -> bool:
        """No steps left, or too little time left for another run."""
        return self.steps_left <= 0 or self.out_of_time

    def environment(self, memory_tokens: int) -> Environment:
        return Environment(
            steps_left=self.steps_left,
            steps_total=self.budget.steps - self.journal.root_steps,
            time_left_s=self.budget.remaining_s(),
            hardware=self.probe.hardware,
            packages=self.probe.packages,
            memory_tokens=memory_tokens,
            run_timeout_s=self.budget.run_timeout(),
        )

    async def expand(self, operator: Operator, parents: list[SearchNode]) -> SearchNode:
        """Apply ``operator`` to ``parents`` and add the resulting node to the journal."""
        node = SearchNode(
            id=self.journal.next_id(),
            parent=parents[0].id if parents else None,
            parents=[p.id for p in parents],
            operator=operator,
            step=self.steps_used,
            created_s=round(self.budget.elapsed_s(), 3),
        )
        async with span(f"node {node.id}: {operator}", type="search_node"):
            try:
                await self._develop(node, parents)
            except LimitExceededError:
                raise
            except Exception as exc:  # noqa: BLE001 - a sandbox or grader failure ends the node only
                logger.warning("node %s failed: %s", node.id, exc)
                fail(node, "tool_error", f"The harness failed: {type(exc).__name__}: {exc}")
            self.journal.add(node)
            await publish(self.submission_node())
            self.record(node)
        return node

    async def _develop(self, node: SearchNode, parents: list[SearchNode]) -> None:
        def build(memory_tokens: int) -> str:
            env = self.environment(memory_tokens)
            return self.prompter(node.operator, parents, self.journal, env)

        config = self.model.per_operator.get(node.operator, self.model.code)
        result = await propose(
            build, self.model.memory_tokens, config, self.model.retries, self.model.require_plan
        )
        self.model.memory_tokens = result.memory_tokens
        node.plan, node.code = result.proposal.plan, result.proposal.code
        keep_calls(node, result.calls)
        if not node.code:
            why = result.proposal.problem or result.calls[-1].error
            fail(
                node,
                result.failure or "no_code",
                f"No usable code after {len(result.calls)} tries: {why}; not run.",
            )
            return
        await self._run_and_review(node)

    async def _run_and_review(self, node: SearchNode) -> None:
        run = await run_script(node.id, node.code, self.budget.run_timeout())
        node.output, node.exec_time_s = run.output, run.exec_time_s
        node.extra["exit_code"] = run.exit_code
        failure, problem = await self._check_run(node.id, run)
        if problem:
            node.output += f"\n{problem}"
        node.extra["usable_submission"] = not problem
        review, why, calls = await review_run(
            analyze_prompt(self.task, node), self.model.review, self.model.retries
        )
        keep_calls(node, calls)
        if review is None:
            fail(node, failure or "review_failed", problem or f"No usable review: {why}.")
            return
        self._judge(node, review, failure, problem)

    def _judge(self, node: SearchNode, review: Review, failure: str, problem: str) -> None:
        node.summary, node.lower_is_better = review.summary, review.lower_is_better
        if review.filled:
            node.extra["review_filled"] = list(review.filled)
        node.extra["review_source"] = review.source
        metric, refused = printed_metric(node.output, review.metric)
        if failure:
            fail(node, failure, problem, keep_summary=True)
        elif review.is_bug:
            fail(node, "judged_buggy", "The review judged the run buggy.", keep_summary=True)
        elif metric is None:
            kind = "metric_unverified" if refused else "no_metric"
            fail(node, kind, refused or "The run reported no validation metric.", True)
        else:
            node.is_bug, node.metric = False, metric
            node.extra["failure"] = None

    async def _check_run(self, node_id: int, run: RunResult) -> tuple[str, str]:
        """The failure kind and why the run cannot count, or ("", "") (AIDE/AIRA's checks)."""
        if run.timed_out:
            return "run_timeout", "The run was killed for time."
        if run.exit_code != 0:
            return "run_error", f"The script exited with status {run.exit_code}."
        if not run.has_submission and (self.require_submission or self.competition):
            return "no_submission", "The script wrote no submission.csv."
        if self.competition is None:
            return "", ""
        await publish(node_id)
        report = await grade_sandbox_submission(self.competition)
        if report.valid_submission:
            return "", ""
        why = f"submission.csv is not a valid submission: {report.invalid_reason}"
        return "invalid_submission", why

    async def debug_chain(
        self,
        buggy: SearchNode,
        max_debug_depth: int,
        max_debug_time: float | None = None,
        *,
        depth_check: bool = False,
        step_check: bool = True,
    ) -> tuple[list[int], SearchNode | None]:
        """Debug ``buggy`` until fixed, out of depth, run time or budget; the chain and the fix.

        As aira-dojo's ``debug_cycle``: at most ``max_debug_depth`` tries, and the run times of
        the chain (the buggy node's first) count against ``max_debug_time``. ``depth_check``
        adds MCTS's stop once a try's debug depth reaches ``max_debug_depth``
        (``src/dojo/solvers/mcts/mcts.py:546`` @ c795d86); ``step_check`` MCTS's cap at the
        steps left (``mcts.py:524``; evo's cycle has neither, ``evo/evo.py:741-783``). Every
        chain stops when too little time is left for a run.
        """
        chain, node = [buggy.id], buggy
        spent = buggy.exec_time_s or 0.0
        for _ in range(max_debug_depth):
            if self.out_of_time or (step_check and self.steps_left <= 0):
                break
            node = await self.expand("debug", [node])
            chain.append(node.id)
            if not node.is_bug and node.metric is not None:
                return chain, node
            if depth_check and self.journal.debug_depth(node) >= max_debug_depth:
                break
            spent += node.exec_time_s or 0.0
            if max_debug_time is not None and spent >= max_debug_time:
                break
        return chain, None

    def submission_node(self) -> int | None:
        """The node whose submission to hand in: the best; with the fallback, the latest usable."""
        best = self.journal.best_node()
        if best is not None:
            return best.id
        if not self.model.submit_fallback:
            return None
        usable = [n for n in self.journal.nodes if n.extra.get("usable_submission")]
        return usable[-1].id if usable else None

    def record(self, node: SearchNode | None = None) -> None:
        """Write the whole tree to the store and the new node to the transcript."""
        store().set(STORE_KEY, self.journal.dump())
        if node is not None:
            failure = node.extra.get("failure")
            transcript().info(
                {"scaffold": self.scaffold, "failure": failure, "node": node.model_dump()},
                source=f"{self.scaffold}/search",
            )

    async def finish(self) -> SearchNode | None:
        """Leave the chosen node's submission in place and log the final tree.

        A search whose every model call raised never met the agent: it ends as a sample error
        (``BackendError``), not as a scored tree of failed nodes.
        """
        calls = [c for node in self.journal.nodes for c in node.extra.get("calls", [])]
        if calls and all(c["stop_reason"] is None and c["error"] for c in calls):
            raise BackendError(
                f"every model call of the search failed ({len(calls)} calls; "
                f"last: {calls[-1]['error']})"
            )
        best = self.journal.best_node()
        await publish(self.submission_node())
        self.record()
        failures: dict[str, int] = {}
        for node in self.journal.nodes:
            kind = str(node.extra.get("failure") or "none")
            failures[kind] = failures.get(kind, 0) + 1
        transcript().info(
            {
                "scaffold": self.scaffold,
                "best_node": None if best is None else best.id,
                "best_metric": None if best is None else best.metric,
                "submitted_node": self.submission_node(),
                "nodes": len(self.journal),
                "failures": dict(failures),  # a copy typed as JSON (dict values are invariant)
            },
            source=f"{self.scaffold}/search",
        )
        return best


def fail(node: SearchNode, kind: str, why: str, keep_summary: bool = False) -> None:
    """Mark a node buggy, saying why (the summary keeps the review's words when asked)."""
    node.is_bug, node.metric = True, None
    node.extra["failure"], node.extra["error"] = kind, why
    node.summary = f"{why} {node.summary}".strip() if keep_summary else why


def keep_calls(node: SearchNode, calls: list[CallRecord]) -> None:
    """Record the calls of a node, with its last stop reason, tokens and prompt hash."""
    dumped = node.extra.setdefault("calls", [])
    dumped += [c.dump() for c in calls]
    code = [c for c in calls if c.purpose == "code"]
    if code:
        node.extra["stop_reason"] = code[-1].stop_reason
        node.extra["prompt_hash"] = code[-1].prompt_hash
    tokens = node.extra.setdefault("tokens", {"input": 0, "output": 0})
    tokens["input"] += sum(c.input_tokens or 0 for c in calls)
    tokens["output"] += sum(c.output_tokens or 0 for c in calls)


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
    model: ModelSettings,
    validate: bool = True,
    blank_root: bool = False,
    require_submission: bool = True,
) -> Search:
    """A fresh search for this sample, in the task's metric direction when it is known.

    ``blank_root``: count aira-dojo's blank root node (see ``Journal``).
    """
    competition = sample_competition(state)
    direction = None if competition is None else metric_direction(competition.config)
    paths = Paths.from_task(state.input_text)
    found = await probe(paths.data_dir)
    parts = PromptParts(state.input_text, found.preview, budget.exec_timeout, paths)
    return Search(
        task=state.input_text,
        journal=Journal(lower_is_better=direction, blank_root=blank_root),
        prompter=prompter(parts),
        budget=budget,
        scaffold=scaffold,
        competition=competition if validate else None,
        model=replace(model),  # a sample's own copy: its memory budget shrinks on its own
        probe=found,
        require_submission=require_submission,
    )
