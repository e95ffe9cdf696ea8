"""AIDE's search policy on hand-built trees: every branch of the rule."""

from random import Random

import pytest

from sandmle.harness.search_tree import SearchNode
from sandmle.scaffolds.aide import aide_choice, resolve_settings
from sandmle.scaffolds.search import Journal


def node(id, parent=None, metric=None, bug=False, op=None) -> SearchNode:
    op = op or ("draft" if parent is None else "debug" if bug else "improve")
    return SearchNode(id=id, parent=parent, parents=[] if parent is None else [parent],
                      operator=op, step=id, metric=None if bug else metric, is_bug=bug)  # fmt: skip


def journal(*nodes: SearchNode, lower_is_better: bool = False) -> Journal:
    j = Journal(lower_is_better=lower_is_better)
    for n in nodes:
        j.add(n)
    return j


def choose(j: Journal, seed=0, num_drafts=2, debug_prob=0.5, max_debug_depth=3):
    return aide_choice(j, Random(seed), num_drafts=num_drafts, debug_prob=debug_prob,
                       max_debug_depth=max_debug_depth)  # fmt: skip


def test_drafts_until_num_drafts_roots_exist():
    j = journal(node(0, metric=0.5), node(1, parent=0, metric=0.6))
    assert choose(j, debug_prob=1.0) == ("draft", None)  # one root, two wanted


def test_debugs_a_buggy_leaf_when_the_coin_says_so():
    j = journal(node(0, metric=0.5), node(1, bug=True))
    operator, parent = choose(j, debug_prob=1.0)
    assert (operator, parent.id) == ("debug", 1)


def test_improves_the_best_node_when_the_coin_says_no():
    j = journal(node(0, metric=0.5), node(1, bug=True), node(2, parent=0, metric=0.7))
    operator, parent = choose(j, debug_prob=0.0)
    assert (operator, parent.id) == ("improve", 2)


def test_best_node_follows_the_metric_direction():
    j = journal(node(0, metric=0.5), node(1, metric=0.2), lower_is_better=True)
    assert choose(j, debug_prob=0.0)[1].id == 1


def test_drafts_when_no_good_node_and_nothing_to_debug():
    j = journal(node(0, bug=True), node(1, bug=True))
    assert choose(j, debug_prob=0.0) == ("draft", None)


def test_skips_buggy_nodes_that_are_not_leaves():
    # node 1 is buggy but already has a debug child (node 2, which is good)
    j = journal(node(0, metric=0.5), node(1, bug=True), node(2, parent=1, metric=0.4))
    operator, parent = choose(j, debug_prob=1.0)
    assert (operator, parent.id) == ("improve", 0)


def test_skips_chains_deeper_than_max_debug_depth():
    chain = [node(0, metric=0.5), node(1, bug=True)]
    chain += [node(i, parent=i - 1, bug=True) for i in range(2, 5)]  # depths 1, 2, 3
    j = journal(*chain)
    assert j.debug_depth(j.get(4)) == 3
    assert choose(j, debug_prob=1.0, max_debug_depth=3)[1].id == 4
    operator, parent = choose(j, debug_prob=1.0, max_debug_depth=2)
    assert (operator, parent.id) == ("improve", 0)


def test_draft_when_coin_says_debug_but_nothing_is_debuggable_and_nothing_good():
    j = journal(node(0, bug=True), node(1, parent=0, bug=True), node(2, parent=1, bug=True))
    # the only buggy leaf (2) is at depth 2 > max 1; no good node: draft
    assert choose(j, debug_prob=1.0, num_drafts=1, max_debug_depth=1) == ("draft", None)


def test_choices_repeat_under_a_seed():
    j = journal(node(0, metric=0.5), node(1, bug=True), node(2, bug=True))
    runs = [[choose(j, seed=s)[0] for s in range(20)] for _ in range(2)]
    assert runs[0] == runs[1]
    assert {"debug", "improve"} == set(runs[0])


def test_mle_bench_preset_and_overrides():
    s = resolve_settings("mle-bench", steps=3)
    assert (s.steps, s.debug_prob, s.max_debug_depth, s.exec_timeout) == (3, 1.0, 20, None)
    assert resolve_settings("mle-bench", exec_timeout=60).exec_timeout == 60
    assert resolve_settings().steps == 20 and resolve_settings().num_drafts == 5
    with pytest.raises(ValueError, match="unknown AIDE preset"):
        resolve_settings("nope")  # type: ignore[arg-type]


def test_aira_counts_its_blank_root_in_the_debug_depth():
    # aira-dojo's root is buggy (greedy.py:127-134 @ c795d86), so a draft is at debug depth 1
    # (journal.py:131-144) and a chain of two debugs under a buggy draft is at depth 3
    chain = (node(0, bug=True), node(1, parent=0, bug=True), node(2, parent=1, bug=True))
    aide, aira = journal(*chain), journal(*chain)
    aira.blank_root = True
    assert [aide.debug_depth(n) for n in aide.nodes] == [0, 1, 2]
    assert [aira.debug_depth(n) for n in aira.nodes] == [1, 2, 3]
    # with max depth 2 aideml still debugs node 2 (3 debugs per draft), aira-dojo does not (2)
    assert choose(aide, debug_prob=1.0, num_drafts=1, max_debug_depth=2)[1].id == 2
    assert choose(aira, debug_prob=1.0, num_drafts=1, max_debug_depth=2) == ("draft", None)
    improved = journal(
        node(0, metric=0.5), node(1, parent=0, bug=True), node(2, parent=1, bug=True)
    )
    improved.blank_root = True
    # a draft is always at depth 1; a good parent ends the count
    assert [improved.debug_depth(n) for n in improved.nodes] == [1, 0, 1]
    assert (improved.root_steps, aide.root_steps) == (1, 0)
