"""The search tree as data: a ``Journal`` of ``SearchNode``s with AIDE's derived views.

Follows aideml's ``aide/journal.py`` rules: a node's stage is derived from its parent
(no parent: draft; buggy parent: debug; else improve), its debug depth counts the
consecutive debug steps above it, and the best node is the best non-buggy one by metric,
compared in the task's direction.

aira-dojo hangs its drafts under a blank root node that is buggy (``Greedy.create_root_node``,
``src/dojo/solvers/greedy/greedy.py:127-142`` @ c795d86; the same in MCTS and evo) and that
takes step 0. A journal made with ``blank_root=True`` stands for that root without storing
it: the root counts as a buggy parent of every draft in ``debug_depth`` (aira's
``Node.debug_depth``, ``core/solvers/utils/journal.py:131-144``, so a draft has depth 1),
and as one step used (``root_steps``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from sandmle.harness.search_tree import SearchNode

Stage = Literal["draft", "improve", "debug"]


class Journal:
    """All nodes of one search, in creation order, with parent/child lookups."""

    def __init__(self, lower_is_better: bool | None = None, blank_root: bool = False) -> None:
        self.nodes: list[SearchNode] = []
        self.lower_is_better = lower_is_better
        """Direction of the metric; None means "as the first good node's review says"."""
        self.blank_root = blank_root
        """Count aira-dojo's blank buggy root above the drafts (see the module doc)."""
        self._by_id: dict[int, SearchNode] = {}
        self._children: dict[int, list[int]] = {}
        self._drafts: list[SearchNode] = []
        self._good: list[SearchNode] = []
        self._best: tuple[bool, SearchNode | None] | None = None
        """The best good node for a direction, kept as nodes arrive (a 10000-node search asks
        for it after every node)."""

    def __len__(self) -> int:
        return len(self.nodes)

    def add(self, node: SearchNode) -> SearchNode:
        if node.id in self._by_id:
            raise ValueError(f"node id {node.id} is already in the journal")
        self.nodes.append(node)
        self._by_id[node.id] = node
        if node.parent is None:
            self._drafts.append(node)
        if _good(node):
            self._good.append(node)
            if self._best is not None:
                lower, best = self._best
                if best is None or self._beats(node, best, lower):
                    self._best = (lower, node)
        for parent in node.parents or ([node.parent] if node.parent is not None else []):
            self._children.setdefault(parent, []).append(node.id)
        return node

    def next_id(self) -> int:
        return len(self.nodes)

    def get(self, node_id: int) -> SearchNode:
        return self._by_id[node_id]

    def children(self, node: SearchNode) -> list[SearchNode]:
        return [self._by_id[i] for i in self._children.get(node.id, [])]

    def is_leaf(self, node: SearchNode) -> bool:
        return not self._children.get(node.id)

    def parent_of(self, node: SearchNode) -> SearchNode | None:
        return None if node.parent is None else self._by_id[node.parent]

    def stage(self, node: SearchNode) -> Stage:
        """AIDE's stage name, derived from the parent rather than stored."""
        parent = self.parent_of(node)
        if parent is None:
            return "draft"
        return "debug" if parent.is_bug else "improve"

    @property
    def root_steps(self) -> int:
        """Steps the blank root takes (aira-dojo's root is step 0 of ``step_limit``)."""
        return 1 if self.blank_root else 0

    def debug_depth(self, node: SearchNode) -> int:
        """Number of consecutive buggy parents above ``node`` (0 unless it is a debug).

        With ``blank_root`` the buggy root above the drafts counts too, as in aira-dojo.
        """
        depth = 0
        parent = self.parent_of(node)
        while parent is not None and parent.is_bug:  # stage(node) == "debug"
            depth += 1
            parent = self.parent_of(parent)
        if parent is None and self.blank_root:  # the chain reaches the (buggy) root
            depth += 1
        return depth

    def failed_chain(self, node: SearchNode) -> list[SearchNode]:
        """The failed attempts ending at ``node``, back to its last good ancestor, oldest first.

        aira-dojo's ``ancestral_memory`` for the debug operator (plans of every failed try).
        """
        chain: list[SearchNode] = []
        current: SearchNode | None = node
        while current is not None and current.is_bug:
            chain.insert(0, current)
            current = self.parent_of(current)
        return chain

    @property
    def drafts(self) -> list[SearchNode]:
        return list(self._drafts)

    @property
    def buggy_nodes(self) -> list[SearchNode]:
        return [n for n in self.nodes if n.is_bug]

    @property
    def good_nodes(self) -> list[SearchNode]:
        return list(self._good)

    def direction(self) -> bool:
        """True when lower metrics are better (the task's, else the first good review's)."""
        if self.lower_is_better is not None:
            return self.lower_is_better
        for node in self.good_nodes:
            if node.lower_is_better is not None:
                return node.lower_is_better
        return False

    def better(self, a: float, b: float) -> bool:
        """Whether metric ``a`` beats ``b`` in the journal's direction."""
        return a < b if self.direction() else a > b

    def best_node(self, among: Iterable[SearchNode] | None = None) -> SearchNode | None:
        """The best good node (first made wins ties), or None when none is good."""
        if among is None:
            lower = self.direction()
            if self._best is None or self._best[0] != lower:
                self._best = (lower, self._best_of(self._good, lower))
            return self._best[1]
        return self._best_of([n for n in among if _good(n)], self.direction())

    def _best_of(self, pool: list[SearchNode], lower: bool) -> SearchNode | None:
        best: SearchNode | None = None
        for node in pool:
            if best is None or self._beats(node, best, lower):
                best = node
        return best

    @staticmethod
    def _beats(node: SearchNode, best: SearchNode, lower: bool) -> bool:
        assert node.metric is not None and best.metric is not None  # good nodes have one
        return node.metric < best.metric if lower else node.metric > best.metric

    def dump(self) -> list[dict]:
        """The whole tree in the documented store schema (creation order)."""
        return [n.model_dump() for n in self.nodes]


def _good(node: SearchNode) -> bool:
    return not node.is_bug and node.metric is not None
