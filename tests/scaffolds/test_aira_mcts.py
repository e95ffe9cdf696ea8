"""AIRA's MCTS: UCT over normalised values, selection and back-propagation on hand-built trees."""

import math

import pytest

from sandmle.scaffolds.aira_mcts import ROOT, UNVISITED, MctsStats, select_path
from tests.scaffolds.test_aide import journal, node


def test_backpropagation_adds_a_visit_and_the_value_along_the_path():
    stats = MctsStats(lower_is_better=False)
    stats.backpropagate([ROOT, 0, 2], 0.8)
    stats.backpropagate([ROOT, 1], 0.4)
    assert stats.visits == {ROOT: 2, 0: 1, 2: 1, 1: 1}
    assert stats.value[ROOT] == pytest.approx(1.2)
    assert stats.q(ROOT) == pytest.approx(0.6)
    assert (stats.low, stats.high) == (0.4, 0.8)


def test_lower_is_better_values_are_negated():
    stats = MctsStats(lower_is_better=True)
    stats.backpropagate([ROOT, 0], 2.0)
    stats.backpropagate([ROOT, 1], 1.0)
    assert stats.q(1) > stats.q(0)
    assert stats.normalised(stats.q(1)) == 1.0 and stats.normalised(stats.q(0)) == 0.0


def test_uct_is_normalised_value_plus_exploration():
    stats = MctsStats(lower_is_better=False, uct_c=0.25)
    for path, metric in (([ROOT, 0], 0.5), ([ROOT, 0], 0.7), ([ROOT, 1], 0.9)):
        stats.backpropagate(path, metric)
    # q(0) = 0.6 -> (0.6 - 0.5) / 0.4 = 0.25; N_root = 3, n_0 = 2
    assert stats.uct(0, ROOT) == pytest.approx(0.25 + 0.25 * math.sqrt(math.log(3) / 2))
    assert stats.uct(1, ROOT) == pytest.approx(1.0 + 0.25 * math.sqrt(math.log(3) / 1))
    assert stats.uct(7, ROOT) == UNVISITED


def test_equal_values_normalise_to_one_half():
    stats = MctsStats(lower_is_better=False)
    stats.backpropagate([ROOT, 0], 0.3)
    assert stats.normalised(stats.q(0)) == 0.5


def test_selection_walks_to_the_leaf_with_the_best_uct():
    # root -> drafts 0 (0.5) and 1 (0.9); 1 -> improve children 2 (0.95) and 3 (0.6)
    j = journal(node(0, metric=0.5), node(1, metric=0.9),
                node(2, parent=1, metric=0.95), node(3, parent=1, metric=0.6))  # fmt: skip
    stats = MctsStats(lower_is_better=False)
    for path, metric in (([ROOT, 0], 0.5), ([ROOT, 1], 0.9), ([ROOT, 1, 2], 0.95),
                         ([ROOT, 1, 3], 0.6)):  # fmt: skip
        stats.backpropagate(path, metric)
    assert select_path(j, stats) == [ROOT, 1, 2]


def test_exploration_can_beat_a_better_mean():
    j = journal(node(0, metric=0.5), node(1, metric=0.9))
    stats = MctsStats(lower_is_better=False, uct_c=10.0)
    stats.backpropagate([ROOT, 0], 0.5)
    for _ in range(20):
        stats.backpropagate([ROOT, 1], 0.9)
    assert select_path(j, stats) == [ROOT, 0]


def test_unvisited_children_lose_to_visited_ones_and_an_empty_tree_is_the_root():
    j = journal(node(0, bug=True), node(1, metric=0.7))
    stats = MctsStats(lower_is_better=False)
    stats.backpropagate([ROOT, 1], 0.7)
    assert select_path(j, stats) == [ROOT, 1]
    assert select_path(journal(), stats) == [ROOT]


def test_a_fixed_debug_chain_is_reached_through_its_buggy_node():
    # draft 0 was buggy, debug 1 fixed it: the fix's metric went up root -> 0 -> 1
    j = journal(node(0, bug=True), node(1, parent=0, metric=0.8, op="debug"))
    stats = MctsStats(lower_is_better=False)
    stats.backpropagate([ROOT, 0, 1], 0.8)
    assert stats.visits[0] == 1 and stats.q(0) == pytest.approx(0.8)
    assert select_path(j, stats) == [ROOT, 0, 1]
