"""The Technical Writer's phrase tables: section layouts and headings, metric and id wording,
the framing story of each domain pool, and the units and kinds named in the column guide.

Data only; :mod:`.writer` draws from these with its own random stream.
"""

from __future__ import annotations

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


COUNTS = {
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
"""Columns whose readings are counts of things (their unit is "a count")."""
