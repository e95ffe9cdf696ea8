"""AIRA-dojo's evolutionary policy (facebookresearch/aira-dojo ``src/dojo/solvers/evo/evo.py``).

The rules, restated: solutions live on islands. Generation 0 drafts ``individuals_per_generation``
solutions onto random islands. Later generations pick, per individual, ``crossover`` with
probability ``crossover_prob`` (0 before ``num_generations_till_crossover``) else ``improve``;
an island is sampled by its mean fitness and parents within it by their fitness (without
replacement), both with a softmax of the min-max normalised fitness (1 is best, 0 for no
metric) at a temperature that decays linearly from ``initial_temp`` to ``final_temp``. A
buggy child gets a debug chain of up to ``max_debug_depth`` steps; only good (or fixed)
individuals join the generation. After a generation each joins its island if the island is
empty or it is at least as fit as the island's mean; islands over ``max_island_size`` drop
their worst; with probability ``migration_prob`` (0 before ``num_generations_till_migration``)
the weaker half of the islands keep only their best and receive a fit non-best individual
migrated from a stronger island.

Draws as aira-dojo's: the operator coin, the island and the migration coin from the Python
RNG, the parents from numpy's (``numpy.random.choice`` without replacement, ``evo.py:504``),
so a replay under the same seeds makes the same choices. Differences, kept on purpose: when
no island holds enough members for the operator aira-dojo raises (``evo.py:525``), here the
fittest island gets an improve; aira-dojo's island ids go out of step with the generation's
members once a child is discarded (``evo.py:935`` appends an id for every child, ``:950``
a member only for good ones), here each member keeps its own island; migration's tie-break
and donor draws use the Python RNG (aira-dojo: numpy; no preset migrates).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from random import Random
from typing import Literal

import numpy as np

from sandmle.harness.search_tree import SearchNode
from sandmle.scaffolds.aira_presets import EvoSettings
from sandmle.scaffolds.search import Search

EvoOperator = Literal["draft", "improve", "crossover"]
FEW_SHOT = {"improve": 1, "crossover": 2}
"""Parents per operator."""


def softmax(scores: list[float], temperature: float) -> list[float]:
    """Sampling weights: a softmax of ``scores / temperature`` (aira's ``stable_softmax``)."""
    scaled = np.asarray(scores, dtype=float) / max(temperature, 1e-6)
    exps = np.exp(scaled - scaled.max())
    return [float(w) for w in exps / exps.sum()]


@dataclass
class Population:
    """Islands of good solutions, with the fitness range seen so far."""

    num_islands: int
    max_island_size: int
    lower_is_better: bool
    islands: list[list[SearchNode]] = field(default_factory=list)
    low: float = math.inf
    high: float = -math.inf

    def __post_init__(self) -> None:
        if not self.islands:
            self.islands = [[] for _ in range(self.num_islands)]

    def observe(self, metric: float | None) -> None:
        if metric is not None and math.isfinite(metric):
            self.low, self.high = min(self.low, metric), max(self.high, metric)

    def normalised(self, metric: float | None) -> float:
        """Fitness in [0, 1] with 1 best; 0 without a metric, 0.5 while the range is a point."""
        if metric is None or not math.isfinite(metric):
            return 0.0
        if not self.high > self.low:
            return 0.5
        share = (metric - self.low) / (self.high - self.low)
        return min(1.0, max(0.0, 1.0 - share if self.lower_is_better else share))

    def mean_fitness(self, island: list[SearchNode]) -> float | None:
        metrics = [n.metric for n in island if n.metric is not None]
        return float(np.mean(metrics)) if metrics else None  # numpy's sum, as aira-dojo's

    def seed(self, nodes: list[SearchNode], island_ids: list[int]) -> None:
        for node, island in zip(nodes, island_ids, strict=True):
            self.islands[island].append(node)
            self.observe(node.metric)

    def add(
        self, nodes: list[SearchNode], island_ids: list[int], migration_prob: float, rng: Random
    ) -> None:
        """Admit nodes that match their island's mean, trim, and maybe migrate."""
        for node, island_id in zip(nodes, island_ids, strict=True):
            self.observe(node.metric)
            island = self.islands[island_id]
            if not island or self._at_least_mean(node, island):
                island.append(node)
            while len(island) > self.max_island_size:
                island.remove(self._worst(island))
        if self.num_islands > 1 and rng.random() <= migration_prob:
            self.migrate(rng)

    def _at_least_mean(self, node: SearchNode, island: list[SearchNode]) -> bool:
        mean = self.mean_fitness(island)
        if node.metric is None:
            return False
        if mean is None:
            return True
        return node.metric <= mean if self.lower_is_better else node.metric >= mean

    def _worst(self, island: list[SearchNode]) -> SearchNode:
        return min(island, key=lambda n: self.normalised(n.metric))

    def _best(self, island: list[SearchNode]) -> SearchNode:
        return max(island, key=lambda n: self.normalised(n.metric))

    def migrate(self, rng: Random) -> None:
        """Reset the weaker half of the islands from individuals of the stronger half."""

        def strength(i: int) -> float:
            island = self.islands[i]
            return self.normalised(self._best(island).metric) if island else -1.0

        order = sorted(range(self.num_islands), key=lambda i: (strength(i), rng.random()))
        weak, strong = order[: self.num_islands // 2], order[self.num_islands // 2 :]
        for island_id in weak:
            island = self.islands[island_id]
            self.islands[island_id] = [self._best(island)] if island else []
            donors = [i for i in strong if len(self.islands[i]) > 1]
            if not donors:
                continue
            donor = self.islands[rng.choice(donors)]
            best = self._best(donor)
            candidates = [n for n in donor if n is not best]
            weights = softmax([self.normalised(n.metric) for n in candidates], 1.0)
            migrant = rng.choices(candidates, weights=weights, k=1)[0]
            donor.remove(migrant)
            self.islands[island_id].append(migrant)

    def sample(
        self, rng: Random, np_rng: np.random.RandomState, temperature: float, crossover_prob: float
    ) -> tuple[EvoOperator, list[SearchNode], int]:
        """Choose an operator, an island and its parents (``draft`` when all are empty)."""
        if not any(self.islands):
            return "draft", [], rng.randrange(self.num_islands)
        # an empty island scores 0, as one of the worst (aira: worst mean, normalised to 0)
        island_scores = [self.normalised(self.mean_fitness(i)) for i in self.islands]
        weights = softmax(island_scores, temperature)
        operator: EvoOperator = "improve" if rng.random() >= crossover_prob else "crossover"
        for _ in range(2 * self.num_islands):
            island_id = rng.choices(range(self.num_islands), weights=weights, k=1)[0]
            island = self.islands[island_id]
            if len(island) >= FEW_SHOT[operator]:
                parents = self.pick(island, FEW_SHOT[operator], np_rng, temperature)
                return operator, parents, island_id
        # no island is big enough (aira-dojo raises): improve within the fittest island
        island_id = max(
            range(self.num_islands), key=lambda i: (bool(self.islands[i]), island_scores[i])
        )
        return "improve", self.pick(self.islands[island_id], 1, np_rng, temperature), island_id

    def pick(
        self, island: list[SearchNode], k: int, np_rng: np.random.RandomState, temperature: float
    ) -> list[SearchNode]:
        """``k`` distinct parents drawn by fitness (numpy's choice without replacement)."""
        weights = softmax([self.normalised(n.metric) for n in island], temperature)
        chosen = np_rng.choice(len(island), p=weights, size=k, replace=False)
        return [island[int(i)] for i in chosen]


def temperature_at(generation: int, num_generations: int, initial: float, final: float) -> float:
    """AIRA's linear temperature schedule."""
    return initial - (initial - final) * generation / max(num_generations, 1)


async def evo_search(
    search: Search, rng: Random, np_rng: np.random.RandomState, settings: EvoSettings
) -> None:
    """aira-dojo's ``Evolutionary.search`` (``evo.py:889-998``) over sandmle's engine.

    The steps are checked after each generation, as there (``evo.py:995``); the time before
    each child (sandmle's honest budget; aira-dojo checks it after the generation).
    """
    population = Population(
        settings.num_islands, settings.max_island_size, search.journal.direction()
    )
    for generation in range(settings.num_generations):
        if search.exhausted:
            break
        temperature = temperature_at(
            generation, settings.num_generations, settings.initial_temp, settings.final_temp
        )
        crossover = (
            settings.crossover_prob
            if generation >= settings.num_generations_till_crossover
            else 0.0
        )
        members: list[SearchNode] = []
        islands: list[int] = []
        for _ in range(settings.individuals_per_generation):
            if search.out_of_time:
                break
            operator: EvoOperator
            parents: list[SearchNode]
            if generation == 0:
                operator, parents, island = "draft", [], rng.randrange(settings.num_islands)
            else:
                operator, parents, island = population.sample(rng, np_rng, temperature, crossover)
            child: SearchNode | None = await search.expand(operator, parents)
            if child is not None and child.is_bug:
                _, child = await search.debug_chain(
                    child, settings.max_debug_depth, settings.max_debug_time, step_check=False
                )
            if child is not None:
                child.extra["island"] = island
                child.extra["generation"] = generation
                members.append(child)
                islands.append(island)
        if generation == 0:
            population.seed(members, islands)
        else:
            migrate = (
                settings.migration_prob
                if generation >= settings.num_generations_till_migration
                else 0.0
            )
            population.add(members, islands, migrate, rng)
        search.record()
    await search.finish()
