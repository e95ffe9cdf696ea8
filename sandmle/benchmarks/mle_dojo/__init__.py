"""MLE-Dojo: its prepared competitions as a task (``sandmle/mle_dojo``, with HumanRank) and its
action loop as a scaffold (``sandmle/dojo``)."""

from sandmle.benchmarks.mle_dojo.competitions import (
    BENCHMARK,
    DEFAULT_DATA_DIR,
    choose_grading,
    dojo_config,
    is_prepared,
    load_dojo_competition,
    prepared_ids,
)

__all__ = [
    "BENCHMARK",
    "DEFAULT_DATA_DIR",
    "choose_grading",
    "dojo_config",
    "is_prepared",
    "load_dojo_competition",
    "prepared_ids",
]
