"""AIRA-dojo's MCTS policy (facebookresearch/aira-dojo ``src/dojo/solvers/mcts/mcts.py``).

The rules, restated: a blank root (``ROOT``) has the drafts as children. Each step walks from
the root to a leaf, at each level taking the child with the highest UCT value
``q_norm + uct_c * sqrt(ln N_parent / n_child)``, where ``q`` is the child's mean
back-propagated metric (negated when lower is better) min-max normalised over every value seen
so far (0.5 while they are all equal), and a child never visited scores -1e8. The leaf is
expanded ``num_children`` times (draft under the root, improve elsewhere). A good child
back-propagates its metric along the path; a buggy one enters a debug chain
(``Search.debug_chain``) that stops at the first fix, at ``max_debug_depth`` tries, or once a
try's debug depth (the blank root counted, so a draft's chain gets one try fewer) reaches
``max_debug_depth``; the fix back-propagates its metric through the buggy node and the chain.
Unfixed chains are never visited again, unless every sibling is unvisited: then the first one
is walked into, and an improve child of its buggy leaf is already at the depth limit.

aira-dojo min-max normalises the signed ``q`` by the range of the raw metrics; here both use
the signed value. For lower-is-better metrics this adds the same offset to every sibling's
UCT value, so the choice is the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sandmle.scaffolds.aira_presets import MctsSettings
from sandmle.scaffolds.search import Search
from sandmle.scaffolds.search.journal import Journal

ROOT = -1
"""Id of the blank root node (not a solution, so not in the journal)."""
UNVISITED = -1e8


@dataclass
class MctsStats:
    """Visit counts and summed values per node, and the range of values seen."""

    lower_is_better: bool
    uct_c: float = 0.25
    visits: dict[int, int] = field(default_factory=dict)
    value: dict[int, float] = field(default_factory=dict)
    low: float = math.inf
    high: float = -math.inf
    touched: set[int] = field(default_factory=set)
    """Nodes whose counts changed since the last ``annotate``."""
    annotated: int = 0
    """Journal nodes ``annotate`` has seen."""

    def signed(self, metric: float) -> float:
        return -metric if self.lower_is_better else metric

    def q(self, node_id: int) -> float:
        """Mean signed value of a node; ``UNVISITED`` before its first visit."""
        n = self.visits.get(node_id, 0)
        return UNVISITED if n == 0 else self.value[node_id] / n

    def normalised(self, q: float) -> float:
        if self.high <= self.low:
            return 0.5
        return (q - self.low) / (self.high - self.low)

    def uct(self, child: int, parent: int) -> float:
        n = self.visits.get(child, 0)
        if n == 0:
            return UNVISITED
        explore = math.sqrt(math.log(max(self.visits.get(parent, 1), 1)) / n)
        return self.normalised(self.q(child)) + self.uct_c * explore

    def backpropagate(self, path: list[int], metric: float) -> None:
        """Add one visit and the metric's signed value to every node on ``path``."""
        signed = self.signed(metric)
        self.touched.update(path)
        for node_id in path:
            self.visits[node_id] = self.visits.get(node_id, 0) + 1
            self.value[node_id] = self.value.get(node_id, 0.0) + signed
        self.low, self.high = min(self.low, signed), max(self.high, signed)


def tree_children(journal: Journal, node_id: int) -> list[int]:
    """Children in the MCTS tree: the drafts under ``ROOT``, else the journal's children."""
    if node_id == ROOT:
        return [n.id for n in journal.drafts]
    return [c.id for c in journal.children(journal.get(node_id))]


def select_path(journal: Journal, stats: MctsStats) -> list[int]:
    """Walk from the root to a leaf by UCT (the first of equal children wins)."""
    path = [ROOT]
    while children := tree_children(journal, path[-1]):
        path.append(max(children, key=lambda c: stats.uct(c, path[-1])))
    return path


def annotate(journal: Journal, stats: MctsStats) -> None:
    """Copy the visit counts and values into each node's ``extra`` for the log."""
    changed = [journal.get(i) for i in stats.touched if i != ROOT]
    for node in [*journal.nodes[stats.annotated :], *changed]:  # the rest did not change
        node.extra["visits"] = stats.visits.get(node.id, 0)
        node.extra["value"] = stats.value.get(node.id, 0.0)
    stats.touched.clear()
    stats.annotated = len(journal)


async def mcts_step(
    search: Search,
    stats: MctsStats,
    num_children: int,
    max_debug_depth: int,
    max_debug_time: float | None = None,
) -> bool:
    """Select a leaf, expand it, and back-propagate the results; False when nothing was made.

    As aira-dojo's ``_expand_leaf_and_backprop`` (``mcts.py:472-520`` @ c795d86): the leaf
    gets ``min(num_children, steps left)`` children, planned up front, so a debug chain that
    spends the steps does not cancel the next child (the last node may overrun the limit by
    one, as there); a buggy child's chain stops at the steps left and at debug depth
    ``max_debug_depth`` counted from the blank root (``mcts.py:522-554``).
    """
    path = select_path(search.journal, stats)
    leaf = path[-1]
    planned = min(num_children, search.steps_left)
    for _ in range(planned):
        if search.out_of_time:
            break
        if leaf == ROOT:
            child = await search.expand("draft", [])
        else:
            child = await search.expand("improve", [search.journal.get(leaf)])
        if not child.is_bug and child.metric is not None:
            stats.backpropagate(path + [child.id], child.metric)
        else:
            chain, fixed = await search.debug_chain(
                child, max_debug_depth, max_debug_time, depth_check=True
            )
            if fixed is not None and fixed.metric is not None:
                stats.backpropagate(path + chain, fixed.metric)
        if search.steps_left < 0:
            break
    annotate(search.journal, stats)
    search.record()
    return planned > 0


async def mcts_search(search: Search, settings: MctsSettings) -> None:
    """Grow the tree by MCTS steps until the steps or the time are spent.

    aira-dojo loops while ``current_step <= step_limit`` (``mcts.py:221``); once the steps
    left reach 0 without an overrun its steps make nothing until the time limit ends the
    run. Here the search ends there.
    """
    stats = MctsStats(lower_is_better=search.journal.direction(), uct_c=settings.uct_c)
    while not search.exhausted:
        made = await mcts_step(
            search, stats, settings.num_children, settings.max_debug_depth, settings.max_debug_time
        )
        if not made:
            break
    await search.finish()
