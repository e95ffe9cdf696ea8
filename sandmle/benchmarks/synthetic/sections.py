"""The description's prose sections: introduction, task, evaluation, submission, notes.

Each renderer takes a :class:`~.draft.Draft` and draws its wording from the draft's stream.
What an agent needs exactly (metric, direction, columns, ids, an example) comes from the
draft's :class:`~.draft.Facts`; the story and the phrasing vary.
"""

from __future__ import annotations

from sandmle.benchmarks.synthetic.draft import Draft
from sandmle.benchmarks.synthetic.phrases import GENERIC_STORIES, STORIES


def intro(draft: Draft) -> str:
    """The framing story and what a row is (plus the task, when the layout has no task section)."""
    d = draft.bp.domain
    own = STORIES.get(d.slug, ())
    generic = tuple(s.format(title_lower=d.title.lower(), entity=d.entity) for s in GENERIC_STORIES)
    story = draft.pick(own + generic if own else generic)
    if draft.spec:
        unit = draft.spec.row
        rows = (
            f"Each row of the tables is {unit}.",
            f"One row stands for {unit}.",
            f"The unit of the tables is {unit}: one per row.",
        )
    else:
        rows = (
            f"Each row of the data is one {d.entity}.",
            f"One row stands for one {d.entity}.",
            f"The unit of the data is the {d.entity}: one per row.",
        )
    row = draft.pick(rows)
    sentences = [story, row]
    if "task" not in draft.layout:
        sentences.append(task_sentence(draft))
    return " ".join(sentences)


def task_sentence(draft: Draft) -> str:
    """What to predict and how much training and test data there is."""
    if draft.spec:
        lead = draft.pick(("Predict", "Your job is to predict", "The goal is to predict"))
        return f"{lead} {draft.pick(draft.spec.task)}. {draft.pick(draft.spec.sizes)}"
    bp, d = draft.bp, draft.bp.domain
    targets = ", ".join(f"`{c}`" for c in d.target_columns)
    unit = f" (in {d.unit})" if d.unit and d.unit != d.target_columns[0] else ""
    classes = ", ".join(d.class_names)
    what = {
        "binary": f"how likely each {d.entity} is to be {d.class_names[-1] if d.class_names else 'positive'}",
        "multiclass": f"the class of each {d.entity} ({classes})",
        "multilabel": f"which labels apply to each {d.entity} ({classes})",
        "regression": f"{targets}{unit} for each {d.entity}",
        "forecasting": f"{targets}{unit} for the last days of every {d.series_column}",
    }.get(bp.dna.task_type, f"{targets}{unit} for each {d.entity}")
    sizes = draft.pick(
        (
            f"You get {bp.n_train} training rows with known outcomes and {bp.n_test} test "
            "rows whose outcomes are hidden.",
            f"The training set has {bp.n_train} rows with known outcomes; the test set has "
            f"{bp.n_test} rows whose outcomes are hidden.",
            f"Outcomes are known for the {bp.n_train} training rows and hidden for the "
            f"{bp.n_test} test rows.",
        )
    )
    lead = draft.pick(("Predict", "Your job is to predict", "The goal is to predict"))
    return f"{lead} {what}. {sizes}"


def evaluation(draft: Draft) -> str:
    """The metric by name, what it measures and its direction."""
    f = draft.facts
    how = draft.pick(
        (
            f"Submissions are scored with `{f.metric}`, the {f.metric_text} ({f.direction}).",
            f"The metric is `{f.metric}`: the {f.metric_text} ({f.direction}).",
            f"We compute the {f.metric_text} on the test set; the metric's name is "
            f"`{f.metric}` ({f.direction}).",
        )
    )
    medals = draft.pick(
        (
            "Medal lines are set from reference models' scores.",
            "Gold, silver and bronze lines come from the scores of reference models.",
            "",
        )
    )
    return f"{how} {medals}".strip()


def submission(draft: Draft) -> str:
    """The submission's columns, rows, values and ids, with its first rows as an example."""
    f = draft.facts
    columns = ", ".join(f"`{c}`" for c in f.submission_columns)
    targets = ", ".join(f"`{c}`" for c in f.submission_columns[1:])
    ids = f"Ids in `{f.id_column}` are {f.id_scheme}, e.g. `{f.id_example}`."
    body = draft.pick(
        (
            f"Write a CSV file with the header {columns} and one row per test "
            f"`{f.id_column}` ({f.n_test} rows), with {f.value_kind} in {targets}.",
            f"Hand in `submission.csv`: columns {columns}, one row for each of the "
            f"{f.n_test} test rows, {f.value_kind} in {targets}.",
            f"The submission has exactly the columns {columns}, and a row per test "
            f"`{f.id_column}` ({f.n_test} in all); {targets} hold{'s' if len(f.submission_columns) == 2 else ''} "
            f"{f.value_kind}.",
        )
    )
    lead = draft.pick(("For example:", "Its first rows look like this:", "A valid start:"))
    return f"{body} {ids} {lead}\n\n```\n{f.example}```"


def notes(draft: Draft) -> str:
    """Two notes true of every task (or of the task type), drawn from the stream."""
    notes = [
        "Only the files listed here may be used; there is no external data.",
        "The score on the test rows is final; there is no separate public leaderboard.",
        "A file that does not match `sample_submission.csv`'s columns and ids is not scored.",
        "Rows can be processed independently; nothing links one row to another except "
        "shared column values."
        if draft.bp.dna.modality != "time-series"
        else "Rows of one series are consecutive days; the test rows continue each series.",
    ]
    if draft.spec:
        notes = [*notes[:3], *draft.spec.notes]
    chosen = [notes[i] for i in sorted(draft.rng.choice(len(notes), 2, replace=False))]
    return "\n".join(f"* {n}" for n in chosen)
