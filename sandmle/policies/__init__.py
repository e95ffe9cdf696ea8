"""Reference policies served as Inspect models: ``sandmle/heuristic``,
``sandmle/sample-submission`` and ``sandmle/smollm2`` (see ``provider.py``)."""

from sandmle.policies.automl import automl_code, code_level, parse_metric
from sandmle.policies.provider import POLICIES, SandmlePolicyAPI, get_policy

__all__ = [
    "POLICIES",
    "SandmlePolicyAPI",
    "automl_code",
    "code_level",
    "get_policy",
    "parse_metric",
]
