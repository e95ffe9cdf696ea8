"""Diversity by construction: a 1,000-task plan is made of distinct tasks."""

from __future__ import annotations

from collections import Counter

from sandmle.benchmarks.synthetic.blueprint import TaskRequest
from sandmle.benchmarks.synthetic.planning import rule_signature
from sandmle.benchmarks.synthetic.secret import salt_words
from sandmle.benchmarks.synthetic.seeds import select_seeds
from sandmle.benchmarks.synthetic.strategist import plan


def test_a_thousand_task_plan_has_900_distinct_combinations():
    seeds, salt = select_seeds(), salt_words("diversity-test-secret")
    keys = []
    for i in range(1000):
        bp = plan(TaskRequest(index=i, dna=seeds[i % len(seeds)], entropy=[*salt, 123, i, 0]))
        keys.append((rule_signature(bp), bp.domain.slug, bp.dna.modality, bp.dna.metric))
    assert len(set(keys)) >= 900
    assert max(Counter(keys).values()) <= 4
    for modality in ("tabular", "text", "image", "time-series"):
        forms = {k[0] for k in keys if k[2] == modality}
        assert len(forms) >= 20, modality


def test_image_class_shape_mappings_vary_beyond_circles():
    seeds = [s for s in select_seeds(["image"]) if s.task_type == "binary"]
    targets = Counter()
    for i in range(80):
        bp = plan(TaskRequest(index=i, dna=seeds[i % len(seeds)], entropy=[5, i, 0]))
        targets[rule_signature(bp)[0]] += 1
    assert len(targets) == 8 and max(targets.values()) <= 20
