"""Building operator prompts in the shared layout of ``sandmle.scaffolds.prompt_format``.

Prompts are top-level sections (task, memory, the parent's code and output, data overview,
environment, instructions), as aideml's and aira-dojo's are. Embedded free text has its
top-level headings demoted so that it cannot end a section early; code and outputs are fenced.
Both AIDE's and AIRA's prompters build on these parts, so the data and environment sections
and the memory format exist once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from sandmle.harness.layout import DATA_DIR, SUBMISSION_PATH
from sandmle.harness.sandbox.limits import DEFAULT_COMMAND_TIMEOUT_S
from sandmle.harness.search_tree import SearchNode
from sandmle.scaffolds.prompt_format import (
    BUGGY_CODE_SECTION,
    DATA_SECTION,
    ENVIRONMENT_SECTION,
    EXECUTION_OUTPUT_SECTION,
    FIRST_CODE_SECTION,
    IMPLEMENTATION_SECTION,
    IMPROVE_CODE_SECTION,
    INSTRUCTIONS_SECTION,
    MEMORY_SECTION,
    REVIEW_TOOL,
    SECOND_CODE_SECTION,
    TASK_SECTION,
    data_dir_of,
    submission_path_of,
)

CHARS_PER_TOKEN = 4
"""Rough size of a token, for the memory budget (no tokenizer is assumed)."""
EMPTY_MEMORY = "(No memory available.)"
RESPONSE_FORMAT = (
    "Reply with a brief outline of your proposed solution in natural language (3-5 "
    "sentences), followed by a single markdown code block (```python ... ```) holding one "
    "complete, self-contained Python script that implements it. No extra headings or text."
)
ANALYZE_INSTRUCTIONS = (
    "You have written code to solve this task and now need to evaluate the output of its "
    "run. Determine whether there were any bugs (the run failed, or no valid submission was "
    "written) and report the empirical findings: the validation metric the run printed (null "
    f"if none) and whether lower is better. Call `{REVIEW_TOOL}` with is_bug, summary, metric "
    "and lower_is_better; if you cannot call it, reply with those four fields as one JSON object."
)


@dataclass(frozen=True)
class Environment:
    """What every operator prompt says about the resources left and the machine."""

    steps_left: int
    steps_total: int
    time_left_s: float | None
    hardware: str = ""
    packages: tuple[str, ...] = ()
    memory_tokens: int = 16_000
    """Budget of the memory section; halved when a reply stops for length."""
    run_timeout_s: int | None = None
    """Seconds the next run may take: ``min(exec timeout, time left)``, as both references
    state it (aira-dojo ``core/solvers/operators/draft.py:40`` @ c795d86; MLE-bench's AIDE
    fork). None: ``PromptParts.exec_timeout``."""


@dataclass(frozen=True)
class Paths:
    """Where the task says its data is and where the submission goes."""

    data_dir: str = DATA_DIR
    submission: str = SUBMISSION_PATH

    @staticmethod
    def from_task(task: str) -> Paths:
        return Paths(data_dir_of(task) or DATA_DIR, submission_path_of(task) or SUBMISSION_PATH)


@dataclass
class PromptParts:
    """The parts a prompter joins; the same for every scaffold."""

    task: str
    data_overview: str = ""
    exec_timeout: int = DEFAULT_COMMAND_TIMEOUT_S
    """Seconds per script run, stated when the run's own limit is not known."""
    paths: Paths = field(default_factory=Paths)

    def script_rules(self, run_timeout_s: int | None = None) -> str:
        """The rules every script follows; the time limit is this run's (``Environment``)."""
        timeout = self.exec_timeout if run_timeout_s is None else run_timeout_s
        return (
            f"All input data is in `{self.paths.data_dir}` (read-only; no need to unzip "
            f"anything). Save the test predictions to `{self.paths.submission}` in the format "
            "of the sample submission: this file is graded, do not forget it. Print the "
            "validation metric computed on a hold-out set or by cross-validation. The script "
            "runs as `python solution.py` in its own working directory (use it for temporary "
            f"files), with no internet access, and must finish within {human_time(timeout)}."
        )

    def instructions(self, env: Environment, *guides: str) -> tuple[str, str]:
        """The instructions section of every operator prompt: the prompter's guides, the
        script rules for this run, and the reply format (AIDE's and AIRA's alike)."""
        rules = self.script_rules(env.run_timeout_s)
        return instructions_part(*guides, rules, RESPONSE_FORMAT)

    def data(self) -> tuple[str, str]:
        return DATA_SECTION, fence(self.data_overview) if self.data_overview else ""


def human_time(seconds: float) -> str:
    """``3600`` -> ``1 hour``, ``5400`` -> ``1.5 hours``, ``90`` -> ``90 seconds``."""
    for unit, size in (("hour", 3600), ("minute", 60)):
        if seconds >= size:
            value = seconds / size
            shown = f"{value:.1f}".rstrip("0").rstrip(".")
            return f"{shown} {unit}{'' if shown == '1' else 's'}"
    return f"{int(seconds)} seconds"


def packages_part(env: Environment) -> tuple[str, str]:
    """Only the installed packages: aideml's draft prompt (``Agent._prompt_environment``)."""
    if not env.packages:
        return ENVIRONMENT_SECTION, ""
    return ENVIRONMENT_SECTION, f"- Installed packages: {', '.join(env.packages)}."


def environment_part(env: Environment) -> tuple[str, str]:
    """Time and steps left, hardware and packages (MLE-bench's AIDE notes; aira-dojo COMPUTE)."""
    time_left = "no limit" if env.time_left_s is None else human_time(max(env.time_left_s, 0))
    lines = [
        f"- Time left for the whole search: {time_left}.",
        f"- Steps left: {env.steps_left} of {env.steps_total} (one step = one script run).",
    ]
    if env.hardware:
        lines.append(f"- Hardware: {env.hardware}.")
    if env.packages:
        lines.append(
            f"- Installed packages: {', '.join(env.packages)}. Other packages cannot be installed."
        )
    return ENVIRONMENT_SECTION, "\n".join(lines)


def demote(text: str) -> str:
    """Turn ``# Heading`` lines into ``## Heading`` so embedded text keeps its section."""
    return re.sub(r"^# ", "## ", text, flags=re.MULTILINE)


def fence(text: str, lang: str = "") -> str:
    """Fence text, neutralising fences inside it."""
    safe = text.replace("```", "'''")
    return f"```{lang}\n{safe}\n```"


def sections(intro: str, parts: Iterable[tuple[str, str]]) -> str:
    """The full prompt: an intro, then each non-empty section."""
    lines = [intro.strip(), ""]
    for heading, body in parts:
        if body.strip():
            lines += [heading, "", body.strip(), ""]
    return "\n".join(lines).rstrip() + "\n"


def task_part(task: str) -> tuple[str, str]:
    return TASK_SECTION, demote(task)


def memory_part(memory: str) -> tuple[str, str]:
    return MEMORY_SECTION, demote(memory or EMPTY_MEMORY)


def memory_of(nodes: Iterable[SearchNode], env: Environment) -> tuple[str, str]:
    """The memory section of ``nodes`` within the prompt's memory budget."""
    return memory_part(memory_text(nodes, env.memory_tokens))


def code_body(node: SearchNode) -> str:
    """A parent's code, without its plan: both references show the code only (aideml
    ``aide/agent.py:219-221, 252`` @ 9643875; aira-dojo ``prev_code``, ``prev_buggy_code``,
    ``prev_code1``/``2`` in ``aira_operators/*.yaml`` @ c795d86)."""
    return fence(node.code, "python")


def improve_part(node: SearchNode) -> tuple[str, str]:
    return IMPROVE_CODE_SECTION, code_body(node)


def buggy_part(node: SearchNode) -> tuple[str, str]:
    return BUGGY_CODE_SECTION, code_body(node)


def crossover_parts(first: SearchNode, second: SearchNode) -> list[tuple[str, str]]:
    """The two parents' code only: aira-dojo's crossover template renders no output and no
    data overview (``operators/mlebench/aira_operators/crossover.yaml:31-41`` @ c795d86)."""
    return [(FIRST_CODE_SECTION, code_body(first)), (SECOND_CODE_SECTION, code_body(second))]


def output_part(node: SearchNode) -> tuple[str, str]:
    return EXECUTION_OUTPUT_SECTION, fence(node.output or "(no output)")


def instructions_part(*lines: str) -> tuple[str, str]:
    return INSTRUCTIONS_SECTION, "\n".join(f"- {line}" for line in lines if line)


def node_summary(node: SearchNode) -> str:
    """One memory entry, as aira-dojo's ``get_node_summary`` (aideml's without the debug plan)."""
    label = "Debug plan" if node.operator == "debug" else "Design"
    lines = [f"{label}: {' '.join(node.plan.split()) or '(no plan given)'}"]
    if not node.is_bug and node.metric is not None:
        lines += [f"Results: {' '.join(node.summary.split())}", f"Validation Metric: {node.metric}"]
    else:
        lines.append(f"Analysis: {' '.join(node.summary.split())}")
    return "\n".join(lines)


def memory_text(nodes: Iterable[SearchNode], max_tokens: int | None = None) -> str:
    """Entries joined by a rule; past the budget, the oldest entries are dropped."""
    entries = [node_summary(n) for n in nodes]
    separator = "\n-------------------------------\n"
    if max_tokens is not None:
        budget = max_tokens * CHARS_PER_TOKEN
        kept: list[str] = []
        for entry in reversed(entries):
            if sum(len(e) + len(separator) for e in kept) + len(entry) > budget:
                break
            kept.insert(0, entry)
        if len(kept) < len(entries):
            kept.insert(0, f"({len(entries) - len(kept)} older entries left out.)")
        entries = kept
    return separator.join(entries)


def analyze_prompt(task: str, node: SearchNode) -> str:
    """The analyze step's prompt (aideml's ``parse_exec_result``; AIRA reuses it)."""
    return sections(
        "You are a Kaggle grandmaster attending a competition. You have written code to solve "
        "this task and now need to evaluate the output of the code execution.",
        [
            task_part(task),
            (IMPLEMENTATION_SECTION, fence(node.code, "python")),
            output_part(node),
            instructions_part(ANALYZE_INSTRUCTIONS),
        ],
    )
