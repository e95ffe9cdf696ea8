"""The shape every tree-scaffold prompt shares, so reference policies can answer any of them.

An operator prompt is markdown: its first line is ``OPERATOR_LINE.format(name=...)``, then
sections headed by the constants below. Code is always in one fenced ``python`` block. Real
LLMs read these as ordinary headings; the reference policies (``sandmle/heuristic``) parse them.
"""

OPERATOR_LINE = "# Operator: {name}"
"""First line of every operator prompt: draft, improve, debug, analyze or crossover."""

OPERATORS = ("draft", "improve", "debug", "analyze", "crossover")

TASK_SECTION = "# Task description"
"""The competition's task text (description + harness instructions)."""
MEMORY_SECTION = "# Memory"
"""Summaries of earlier solutions and their metrics."""
PREVIOUS_CODE_SECTION = "# Previous solution"
"""The parent's code (improve, debug, analyze), in a python block."""
SECOND_CODE_SECTION = "# Second solution"
"""The second parent's code (crossover)."""
EXECUTION_OUTPUT_SECTION = "# Execution output"
"""The parent's run output (debug, analyze)."""
INSTRUCTIONS_SECTION = "# Instructions"
"""What to return: a plan then one python block, or a review (analyze) via the review tool."""

REVIEW_TOOL = "submit_review"
"""Function the analyze step must call: is_bug, summary, metric, lower_is_better."""


def operator_of(prompt: str) -> str | None:
    """The operator a prompt asks for, from its first line; None for other prompts."""
    first = prompt.lstrip().splitlines()[0] if prompt.strip() else ""
    for name in OPERATORS:
        if first.strip() == OPERATOR_LINE.format(name=name):
            return name
    return None


def section(prompt: str, heading: str) -> str | None:
    """The text under ``heading`` up to the next top-level heading; None when absent."""
    lines = prompt.splitlines()
    try:
        start = lines.index(heading) + 1
    except ValueError:
        return None
    body: list[str] = []
    fenced = False
    for line in lines[start:]:
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("# "):
            break
        body.append(line)
    return "\n".join(body).strip()
