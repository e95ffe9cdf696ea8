"""Technical Writer: description.md, built only from what is in the files.

Descriptions vary by construction and are deterministic per task: the writer's own random
stream (from the blueprint's entropy) picks a section layout, headings, phrasings and a framing
of the mutated domain. What an agent needs exactly never varies in content: the metric's name
and direction, the submission columns, the id scheme and an example of the submission file.
The rule behind the labels is never described; ``leaks.description_leaks`` checks that.

A task type with its own files (seq2seq tokens, image-to-image pixels) hands the writer its
:class:`Specifics` (its module's ``description_specifics``): what a row is, what to predict,
its files, columns, id scheme and metric wording; the writer draws everything else as usual.

The "## Data" section lists every public file as ``- `name`: ...`` and, for CSVs, every
column after "Columns:"; ``sanity.check_description`` parses exactly that shape back.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.blueprint import Blueprint
from sandmle.benchmarks.synthetic.developer import DevelopedTask
from sandmle.benchmarks.synthetic.leaks import description_leaks
from sandmle.benchmarks.synthetic.strategist import role_rng
from sandmle.harness.grading.metrics import get_metric

WRITER_ROLE = 6
"""The writer's random stream (``role_rng``): other roles' draws never move with it."""
MAX_DRAFTS = 8
"""Drafts tried before keeping one that names a rule word (the sanity gate then rejects it)."""

METRIC_TEXT = {
    "roc_auc": "area under the ROC curve between the predicted probability and the observed label",
    "mean_columnwise_roc_auc": "mean over the target columns of the area under the ROC curve",
    "binary_log_loss": "binary log loss of the predicted probability",
    "multiclass_log_loss": "multi-class log loss of the predicted class probabilities",
    "quadratic_weighted_kappa": "quadratic weighted kappa between predicted and true grades",
    "rmse": "root mean squared error",
    "mae": "mean absolute error",
    "rmsle": "root mean squared logarithmic error",
    "mean_columnwise_rmsle": "mean over the target columns of the RMSLE",
    "accuracy": "accuracy: the share of rows whose predicted label is exactly right",
    "macro_f1": "macro-averaged F1 over the classes",
}
ID_SCHEMES = {
    "int": "whole numbers",
    "hex": "12-character hexadecimal strings",
    "prefixed": "strings made of a prefix and a number",
}

# Section layouts: the order in which the sections appear. "intro" carries the task sentence
# when a layout has no "task" section; "data" carries the column guide when it has no "columns".
LAYOUTS: tuple[tuple[str, ...], ...] = (
    ("intro", "data", "evaluation", "submission"),
    ("intro", "task", "data", "columns", "evaluation", "submission"),
    ("intro", "evaluation", "submission", "data", "columns"),
    ("task", "intro", "data", "submission", "evaluation"),
    ("intro", "task", "evaluation", "data", "columns", "submission", "notes"),
    ("intro", "data", "columns", "task", "submission", "evaluation", "notes"),
    ("intro", "task", "columns", "data", "submission", "evaluation"),
    ("intro", "submission", "data", "evaluation", "notes"),
)
HEADINGS = {
    "intro": ("Overview", "Background", "Introduction", "Context", "About this competition"),
    "task": ("Task", "Goal", "What to predict", "Objective"),
    "data": ("Data",),  # fixed: the sanity gate reads the file list from this section
    "columns": ("Column guide", "Column dictionary", "Fields", "Column notes"),
    "evaluation": ("Evaluation", "Scoring", "Metric", "How submissions are scored"),
    "submission": ("Submission format", "Submission file", "Submitting", "What to hand in"),
    "notes": ("Notes", "Good to know", "Remarks"),
}

# A framing per domain pool: who cares about these rows and why (no word about the rule).
STORIES: dict[str, tuple[str, ...]] = {
    "bridge-inspection": (
        "A regional roads agency inspects hundreds of bridges a year and has to decide where "
        "its maintenance crews go first.",
        "Bridge engineers log every inspection; the agency wants to triage the backlog before "
        "the winter season closes the worksites.",
    ),
    "greenhouse-yield": (
        "A cooperative of growers runs glass greenhouses split into bays, each logged by "
        "climate sensors and the crew's own records.",
        "Planning harvest labour needs an early read on every greenhouse bay.",
    ),
    "soil-moisture": (
        "An agricultural research station runs buried probes across its fields; every reading "
        "arrives with the probe's own health data.",
        "Field technicians cannot visit every probe, so readings are screened remotely.",
    ),
    "loan-desk": (
        "A microfinance lender reviews small loan applications at its branch desks.",
        "Loan officers want a second opinion on each application before it goes to committee.",
    ),
    "ferry-ops": (
        "A coastal ferry operator runs dozens of crossings a day in changing sea conditions.",
        "Passengers and freight customers want to know early how a crossing will go.",
    ),
    "alloy-lab": (
        "A metallurgy lab casts and heat-treats small alloy batches and measures every sample.",
        "Testing every alloy sample destructively is slow; the lab wants to screen them first.",
    ),
    "parcel-route": (
        "A regional courier tracks every parcel delivery from depot to doorstep.",
        "Dispatchers want to plan around parcels whose delivery will go badly.",
    ),
    "support-tickets": (
        "A software company receives support tickets written by its customers in their own words.",
        "The help desk wants incoming tickets sent to the right team without a person reading "
        "each one first.",
    ),
    "field-notes": (
        "Park rangers write short notes after every patrol.",
        "A national park collects its rangers' notes and wants them sorted for follow-up.",
    ),
    "recipe-reviews": (
        "A cooking website collects reviews that home cooks write after trying a recipe.",
        "Recipe editors want reviews sorted so that problems reach them quickly.",
    ),
    "ship-logs": (
        "Merchant vessels keep a log; each entry is a few lines written by the officer on watch.",
        "A shipping line digitised its vessels' logs and wants every entry filed.",
    ),
    "lab-notebook": (
        "Research groups keep electronic lab notebooks, one entry per experiment session.",
        "A research institute wants its lab notebook entries sorted for review.",
    ),
    "transit-feedback": (
        "A city transit authority receives messages from riders through its app.",
        "Rider messages pile up faster than the customer team can read them.",
    ),
    "road-damage": (
        "A city drives a camera car along its streets and cuts the footage into small patches.",
        "Street maintenance crews want road patches flagged from imagery alone.",
    ),
    "cell-tiles": (
        "A pathology lab scans slides and cuts the scans into small microscope tiles.",
        "Counting and typing cells by eye is slow; the lab wants help with every tile.",
    ),
    "sonar-frames": (
        "An oceanographic survey records sonar and renders it as small frames.",
        "Survey analysts want every sonar frame screened before they listen to the recordings.",
    ),
    "solar-panels": (
        "Drones fly over a solar farm and take a thermal image of every panel.",
        "The solar farm's operators want faults found without walking every row of panels.",
    ),
    "reef-hydrophones": (
        "Marine biologists moor hydrophones on a coral reef and cut the recordings into clips.",
        "A reef survey wants its hydrophone clips screened before anyone listens to them.",
    ),
    "canopy-recorders": (
        "Autonomous recorders hang in a forest canopy and record a short clip every few minutes.",
        "A biodiversity survey wants to know which birds sing in each recorder clip.",
    ),
    "bat-detectors": (
        "Ultrasonic detectors along hedgerows record a clip whenever something passes.",
        "Ecologists want bat detector clips sorted without listening to each one.",
    ),
    "pump-acoustics": (
        "A water utility records the sound of its pumps to catch wear before a breakdown.",
        "Maintenance planners want every pump recording checked for signs of trouble.",
    ),
    "pond-chorus": (
        "Volunteers leave recorders by ponds at night to follow frog populations.",
        "A conservation group wants its pond clips sorted by what can be heard in them.",
    ),
    "kiosk-sales": (
        "A chain of street kiosks records its sales at the end of every day.",
        "Kiosk managers order stock a couple of weeks ahead.",
    ),
    "pump-load": (
        "A water utility meters the energy used by each of its pumping stations every day.",
        "The utility buys electricity ahead of time, so it needs each pump's load in advance.",
    ),
    "library-visits": (
        "A city's public library branches count their visitors every day.",
        "Branch managers plan staffing from expected visitor numbers.",
    ),
    "clinic-calls": (
        "A network of clinics logs how many calls its front desks take each day.",
        "Clinic managers staff the phones from expected call volume.",
    ),
    "bakery-output": (
        "A group of bakeries records how many loaves each one bakes every day.",
        "Bakers plan flour orders and shifts from expected output.",
    ),
}
STORIES.update(
    {
        "archive-scans": (
            "A city archive is scanning its paper holdings page by page, and many scans came out "
            "dirty or faded.",
            "Archivists want readable copies of every scanned page without retouching each by hand.",
        ),
        "receipt-restoration": (
            "An expense-audit team keeps scans of paper receipts, many of them faded or soiled.",
            "Auditors need clean receipt scans before the text can be read reliably.",
        ),
        "ledger-pages": (
            "A historical society scanned old printed ledgers, page by page.",
            "Researchers want clean ledger pages to read the entries.",
        ),
        "microfilm-frames": (
            "A library is digitising its microfilm, one small frame at a time.",
            "Microfilm frames come off the reader hard to read; readers want them clean.",
        ),
        "field-forms": (
            "Survey crews fill in paper forms in the field; the forms are scanned back at the office.",
            "Forms scanned after a day outdoors are hard to read; the office wants clean copies.",
        ),
        "radio-scripts": (
            "A radio station feeds its news scripts to a speech synthesiser before broadcast.",
            "Presenters' scripts are full of figures that a synthesiser must read out correctly.",
        ),
        "audiobook-lines": (
            "An audiobook studio prepares book text for synthetic narration.",
            "Narration software must say every written token the way a reader would.",
        ),
        "caption-feeds": (
            "A broadcaster aligns live captions with the spoken audio of its programmes.",
            "Caption text is written; aligning it with speech needs the spoken form of every token.",
        ),
        "voice-assistant": (
            "A voice assistant speaks its answers from written prompts.",
            "Prompts mix words with figures and abbreviations that the assistant has to say aloud.",
        ),
        "transit-announcements": (
            "A transit operator generates its station announcements from written text.",
            "Announcement text is full of times, numbers and abbreviations read out to passengers.",
        ),
    }
)
GENERIC_STORIES = (
    "This competition is about {title_lower}: each record describes one {entity}.",
    "The data come from an organisation that handles many a {entity} and wants to act on "
    "each one sooner.",
    "Every {entity} in this competition was recorded by the people who handle them day to day.",
)

# Units of tabular columns by name, then by suffix; a description states them, not the rule.
UNITS = {
    "temp_k": "kelvin",
    "traffic_aadt": "vehicles per day (annual average)",
    "ph": "pH",
    "ndvi": "vegetation index, -1 to 1",
    "lux_mean": "lux",
    "humidity": "percent relative humidity",
    "night_temp": "degrees Celsius",
    "day_temp": "degrees Celsius",
    "elevation": "metres above sea level",
    "leaf_area": "square metres",
    "density": "grams per cubic centimetre",
    "porosity": "share of volume, 0 to 1",
    "cooling_rate": "degrees Celsius per second",
    "ec_ms": "millisiemens per centimetre",
    "hardness_hv": "Vickers hardness",
    "loan_amount": "currency units",
    "term": "months",
    "age": "years",
    "deck_age": "years",
    "hull_age": "years",
    "substrate_age": "days",
    "berth_wait": "minutes",
    "probe_drift": "percentage points",
    "rebar_cover": "millimetres",
    "branch_distance": "kilometres",
    "days_since_service": "days",
    "rating": "score, unitless",
}
SUFFIX_UNITS = (
    ("_kmh", "kilometres per hour"),
    ("_km", "kilometres"),
    ("_mm", "millimetres"),
    ("_cm", "centimetres"),
    ("_um", "micrometres"),
    ("_m", "metres"),
    ("_kg", "kilograms"),
    ("_t", "tonnes"),
    ("_l", "litres"),
    ("_pct", "percent"),
    ("_hz", "hertz"),
    ("_kn", "knots"),
    ("_s", "seconds"),
    ("_ppm", "parts per million"),
    ("_db", "decibels"),
    ("_v", "volts"),
    ("_deg", "degrees"),
    ("_c", "degrees Celsius"),
    ("_k", "thousands of currency units"),
    ("_months", "months"),
    ("_years", "years"),
    ("_hours", "hours"),
    ("_index", "index, unitless"),
    ("_score", "score, unitless"),
    ("_density", "per square metre"),
    ("_exposure", "share, 0 to 1"),
)
FILE_KINDS = {
    ".png": "grayscale PNG image",
    ".wav": "WAV audio recording",
    ".npy": "NumPy array",
    ".txt": "plain-text file",
}


@dataclass(frozen=True)
class Specifics:
    """What a task type with its own files says exactly; each tuple holds phrasings to draw from."""

    row: str
    """What one row of the CSVs is, e.g. "one pixel of a page"."""
    task: tuple[str, ...]
    """What to predict, as the object of "Predict ..."."""
    sizes: tuple[str, ...]
    """How much training and test data there is, as full sentences."""
    files: tuple[tuple[str, tuple[str, ...]], ...]
    """Every public file or folder (``train/``), in order, with phrasings of what it holds;
    a CSV's columns are appended by the writer."""
    columns: tuple[tuple[str, str], ...]
    """Every CSV column with its meaning."""
    id_scheme: str
    value_kind: str
    metric_text: str
    notes: tuple[str, ...]
    """Notes true of this task type (rows are not independent here)."""


class Description(BaseModel):
    """The Technical Writer's output."""

    model_config = ConfigDict(extra="forbid")

    markdown: str
    """The full text of description.md."""


@dataclass(frozen=True)
class Facts:
    """What every description states exactly, whatever its wording."""

    metric: str
    metric_text: str
    direction: str
    id_column: str
    id_scheme: str
    id_example: str
    submission_columns: list[str]
    value_kind: str
    example: str
    n_test: int

    @classmethod
    def of(cls, bp: Blueprint, sample: pd.DataFrame, spec: Specifics | None = None) -> Facts:
        lower = get_metric(bp.dna.metric).lower_is_better
        kind = {"prob": "a probability", "label": "a label", "value": "a number"}
        metric_text = METRIC_TEXT.get(bp.dna.metric, bp.dna.metric.replace("_", " "))
        if bp.dna.metric.startswith("map_at_"):  # a ranking: say what a cell holds and how
            k = int(bp.dna.metric.rsplit("_", 1)[1])
            kind["ranked"] = f"up to {k} item ids separated by single spaces, most likely first"
            metric_text = (
                f"mean average precision at {k} (MAP@{k}): per row, the precision at each rank "
                f"where a listed id is one the row really took, summed and divided by the "
                f"smaller of {k} and the number taken, then averaged over rows"
            )
        return cls(
            metric=bp.dna.metric,
            metric_text=spec.metric_text if spec else metric_text,
            direction="lower is better" if lower else "higher is better",
            id_column=bp.domain.id_column,
            id_scheme=spec.id_scheme
            if spec
            else ID_SCHEMES.get(bp.dna.id_scheme, "unique strings"),
            id_example=str(sample.iloc[0, 0]) if len(sample) else "",
            submission_columns=[str(c) for c in sample.columns],
            value_kind=spec.value_kind if spec else kind.get(bp.dna.target_kind, "a value"),
            example=sample.head(3).to_csv(index=False, lineterminator="\n", float_format="%.6g"),
            n_test=len(sample),
        )


class _Draft:
    """One rendering: the task's data plus the writer's random stream."""

    def __init__(
        self,
        bp: Blueprint,
        task: DevelopedTask,
        sample: pd.DataFrame,
        rng: np.random.Generator,
        spec: Specifics | None = None,
    ) -> None:
        self.bp, self.task, self.sample, self.rng, self.spec = bp, task, sample, rng, spec
        self.facts = Facts.of(bp, sample, spec)
        self.layout = LAYOUTS[int(rng.integers(len(LAYOUTS)))]

    def pick(self, options: tuple[str, ...] | list[str]) -> str:
        return options[int(self.rng.integers(len(options)))]

    def markdown(self) -> str:
        renderers: dict[str, Callable[[], str]] = {
            "intro": self._intro,
            "task": self._task,
            "data": self._data,
            "columns": lambda: "\n".join(self._column_lines("bullets")),
            "evaluation": self._evaluation,
            "submission": self._submission,
            "notes": self._notes,
        }
        parts = [f"# {self.bp.domain.title}"]
        for kind in self.layout:
            parts.append(f"## {self.pick(HEADINGS[kind])}\n\n{renderers[kind]()}")
        return "\n\n".join(parts) + "\n"

    def _intro(self) -> str:
        d = self.bp.domain
        own = STORIES.get(d.slug, ())
        generic = tuple(
            s.format(title_lower=d.title.lower(), entity=d.entity) for s in GENERIC_STORIES
        )
        story = self.pick(own + generic if own else generic)
        if self.spec:
            unit = self.spec.row
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
        row = self.pick(rows)
        sentences = [story, row]
        if "task" not in self.layout:
            sentences.append(self._task())
        return " ".join(sentences)

    def _task(self) -> str:
        if self.spec:
            lead = self.pick(("Predict", "Your job is to predict", "The goal is to predict"))
            return f"{lead} {self.pick(self.spec.task)}. {self.pick(self.spec.sizes)}"
        bp, d = self.bp, self.bp.domain
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
        sizes = self.pick(
            (
                f"You get {bp.n_train} training rows with known outcomes and {bp.n_test} test "
                "rows whose outcomes are hidden.",
                f"The training set has {bp.n_train} rows with known outcomes; the test set has "
                f"{bp.n_test} rows whose outcomes are hidden.",
                f"Outcomes are known for the {bp.n_train} training rows and hidden for the "
                f"{bp.n_test} test rows.",
            )
        )
        lead = self.pick(("Predict", "Your job is to predict", "The goal is to predict"))
        return f"{lead} {what}. {sizes}"

    def _data(self) -> str:
        entries = self._file_entries()
        head = 3 if self.spec is None else len(entries)  # a task type's files: any order
        order = [entries[i] for i in self.rng.permutation(head)] + entries[head:]
        lead = self.pick(
            (
                "The folder holds these files:",
                "You get these files:",
                "Files:",
                "Everything you need is in the data folder:",
            )
        )
        lines = [lead, "", *order]
        if self.bp.dna.modality == "tabular":
            lines += [
                "",
                self.pick(
                    (
                        "Some feature values are missing or corrupted, as in real data.",
                        "As in any real log, a few values are missing or were recorded wrongly.",
                        "Expect gaps and a few implausible readings among the feature values.",
                    )
                ),
            ]
        if "columns" not in self.layout:
            lines += ["", *self._column_lines("table")]
        return "\n".join(lines)

    def _file_entries(self) -> list[str]:
        if self.spec:
            frames = {"train.csv": self.task.train, "test.csv": self.task.test}
            frames["sample_submission.csv"] = self.sample
            entries = []
            for name, options in self.spec.files:
                columns = f" Columns: {_cols(frames[name])}." if name in frames else ""
                entries.append(f"- `{name}`: {self.pick(options)}.{columns}")
            return entries
        bp, task, d = self.bp, self.task, self.bp.domain
        held_out = ", ".join(tg.train_label_columns(bp))
        train = self.pick(
            (
                f"{len(task.train)} rows, one per {d.entity}, with outcomes",
                f"the training data: {len(task.train)} rows, one per {d.entity}",
                f"{len(task.train)} labelled rows (one {d.entity} each)",
            )
        )
        test = self.pick(
            (
                f"{len(task.test)} rows, the same without {held_out}",
                f"the {len(task.test)} rows to predict; no {held_out}",
                f"test data: {len(task.test)} rows without {held_out}",
            )
        )
        sample = self.pick(
            (
                "a valid submission in the right format",
                "a correctly formatted submission with a constant guess",
                "the submission format, filled with a constant guess",
            )
        )
        entries = [
            f"- `train.csv`: {train}. Columns: {_cols(task.train)}.",
            f"- `test.csv`: {test}. Columns: {_cols(task.test)}.",
            f"- `sample_submission.csv`: {sample}. Columns: {_cols(self.sample)}.",
        ]
        return entries + _extra_entries(bp, task)

    def _column_lines(self, style: str) -> list[str]:
        rows = self._column_rows()
        if style == "table":
            lead = self.pick(("What the columns hold:", "Column meanings and units:"))
            body = ["| column | meaning |", "| --- | --- |"]
            return [lead, "", *body, *(f"| `{c}` | {m} |" for c, m in rows)]
        return [f"- `{c}`: {m}." for c, m in rows]

    def _column_rows(self) -> list[tuple[str, str]]:
        if self.spec:
            return list(self.spec.columns)
        bp, d = self.bp, self.bp.domain
        labels = set(tg.train_label_columns(bp))
        rows = [(d.id_column, f"row id ({self.facts.id_scheme})")]
        for column in self.task.train.columns:
            name = str(column)
            if name == d.id_column:
                continue
            if name in labels:
                rows.append((name, self._label_meaning(name)))
            else:
                rows.append((name, self._feature_meaning(name)))
        return rows

    def _label_meaning(self, name: str) -> str:
        d = self.bp.domain
        if self.bp.dna.task_type in ("regression", "forecasting"):
            unit = f"in {d.unit}" if d.unit and d.unit != name else "a count"
            return f"the outcome, {unit} (train only)"
        if self.bp.dna.task_type == "binary":
            return f"1 if the {d.entity} is {d.class_names[-1]}, else 0 (train only)"
        if self.bp.dna.task_type == "multilabel":
            return f"1 if the label {name} applies, else 0 (train only)"
        if self.bp.dna.ordinal:
            return f"the grade, 0 to {self.bp.dna.n_outputs - 1} (train only)"
        if self.bp.dna.task_type == "multiclass":
            return "the class (train only)"
        return "the target (train only)"

    def _feature_meaning(self, name: str) -> str:
        d = self.bp.domain
        if name == d.text_column:
            return f"the text of the {d.entity}, as written"
        if name == d.series_column:
            return f"which {d.series_column} the row belongs to"
        if self.bp.dna.modality == "time-series":
            if name == d.feature_columns[0]:
                return "day number within the series, counted from 0"
            return f"1 on days with a {name.replace('_', ' ')}, else 0"
        if not pd.api.types.is_numeric_dtype(self.task.train[name]):
            return "a categorical code"
        return f"numeric reading, {_unit(name)}"

    def _evaluation(self) -> str:
        f = self.facts
        how = self.pick(
            (
                f"Submissions are scored with `{f.metric}`, the {f.metric_text} ({f.direction}).",
                f"The metric is `{f.metric}`: the {f.metric_text} ({f.direction}).",
                f"We compute the {f.metric_text} on the test set; the metric's name is "
                f"`{f.metric}` ({f.direction}).",
            )
        )
        medals = self.pick(
            (
                "Medal lines are set from reference models' scores.",
                "Gold, silver and bronze lines come from the scores of reference models.",
                "",
            )
        )
        return f"{how} {medals}".strip()

    def _submission(self) -> str:
        f = self.facts
        columns = ", ".join(f"`{c}`" for c in f.submission_columns)
        targets = ", ".join(f"`{c}`" for c in f.submission_columns[1:])
        ids = f"Ids in `{f.id_column}` are {f.id_scheme}, e.g. `{f.id_example}`."
        body = self.pick(
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
        lead = self.pick(("For example:", "Its first rows look like this:", "A valid start:"))
        return f"{body} {ids} {lead}\n\n```\n{f.example}```"

    def _notes(self) -> str:
        notes = [
            "Only the files listed here may be used; there is no external data.",
            "The score on the test rows is final; there is no separate public leaderboard.",
            "A file that does not match `sample_submission.csv`'s columns and ids is not scored.",
            "Rows can be processed independently; nothing links one row to another except "
            "shared column values."
            if self.bp.dna.modality != "time-series"
            else "Rows of one series are consecutive days; the test rows continue each series.",
        ]
        if self.spec:
            notes = [*notes[:3], *self.spec.notes]
        chosen = [notes[i] for i in sorted(self.rng.choice(len(notes), 2, replace=False))]
        return "\n".join(f"* {n}" for n in chosen)


def write_description(bp: Blueprint, task: DevelopedTask, sample: pd.DataFrame) -> Description:
    """A description drawn from the writer's stream; a draft naming a rule word is redrawn."""
    from sandmle.benchmarks.synthetic.modalities import hook

    rng = role_rng(bp.entropy, WRITER_ROLE)
    public = public_names(bp, task, sample)
    own = hook(bp.dna.modality, bp.dna.task_type, "description_specifics")
    spec = own(bp, task, sample) if own is not None else None
    markdown = ""
    for _ in range(MAX_DRAFTS):
        markdown = _Draft(bp, task, sample, rng, spec).markdown()
        if not description_leaks(markdown, task.rule.model_dump(), public):
            break
    return Description(markdown=markdown)


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


def _extra_entries(bp: Blueprint, task: DevelopedTask) -> list[str]:
    """One bullet per extra top-level folder or file (images, recordings, ...)."""
    entries = []
    folders: dict[str, set[str]] = {}
    for name in sorted(task.files):
        head, _, rest = name.partition("/")
        if rest:
            folders.setdefault(head, set()).add("." + rest.rsplit(".", 1)[-1].lower())
        else:
            entries.append(f"- `{name}`: an extra public file.")
    for folder, suffixes in sorted(folders.items()):
        suffix = sorted(suffixes)[0]
        kind = FILE_KINDS.get(suffix, f"{suffix} file")
        if suffix == ".wav" and {"sample_rate", "seconds"} <= set(bp.params):
            rate, seconds = int(bp.params["sample_rate"]), float(bp.params["seconds"])
            kind = f"mono {seconds:g} s {kind} sampled at {rate} Hz"
        if suffix == ".png" and "size" in bp.params:
            size = int(bp.params["size"])
            kind = f"{size}x{size} {kind}"
        entries.append(f"- `{folder}/`: one {kind} per row of train and test, named <id>{suffix}.")
    return entries


def _unit(name: str) -> str:
    if name in UNITS:
        return UNITS[name]
    for suffix, unit in SUFFIX_UNITS:
        if name.endswith(suffix):
            return unit
    return "a count" if name in _COUNTS else "unitless"


_COUNTS = {
    "passengers",
    "cars",
    "crew",
    "stops",
    "dependants",
    "prior_loans",
    "late_payments",
    "inspector_visits",
    "pollinators",
    "queue_len",
    "batch_size",
}


def _cols(frame: pd.DataFrame) -> str:
    return ", ".join(f"`{c}`" for c in frame.columns)
