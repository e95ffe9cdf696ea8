"""Reference policies served as Inspect models: ``sandmle/heuristic``,
``sandmle/sample-submission``, ``sandmle/smollm2`` and ``sandmle/chaos`` (see ``provider.py``).

``base.py`` (the ``Policy`` type) is the bottom; ``conversation.py``, ``automl.py`` and
``sample_copy.py`` are shared by the policies; ``provider.py`` picks one by name, on top."""

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
