"""AIRA's evolutionary policy: island and parent sampling, admission, migration, crossover."""

from random import Random

import pytest
from numpy.random import RandomState

from sandmle.scaffolds.aira_evo import Population, softmax, temperature_at
from tests.scaffolds.test_aide import node


def population(*metrics_by_island: list[float], lower_is_better=False, max_size=500) -> Population:
    pop = Population(len(metrics_by_island), max_size, lower_is_better)
    next_id = 0
    for island, metrics in enumerate(metrics_by_island):
        nodes = [node(next_id + i, metric=m) for i, m in enumerate(metrics)]
        next_id += len(nodes)
        pop.seed(nodes, [island] * len(nodes))
    return pop


def test_normalised_fitness_is_one_for_the_best_in_either_direction():
    up, down = population([0.2, 0.6]), population([0.2, 0.6], lower_is_better=True)
    assert (up.normalised(0.6), up.normalised(0.2), up.normalised(None)) == (1.0, 0.0, 0.0)
    assert (down.normalised(0.2), down.normalised(0.6)) == (1.0, 0.0)
    assert population([0.4]).normalised(0.4) == 0.5


def test_softmax_temperature_sharpens_choices():
    assert softmax([0.0, 1.0], 1.0)[1] == pytest.approx(0.7311, abs=1e-4)
    assert softmax([0.0, 1.0], 0.1)[1] > 0.99
    assert temperature_at(5, 10, 1.0, 0.0) == 0.5


def test_empty_population_drafts():
    operator, parents, island = Population(2, 10, False).sample(Random(0), RandomState(0), 1.0, 0.5)
    assert (operator, parents) == ("draft", []) and island in (0, 1)


def test_crossover_takes_two_distinct_parents_from_one_island():
    pop = population([0.2, 0.6, 0.9], [0.5])
    operator, parents, island = pop.sample(Random(1), RandomState(1), 1.0, crossover_prob=1.0)
    assert operator == "crossover" and island == 0
    assert len({p.id for p in parents}) == 2 and all(p in pop.islands[0] for p in parents)


def test_improve_without_crossover_and_fitter_parents_drawn_more_often():
    pop = population([0.1, 0.9])
    rng, nrng = Random(0), RandomState(0)
    picks = [pop.sample(rng, nrng, 0.2, crossover_prob=0.0) for _ in range(200)]
    assert {op for op, _, _ in picks} == {"improve"}
    fit = sum(parents[0].metric == 0.9 for _, parents, _ in picks)
    assert fit > 150  # weight e^5 : e^0 at temperature 0.2


def test_crossover_falls_back_to_improve_when_islands_are_too_small():
    operator, parents, _ = population([0.3], [0.7]).sample(
        Random(0), RandomState(0), 1.0, crossover_prob=1.0
    )
    assert operator == "improve" and len(parents) == 1


def test_sampling_repeats_under_a_seed():
    pop = population([0.1, 0.5, 0.9], [0.3, 0.4])
    draws = [[(op, [p.id for p in ps], i) for op, ps, i in
              (pop.sample(Random(7), RandomState(7), 0.5, 0.5) for _ in range(10))] for _ in range(2)]  # fmt: skip
    assert draws[0] == draws[1]


def test_admission_needs_the_island_mean_and_trims_the_worst():
    pop = population([0.4, 0.6], max_size=3)
    weak, strong, stronger = node(10, metric=0.3), node(11, metric=0.7), node(12, metric=0.9)
    pop.add([weak, strong], [0, 0], migration_prob=0.0, rng=Random(0))
    assert [n.id for n in pop.islands[0]] == [0, 1, 11]  # 0.3 < mean 0.5: rejected
    pop.add([stronger], [0], migration_prob=0.0, rng=Random(0))
    assert sorted(n.metric for n in pop.islands[0]) == [0.6, 0.7, 0.9]  # 0.4 trimmed


def test_migration_resets_the_weaker_island_from_a_stronger_one():
    pop = population([0.8, 0.85, 0.9], [0.1, 0.2])
    pop.migrate(Random(0))
    weak = pop.islands[1]
    assert [n.metric for n in weak][0] == 0.2  # keeps only its best, plus a migrant
    assert len(weak) == 2 and weak[1].metric in (0.8, 0.85)
    assert 0.9 in [n.metric for n in pop.islands[0]] and len(pop.islands[0]) == 2
