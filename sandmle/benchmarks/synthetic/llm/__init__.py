"""The ``llm`` generator backend: SandMLE's roles as prompts to any Inspect model."""

from sandmle.benchmarks.synthetic.llm.backend import LLMBackend, RoleRejected
from sandmle.benchmarks.synthetic.llm.contract import ContractError
from sandmle.benchmarks.synthetic.llm.sandboxed import GenerationCodeError, run_generation_code

__all__ = [
    "ContractError",
    "GenerationCodeError",
    "LLMBackend",
    "RoleRejected",
    "run_generation_code",
]
