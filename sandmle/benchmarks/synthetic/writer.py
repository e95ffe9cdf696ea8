"""Technical Writer: description.md, built only from what is in the files.

Descriptions vary by construction and are deterministic per task: the writer's own random
stream (from the blueprint's entropy) picks a section layout, headings, phrasings and a framing
of the mutated domain (:mod:`.phrases`). What an agent needs exactly never varies in content:
the metric's name and direction, the submission columns, the id scheme and an example of the
submission file (:class:`~.draft.Facts`). The rule behind the labels is never described;
``leaks.description_leaks`` checks that.

A task type with its own files (seq2seq tokens, image-to-image pixels) hands the writer its
:class:`~.artifacts.Specifics` (its modality's ``describe``); the writer draws everything
else as usual. The sections are rendered by :mod:`.sections` and :mod:`.data_section`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pandas as pd

from sandmle.benchmarks.synthetic import data_section, sections
from sandmle.benchmarks.synthetic.artifacts import Description, DevelopedTask
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.draft import Draft
from sandmle.benchmarks.synthetic.leaks import description_leaks
from sandmle.benchmarks.synthetic.modalities.registry import modality_of
from sandmle.benchmarks.synthetic.phrases import HEADINGS
from sandmle.benchmarks.synthetic.streams import WRITER, role_rng

MAX_DRAFTS = 8
"""Drafts tried before keeping one that names a rule word (the sanity gate then rejects it)."""
RENDERERS: dict[str, Callable[[Draft], str]] = {
    "intro": sections.intro,
    "task": sections.task_sentence,
    "data": data_section.data,
    "columns": lambda draft: "\n".join(data_section.column_lines(draft, "bullets")),
    "evaluation": sections.evaluation,
    "submission": sections.submission,
    "notes": sections.notes,
}
"""The renderer of each section kind a layout names."""


def markdown(draft: Draft) -> str:
    """The title, then each section of the draft's layout under a drawn heading."""
    parts = [f"# {draft.bp.domain.title}"]
    for kind in draft.layout:
        parts.append(f"## {draft.pick(HEADINGS[kind])}\n\n{RENDERERS[kind](draft)}")
    return "\n\n".join(parts) + "\n"


def write_description(bp: Blueprint, task: DevelopedTask, sample: pd.DataFrame) -> Description:
    """A description drawn from the writer's stream; a draft naming a rule word is redrawn."""
    rng = role_rng(bp.entropy, WRITER)
    public = public_names(bp, task, sample)
    describe = modality_of(bp.dna).describe
    spec = describe(bp, task, sample) if describe is not None else None
    text = ""
    for _ in range(MAX_DRAFTS):
        text = markdown(Draft(bp, task, sample, rng, spec))
        if not description_leaks(text, task.rule.model_dump(), public):
            break
    return Description(markdown=text)


def public_names(bp: Blueprint, task: DevelopedTask, sample: pd.DataFrame) -> set[str]:
    """Words the public files already show (titles, columns, classes, file names)."""
    text = " ".join(
        [
            bp.domain.title,
            bp.domain.entity,
            *map(str, task.train.columns),
            *map(str, task.test.columns),
            *map(str, sample.columns),
            *bp.domain.class_names,
            *task.files,
            "train.csv test.csv sample_submission.csv",
        ]
    )
    return set(re.findall(r"[a-z]+", text.lower()))
