"""The ``llm`` generator backend: the Strategist, Developer and Writer as prompts to a model.

Every model answer is parsed and checked; a rejected answer gets one retry with the error,
then the attempt fails (and the pipeline records it as a rejection). The Developer's code
runs only in the ``bwrap`` sandbox. Baselines and milestones reuse the procedural modules,
so both backends face the same rules and the same sanity gate.
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic.artifacts import Description, DevelopedTask, HiddenRule
from sandmle.benchmarks.synthetic.backend import ProceduralBackend
from sandmle.benchmarks.synthetic.blueprint import Blueprint, StructuralDNA, TaskRequest
from sandmle.benchmarks.synthetic.llm import prompts
from sandmle.benchmarks.synthetic.llm.contract import (
    MAX_ROWS,
    MIN_ROWS,
    blueprint_problems,
    collect_task,
    contract_text,
)
from sandmle.benchmarks.synthetic.llm.sandboxed import DEFAULT_TIMEOUT_S, run_generation_code
from sandmle.benchmarks.synthetic.llm.seed_dna import SeedMaterial, dna_prompt, parse_dna
from sandmle.benchmarks.synthetic.streams import DEVELOPER
from sandmle.benchmarks.synthetic.task_files import (
    PREPARED_DIR,
    RULE_FILE,
    file_digests,
    load_blueprint,
    write_prepared,
)
from sandmle.errors import SandmleError
from sandmle.harness.competition import PUBLIC_DIR
from sandmle.harness.grading.metrics import get_metric

if TYPE_CHECKING:
    from inspect_ai.model import ChatMessage, Model

T = TypeVar("T")
_FENCE = re.compile(r"```[a-zA-Z]*\n(.*?)```", re.DOTALL)


class RoleRejected(ValueError):
    """A role's answer failed its checks twice."""


class ProviderError(SandmleError):
    """The model provider failed (missing package, key, network): not the task's fault."""


class LLMBackend(ProceduralBackend):
    """Three roles played by any Inspect model; the MLOps rule stays the documented one."""

    name = "llm"
    # its prompts and file contract cover rows of features (tabular, text, image, series)
    UNSUPPORTED_TASK_TYPES = frozenset({"audio", "ranking", "seq2seq", "image-to-image"})

    def __init__(
        self,
        model: str | Model | None = None,
        timeout_s: int = DEFAULT_TIMEOUT_S,
        sandbox_dir: Path | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self._model = model
        self.max_tokens = max_tokens
        """Cap on each answer's tokens (None: the provider's default)."""
        self.timeout_s = timeout_s
        self.sandbox_dir = sandbox_dir
        self._loop: asyncio.AbstractEventLoop | None = None

    def strategist(self, request: TaskRequest) -> Blueprint:
        prompt = prompts.STRATEGIST_PROMPT.format(
            dna=request.dna.model_dump_json(indent=2),
            min_rows=MIN_ROWS,
            max_rows=MAX_ROWS,
            structure_rules=prompts.structure_rules(
                request.dna.modality, request.dna.task_type, request.dna.n_outputs
            ),
        )
        return self._ask(
            "strategist", prompts.STRATEGIST_SYSTEM, prompt, lambda r: self._blueprint(request, r)
        )

    def seed_dna(self, material: SeedMaterial) -> StructuralDNA:
        """The seed's structure, read from its own description and schema (checked against both)."""
        return self._ask(
            "seed DNA",
            prompts.DNA_SYSTEM,
            dna_prompt(material),
            lambda r: parse_dna(json_object(r), material),
        )

    def developer(self, blueprint: Blueprint) -> DevelopedTask:
        prompt = prompts.DEVELOPER_PROMPT.format(
            blueprint=blueprint.model_dump_json(indent=2, exclude={"entropy", "backend"}),
            seed=data_seed(blueprint),
            n_train=blueprint.n_train,
            contract=contract_text(blueprint),
        )
        return self._ask(
            "developer", prompts.DEVELOPER_SYSTEM, prompt, lambda r: self._run(blueprint, r)
        )

    # baselines and mlops: the procedural roles, inherited (same models, same documented rule)

    def writer(
        self, blueprint: Blueprint, task: DevelopedTask, sample: pd.DataFrame
    ) -> Description:
        prompt = writer_prompt(blueprint, task, sample)
        return self._ask("writer", prompts.WRITER_SYSTEM, prompt, _description)

    def replay_differences(self, root: Path) -> list[str]:
        """Re-run the recorded code in a fresh sandbox and compare ``prepared/`` byte for byte.

        The blueprint and the description are the model's answers, not functions of the
        seed, so they are taken as recorded; the data must come out the same.
        """
        bp = load_blueprint(root)
        rule = HiddenRule.model_validate_json((root / RULE_FILE).read_text())
        task = self._develop(bp, str(rule.params["code"]))
        recorded = _Recorded((root / PUBLIC_DIR / "description.md").read_text(encoding="utf-8"))
        with tempfile.TemporaryDirectory(prefix="sandmle-synth-llm-") as tmp:
            write_prepared(Path(tmp) / bp.task_id, bp, task, recorded)
            expected = file_digests(Path(tmp) / bp.task_id, PREPARED_DIR)
        actual = file_digests(root, PREPARED_DIR)
        return sorted(
            p for p in expected.keys() | actual.keys() if expected.get(p) != actual.get(p)
        )

    def _blueprint(self, request: TaskRequest, reply: str) -> Blueprint:
        data = json_object(reply)
        domain = data.get("domain")
        slug = str(domain.get("slug", "")) if isinstance(domain, dict) else ""
        fixed = {
            "task_id": f"{slug}-{request.index:03d}",
            "backend": self.name,
            "entropy": list(request.entropy),
            "dna": request.dna.model_dump(),
        }
        bp = Blueprint.model_validate({**data, **fixed})  # a ValidationError is a ValueError
        problems = blueprint_problems(bp)
        if problems:
            raise ValueError("; ".join(problems))
        return bp

    def _run(self, bp: Blueprint, reply: str) -> DevelopedTask:
        return self._develop(bp, code_block(reply))

    def _develop(self, bp: Blueprint, code: str) -> DevelopedTask:
        files = run_generation_code(code, self.timeout_s, self.sandbox_dir)
        return collect_task(bp, files, code)

    def _ask(self, role: str, system: str, prompt: str, parse: Callable[[str], T]) -> T:
        """Ask, parse, and on a ValueError ask once more with the error; then reject."""
        from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

        messages: list[ChatMessage] = [
            ChatMessageSystem(content=system),
            ChatMessageUser(content=prompt),
        ]
        for attempt in range(2):
            reply = self._generate(messages)
            try:
                return parse(reply)
            except ValueError as exc:
                if attempt:
                    raise RoleRejected(f"{role} answer rejected twice: {exc}") from None
                retry = prompts.RETRY_PROMPT.format(error=str(exc)[:2000])
                messages += [ChatMessageAssistant(content=reply), ChatMessageUser(content=retry)]
        raise AssertionError("unreachable")

    def _generate(self, messages: list[ChatMessage]) -> str:
        from inspect_ai.model import GenerateConfig, get_model

        if self._model is None:
            raise SandmleError("the llm backend needs a model (--model provider/name)")
        model = self._model if not isinstance(self._model, str) else get_model(self._model)
        # One loop for the backend's life: provider clients may bind to the loop they first ran on.
        self._loop = self._loop or asyncio.new_event_loop()
        try:
            config = GenerateConfig(max_tokens=self.max_tokens)
            output = self._loop.run_until_complete(model.generate(messages, config=config))
        except Exception as exc:  # no retry can fix a provider failure: stop, and say so
            raise ProviderError(
                f"model provider error ({model}): {type(exc).__name__}: {exc}"
            ) from exc
        if output.error:
            raise ProviderError(f"model provider error ({model}): {output.error}")
        return output.completion


class _Recorded(LLMBackend):
    """Writes the recorded description back instead of asking a model again."""

    def __init__(self, markdown: str) -> None:
        super().__init__()
        self.markdown = markdown

    def writer(
        self, blueprint: Blueprint, task: DevelopedTask, sample: pd.DataFrame
    ) -> Description:
        return Description(markdown=self.markdown)


def data_seed(bp: Blueprint) -> int:
    """The developer's seed, from the blueprint's entropy (as the procedural role streams)."""
    return int(np.random.SeedSequence([*bp.entropy, DEVELOPER]).generate_state(1)[0])


def json_object(reply: str) -> dict[str, Any]:
    """The JSON object in a reply, with or without a code fence."""
    match = _FENCE.search(reply)
    text = match.group(1) if match else reply
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError("no JSON object found in the answer")
    data = json.loads(text[start : end + 1])  # JSONDecodeError is a ValueError
    if not isinstance(data, dict):
        raise ValueError("the answer must be a JSON object")
    return data


def code_block(reply: str) -> str:
    """The first fenced code block, else the whole reply."""
    match = _FENCE.search(reply)
    code = match.group(1) if match else reply
    if not code.strip():
        raise ValueError("the answer holds no code")
    return code


def writer_prompt(bp: Blueprint, task: DevelopedTask, sample: pd.DataFrame) -> str:
    files = [
        f"- train.csv: {', '.join(map(str, task.train.columns))}",
        f"- test.csv: {', '.join(map(str, task.test.columns))}",
        f"- sample_submission.csv: {', '.join(map(str, sample.columns))}",
    ]
    folders = sorted({name.split("/", 1)[0] for name in task.files if "/" in name})
    files += [f"- {folder}/ (folder of {bp.dna.modality} files named <id>)" for folder in folders]
    files += [f"- {name}" for name in sorted(task.files) if "/" not in name]
    lower = get_metric(bp.dna.metric).lower_is_better
    return prompts.WRITER_PROMPT.format(
        title=bp.domain.title,
        entity=bp.domain.entity,
        metric=bp.dna.metric,
        direction="lower" if lower else "higher",
        n_train=bp.n_train,
        n_test=bp.n_test,
        files="\n".join(files),
        sample=sample.head(3).to_csv(index=False, lineterminator="\n", float_format="%.6g"),
    )


def _description(reply: str) -> Description:
    text = reply.strip()
    fenced = re.fullmatch(r"```(?:markdown|md)?\n(.*)```", text, re.DOTALL)
    text = (fenced.group(1) if fenced else text).strip()
    if "## Data" not in text:
        raise ValueError("description.md needs a '## Data' section listing every file")
    return Description(markdown=text + "\n")
