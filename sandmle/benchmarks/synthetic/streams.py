"""The roles' random streams: one numpy Generator per (task entropy, role).

Every random choice of a role is drawn from its own stream, seeded by the task's entropy
(the secret's salt words, pack seed, task index, attempt) and the role's number, so the same
request always gives the same bytes and changing one role never shifts another's draws.
"""

from __future__ import annotations

import numpy as np

STRATEGIST = 0
"""The Data Strategist's stream (blueprints)."""
DEVELOPER = 1
"""The MLE Developer's stream (hidden rule and data)."""
BOOTSTRAP = 5
"""The MLOps Engineer's bootstrap resamples of the test rows."""
WRITER = 6
"""The Technical Writer's stream (layout, headings, phrasings)."""


def role_rng(entropy: list[int], role: int) -> np.random.Generator:
    """An independent stream per role, so changing one role never shifts another's draws."""
    return np.random.default_rng(np.random.SeedSequence([*entropy, role]))
