"""``description.md`` of each micro replica: the task, its metric, its submission and its files.

Written for sandmle (MLE-bench's own descriptions are not copied): a few paragraphs per
competition on what is predicted and from what, a section on the metric, the submission format
shown from the replica's own sample submission, and the file list taken from the committed
manifest of what ``mlebench prepare`` writes. Long enough that an agent has to read it.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pandas as pd

from sandmle.benchmarks.mle_bench.competitions import LiteCompetition
from sandmle.benchmarks.mle_bench.replicas.manifest import Entry, load_manifest

OVERVIEWS: dict[str, str] = {
    "aerial-cactus-identification": (
        "Ecologists who survey protected desert areas want to know, from low-altitude aerial "
        "photographs, where columnar cacti grow. Each image is a small square tile cut from a "
        "larger drone photograph. Your model must look at a tile and say how likely it is that "
        "a cactus appears in it. The labels were produced by people marking the tiles by hand, "
        "so a few of them may be wrong, and the two classes are not balanced."
    ),
    "aptos2019-blindness-detection": (
        "Diabetic retinopathy damages the retina slowly and is a leading cause of blindness in "
        "working-age adults. Clinics in rural areas photograph the back of the eye (the fundus) "
        "and need a quick way to decide who should see a specialist. Each photograph has been "
        "graded by a clinician on a five-step scale, from 0 (no retinopathy) through mild, "
        "moderate and severe, to 4 (proliferative disease). Predict the grade of every test "
        "image. Photographs come from different cameras and vary in lighting and focus."
    ),
    "denoising-dirty-documents": (
        "Scanned pages of old documents are often stained, creased or faded, which makes text "
        "recognition unreliable. The goal is to clean such scans: given a noisy grey-scale page, "
        "produce the page as it would look without the noise. The training set pairs each dirty "
        "page with its clean version; the test pages come without their clean versions. Every "
        "pixel of every test page is predicted as an intensity between 0 (black) and 1 (white)."
    ),
    "detecting-insults-in-social-commentary": (
        "Online discussion forums want to flag comments that insult another participant of the "
        "conversation, as opposed to comments that are merely rude, that quote an insult, or "
        "that insult a public figure who is not taking part. Each row holds a comment (as an "
        "escaped, quoted string), the time it was posted when known, and in training a 0/1 "
        "label. Predict, for each test comment, a score that ranks insulting comments above "
        "the others."
    ),
    "dog-breed-identification": (
        "Telling dog breeds apart is a fine-grained recognition problem: many of the 120 breeds "
        "in this collection look alike, and photographs show dogs in every pose, background and "
        "lighting. The training labels give one breed per image. For every test image, give a "
        "probability for each of the 120 breeds; the probabilities of a row should sum to one."
    ),
    "dogs-vs-cats-redux-kernels-edition": (
        "A classic image task revisited: every photograph shows either a dog or a cat. The "
        "training file names say which (cat.N.jpg or dog.N.jpg); test images are simply "
        "numbered. For each test image, predict the probability that it shows a dog. Confident "
        "mistakes are punished hard by the metric, so well-calibrated probabilities matter as "
        "much as accuracy."
    ),
    "histopathologic-cancer-detection": (
        "Pathologists examine lymph-node sections under a microscope to find metastatic tissue. "
        "The images here are small patches cut from digital scans of such sections. A patch is "
        "labelled positive when its central region contains at least one pixel of tumour tissue; "
        "tissue at the border of the patch does not count towards the label. Predict, for every "
        "test patch, the probability that its centre contains tumour tissue."
    ),
    "jigsaw-toxic-comment-classification-challenge": (
        "Comments from online talk pages were rated by human raters for several kinds of toxic "
        "behaviour: general toxicity, severe toxicity, obscenity, threats, insults and hate "
        "against an identity. A comment can carry any number of these labels at once, or none. "
        "Predict a probability for each of the six labels for every test comment. Some test "
        "rows were not used in scoring because their labels were never released; they still "
        "need predictions."
    ),
    "leaf-classification": (
        "Botanists identify plant species from their leaves. For each leaf specimen this "
        "dataset gives a binary image of the leaf and three pre-computed feature vectors of 64 "
        "values each, describing its margin, its shape and its texture. There are 99 species "
        "with only a handful of specimens each. For every test specimen, give a probability "
        "for each species."
    ),
    "mlsp-2013-birds": (
        "Automatic recorders placed in a forest capture ten-second clips of sound; several bird "
        "species may call in the same clip. For 19 species, predict for every test recording "
        "how likely it is that the species is present. Besides the raw audio, the organisers "
        "provide spectrograms, segmentations of the spectrograms into sound events, and features "
        "of those segments. The labels of the training recordings are given in a text file, and "
        "test recordings are marked there with a question mark."
    ),
    "new-york-city-taxi-fare-prediction": (
        "Predict the fare of a taxi ride in New York City from where and when it started and "
        "ended and how many passengers rode. Each ride has a pickup timestamp, pickup and "
        "drop-off longitude and latitude, and a passenger count; some coordinates are missing or "
        "obviously wrong, and cleaning them is part of the task. The fare to predict is the "
        "amount in US dollars, tolls included and tip excluded."
    ),
    "nomad2018-predict-transparent-conductors": (
        "Transparent conducting materials combine electrical conductivity with transparency and "
        "are used in solar cells, displays and sensors. For candidate alloys of aluminium, "
        "gallium and indium oxides, predict two properties computed by quantum-mechanical "
        "simulation: the formation energy (an indication of stability) and the band gap (which "
        "decides transparency). Each material has tabular descriptors (space group, atom counts, "
        "composition, lattice vectors and angles) and a geometry file listing atom positions."
    ),
    "plant-pathology-2020-fgvc7": (
        "Apple orchards lose much of their harvest to foliar diseases, and scouting by eye is "
        "slow. Each photograph of an apple leaf belongs to exactly one of four categories: "
        "healthy, rust, scab, or several diseases at once. Predict a probability for each "
        "category for every test image. The pictures were taken in the field, so lighting, "
        "angle and background vary."
    ),
    "random-acts-of-pizza": (
        "On an online community people post requests asking strangers to buy them a pizza. "
        "Given the text of a request and facts about the requester at the time of posting (how "
        "old the account is, how active the person has been), predict whether the request was "
        "fulfilled. The training records also carry fields measured later, at retrieval time; "
        "the test records have only what was known when the request was made."
    ),
    "ranzcr-clip-catheter-line-classification": (
        "Patients in hospital often have tubes and lines placed: endotracheal tubes, nasogastric "
        "tubes, central venous catheters and Swan-Ganz catheters. A badly placed line can harm "
        "the patient, and chest X-rays are used to check placement. For every test radiograph, "
        "predict the probability of each placement finding. Several findings can be present in "
        "one image. Training images also come with annotations of the line positions."
    ),
    "siim-isic-melanoma-classification": (
        "Melanoma is the deadliest common skin cancer, and finding it early matters. Each image "
        "shows one skin lesion; the patient metadata gives sex, approximate age and where on the "
        "body the lesion is. Predict the probability that each test lesion is malignant. Images "
        "are provided as DICOM files, as JPEGs and as TFRecord shards, and several images may "
        "belong to the same patient."
    ),
    "spooky-author-identification": (
        "Short passages of text were taken from horror stories by three authors: Edgar Allan "
        "Poe (EAP), H. P. Lovecraft (HPL) and Mary Shelley (MWS). Each passage is usually one "
        "sentence. Predict, for every test passage, the probability that each of the three "
        "authors wrote it."
    ),
    "tabular-playground-series-dec-2021": (
        "A synthetic tabular dataset modelled on a forest cover-type survey: each row is a patch "
        "of land described by its elevation, aspect, slope, distances to water, roads and fire "
        "points, hill shade at three times of day, one of four wilderness areas and one of forty "
        "soil types. Predict the cover type, an integer class from 1 to 7. The data were "
        "generated by a model trained on real measurements, so relations are similar but noisier."
    ),
    "tabular-playground-series-may-2022": (
        "A synthetic binary classification problem about the state of a manufacturing control "
        "system. Each row has 31 features: continuous measurements, integer counts, and one "
        "ten-letter string feature whose characters carry information. Predict the probability "
        "that the target is 1. Interactions between features matter more than any single one."
    ),
    "text-normalization-challenge-english-language": (
        "Text-to-speech systems must say written tokens aloud, which means turning them into "
        "words first: '12' may become 'twelve', '£5' 'five pounds' and '1995' 'nineteen ninety "
        "five' or 'one nine nine five' depending on context. The training data gives sentences "
        "as sequences of tokens with their spoken forms. For each test token, predict its "
        "normalised form. Most tokens stay as they are, so the hard cases are the rare ones."
    ),
    "text-normalization-challenge-russian-language": (
        "The same problem as its English sibling, for Russian: written tokens (numbers, dates, "
        "measures, abbreviations, Latin-script words) must be turned into the words a speaker "
        "would say, in the right grammatical case. Training sentences come as token sequences "
        "with their spoken forms; predict the normalised form of every test token."
    ),
    "the-icml-2013-whale-challenge-right-whale-redux": (
        "North Atlantic right whales are endangered, and ships can avoid them when their calls "
        "are detected in time. Buoys record two-second audio clips; some contain the up-call of "
        "a right whale, most contain only ocean noise and ship sounds. The training clip names "
        "end in _1 for a call and _0 for none. Predict, for every test clip, the probability "
        "that it contains a right-whale up-call."
    ),
}

METRICS: dict[str, str] = {
    "roc_auc": (
        "Submissions are scored by the area under the ROC curve between the predicted scores and "
        "the true 0/1 labels. Only the order of the scores matters: any monotone rescaling gives "
        "the same result. 1.0 is perfect, 0.5 is what random scores get."
    ),
    "mean_columnwise_roc_auc": (
        "Each label column is scored by the area under its ROC curve, and the score is the mean "
        "over the columns. Only the order of the scores within a column matters. Higher is "
        "better; 1.0 is perfect."
    ),
    "quadratic_weighted_kappa": (
        "Submissions are scored by Cohen's kappa with quadratic weights between the predicted "
        "and the true grades: agreement beyond chance, where a prediction two grades away costs "
        "four times one a grade away. 1.0 is perfect agreement, 0 is chance level."
    ),
    "rmse": (
        "Submissions are scored by the root mean squared error between predicted and true "
        "values. Lower is better; large errors weigh more than small ones."
    ),
    "mean_columnwise_rmsle": (
        "Each target is scored by the root mean squared logarithmic error, the RMSE of "
        "log(1 + value), and the score is the mean over the two targets. Lower is better."
    ),
    "binary_log_loss": (
        "Submissions are scored by the log loss between the predicted probabilities and the "
        "true labels. Probabilities are clipped away from 0 and 1 before the logarithm, but a "
        "confident wrong answer still costs a lot. Lower is better."
    ),
    "multiclass_log_loss": (
        "Submissions are scored by the multi-class log loss: the mean, over rows, of minus the "
        "log of the probability given to the true class. Each row is rescaled to sum to one "
        "and probabilities are clipped away from 0 and 1 first. Lower is better."
    ),
    "accuracy": (
        "Submissions are scored by accuracy: the share of rows whose prediction equals the "
        "true value exactly. Higher is better."
    ),
}

MODALITY_NOTES: dict[str, str] = {
    "image": (
        "The images are ordinary files (JPEG, PNG, TIFF or DICOM) named by their id; open them "
        "with Pillow or any image library. Sizes and colour modes can vary from file to file, "
        "so resize and normalise them before feeding a model."
    ),
    "text": (
        "Text fields are UTF-8 and may contain quotes, commas, line breaks and escaped "
        "characters, so read the files with a real CSV or JSON parser rather than by splitting "
        "lines. Simple word or character n-gram features are a strong first baseline."
    ),
    "audio": (
        "Recordings are short clips (WAV or AIFF); read them with the standard library's wave "
        "or aifc modules, soundfile or scipy. Spectrogram features are the usual starting point."
    ),
    "tabular": (
        "Tables are plain CSV files with a header row. Check the column types, missing values "
        "and ranges before modelling; gradient-boosted trees and linear models are quick "
        "baselines."
    ),
}

PRACTICE = (
    "Hold out part of the training data to estimate your score before you submit, and compare "
    "against the sample submission, which is what a constant guess achieves."
)
ORDER = {
    True: "Keep the row set and ids of the test set exactly; the row order does not matter.",
    False: "Rows are matched by position: keep the sample submission's row order exactly.",
}

KIND_TEXT = {
    "csv": "a CSV table",
    "json": "a JSON list of records",
    "lines": "a comma-separated text file",
    "zip": "a zip archive",
    "file": "a supporting file",
}


def _entry_text(name: str, entry: Entry) -> str:
    if entry.kind == "dir":
        if entry.entries:
            inner = "; ".join(_entry_text(n, e) for n, e in entry.entries.items())
            return f"`{name}/`: a folder holding {inner}"
        if entry.empty:
            return f"`{name}/`: an empty folder"
        return f"`{name}/`: a folder of `{entry.files}` files"
    text = f"`{name}`: {KIND_TEXT.get(entry.kind, 'a file')}"
    if entry.columns:
        text += " with columns " + ", ".join(f"`{c}`" for c in entry.columns)
    elif entry.first_columns:
        text += f" of {entry.n_columns} columns starting with " + ", ".join(
            f"`{c}`" for c in entry.first_columns
        )
    if entry.members:
        text += f" of `{entry.members}`"
    return text


def _files_section(competition_id: str) -> list[str]:
    public = load_manifest()[competition_id].public
    lines = ["## Files", "", "Everything you get is in the data folder:", ""]
    lines += [f"- {_entry_text(n, e)}" for n, e in public.items() if e.kind != "description"]
    return lines


def _public_sample(public: Path, sample_name: str) -> tuple[str, pd.DataFrame]:
    """The public sample submission's name and first rows (read from its zip if zipped)."""
    path = public / sample_name
    if not path.is_file():
        (path,) = public.glob(f"*{Path(sample_name).stem}*.zip")
        with zipfile.ZipFile(path) as archive:
            (member,) = archive.namelist()
            with archive.open(member) as handle:
                return member, pd.read_csv(handle, nrows=3)
    return path.name, pd.read_csv(path, nrows=3)


def _submission_section(name: str, frame: pd.DataFrame) -> list[str]:
    shown = frame.to_csv(index=False, lineterminator="\n").strip()
    return [
        "## Submission",
        "",
        f"Write a CSV with the same header, row set and ids as `{name}` (one row per "
        "test item) and put it at the submission path you were given. The first lines of the "
        "sample submission, which scores like a constant guess, look like this:",
        "",
        "```",
        shown,
        "```",
        "",
        "A submission with missing or extra ids, a different header or values outside the "
        "allowed range is not graded at all.",
    ]


def _targets_section(lite: LiteCompetition) -> list[str]:
    ids = ", ".join(f"`{c}`" for c in lite.id_columns) or "its position (no id column)"
    targets = list(lite.target_columns)
    shown = ", ".join(f"`{c}`" for c in targets[:6]) + (
        f" and {len(targets) - 6} more" if len(targets) > 6 else ""
    )
    return [
        "## What to predict",
        "",
        f"This is a {lite.task_type.replace('-', ' ')} task on {lite.modality} data. Each "
        f"submission row is identified by {ids}, and you predict {len(targets)} "
        f"column{'s' if len(targets) > 1 else ''}: {shown}.",
        "",
        MODALITY_NOTES.get(lite.modality, ""),
        "",
        f"{PRACTICE} {ORDER[bool(lite.id_columns)]}",
    ]


def replica_description(lite: LiteCompetition, public: Path) -> str:
    """The ``description.md`` text of one replica whose public files are in ``public``."""
    direction = "lower" if lite.is_lower_better else "higher"
    lines = [
        f"# {lite.name}",
        "",
        "## Overview",
        "",
        OVERVIEWS[lite.id],
        "",
        *_targets_section(lite),
        "",
        "## Evaluation",
        "",
        METRICS[lite.metric],
        f"The leaderboard ranks {direction} scores first; medals follow MLE-bench's thresholds.",
        "",
        *_submission_section(*_public_sample(public, Path(lite.sample_submission).name)),
        "",
        *_files_section(lite.id),
        "",
        "## About this copy",
        "",
        f"This is a micro replica of the Kaggle competition `{lite.id}` as MLE-bench prepares "
        "it: the same files, folders, columns, id formats and submission format, filled with a "
        "few dozen rows of synthetic data. It exists to test agents and tooling end to end "
        "without downloading the real data; scores on it say nothing about skill on the real "
        "competition.",
    ]
    return "\n".join(lines) + "\n"
