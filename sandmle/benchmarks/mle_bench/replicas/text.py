"""Micro replicas of the text competitions (grading spec §3.4, 3.8, 3.14, 3.17, 3.20, 3.21).

Sentences are drawn from the synthetic generator's filler vocabulary; a class's keyword makes
the label learnable, as in the generator's text tasks.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from sandmle.benchmarks.mle_bench.replicas.files import (
    ReplicaDir,
    both_classes,
    csv_bytes,
    hex_ids,
    json_bytes,
    one_hot,
    write_bytes,
    write_csv,
    write_zip,
)
from sandmle.benchmarks.synthetic.modalities.text import FILLER

N_TRAIN = 40
N_TEST = 30
JIGSAW_LABELS = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]
SPOOKY = {"EAP": 0.403493538995863, "HPL": 0.287808366106543, "MWS": 0.308698094897594}


def sentence(rng: np.random.Generator, keyword: str = "") -> str:
    words = [str(w) for w in rng.choice(FILLER, int(rng.integers(5, 12)))]
    if keyword:
        words.insert(int(rng.integers(0, len(words))), keyword)
    return " ".join(words).capitalize() + "."


def detecting_insults(r: ReplicaDir) -> None:
    """§3.4: the quoted comment text is the id; Date may be empty; answers carry Usage."""
    n = N_TRAIN + N_TEST
    y = both_classes(r.rng, n, 0.3)
    comments = [f'"{sentence(r.rng, "idiot" if v else "")} ({k})"' for k, v in enumerate(y)]
    dates = [
        ""
        if r.rng.random() < 0.2
        else f"201206{r.rng.integers(10, 29)}1921{r.rng.integers(10, 59)}Z"
        for _ in range(n)
    ]
    frame = pd.DataFrame({"Insult": y, "Date": dates, "Comment": comments})
    train, test = frame[:N_TRAIN], frame[N_TRAIN:].reset_index(drop=True)
    write_csv(r.public / "train.csv", train)
    write_csv(r.public / "test.csv", test[["Date", "Comment"]])
    write_csv(r.public / "sample_submission_null.csv", test.assign(Insult=0))
    usage = np.where(np.arange(N_TEST) % 3 == 0, "PublicTest", "PrivateTest")
    write_csv(r.private / "test.csv", test.assign(Usage=usage))
    write_csv(r.private / "gold_submission.csv", test)


def jigsaw(r: ReplicaDir) -> None:
    """§3.8: 16-hex ids, six labels; unscored test rows are -1 in all six."""
    n = N_TRAIN + N_TEST
    ids = hex_ids(r.rng, n, 16)
    labels = {name: both_classes(r.rng, n, 0.3) for name in JIGSAW_LABELS}
    texts = [sentence(r.rng, "stupid" if labels["toxic"][k] else "") for k in range(n)]
    frame = pd.DataFrame({"id": ids, "comment_text": texts, **labels})
    train, test = frame[:N_TRAIN], frame[N_TRAIN:].reset_index(drop=True)
    answers = test[["id", *JIGSAW_LABELS]].copy()
    unscored = np.arange(N_TEST) >= N_TEST - 6  # the last rows Kaggle never scored
    answers.loc[unscored, JIGSAW_LABELS] = -1
    for name in JIGSAW_LABELS:  # both classes among the scored rows
        answers.loc[0, name], answers.loc[1, name] = 1, 0
    write_csv(r.public / "train.csv", train)
    write_csv(r.public / "test.csv", test[["id", "comment_text"]])
    write_csv(
        r.public / "sample_submission.csv", test[["id"]].assign(**dict.fromkeys(JIGSAW_LABELS, 0.5))
    )
    write_csv(r.private / "test.csv", answers)


def random_acts_of_pizza(r: ReplicaDir) -> None:
    """§3.14: train/test JSON (4-space indent) and the same in zips; t3_ request ids."""
    n = N_TRAIN + N_TEST
    ids = [f"t3_{h}" for h in hex_ids(r.rng, n, 6)]
    y = both_classes(r.rng, n, 0.25)
    requests = [_pizza_request(r.rng, ids[k], bool(y[k])) for k in range(n)]
    train = requests[:N_TRAIN]
    test = [{k: v for k, v in req.items() if k in PIZZA_TEST_FIELDS} for req in requests[N_TRAIN:]]
    for name, data in (("train", train), ("test", test)):
        write_bytes(r.public / f"{name}.json", json_bytes(data))
        write_zip(r.public / f"{name}.zip", {f"{name}.json": json_bytes(data)})
    answers = pd.DataFrame({"request_id": ids[N_TRAIN:], "requester_received_pizza": y[N_TRAIN:]})
    write_csv(r.public / "sampleSubmission.csv", answers.assign(requester_received_pizza=0))
    write_csv(r.private / "test.csv", answers)


PIZZA_TEST_FIELDS = (
    "giver_username_if_known",
    "request_id",
    "request_text_edit_aware",
    "request_title",
    "requester_account_age_in_days_at_request",
    "requester_days_since_first_post_on_raop_at_request",
    "requester_number_of_comments_at_request",
    "requester_number_of_comments_in_raop_at_request",
    "requester_number_of_posts_at_request",
    "requester_number_of_posts_on_raop_at_request",
    "requester_number_of_subreddits_at_request",
    "requester_subreddits_at_request",
    "requester_upvotes_minus_downvotes_at_request",
    "requester_upvotes_plus_downvotes_at_request",
    "requester_username",
    "unix_timestamp_of_request",
    "unix_timestamp_of_request_utc",
)
"""The 17 fields Kaggle's test.json has; MLE-bench keeps exactly these for its test split."""
PIZZA_COUNTS = (
    "number_of_downvotes_of_request_at_retrieval",
    "number_of_upvotes_of_request_at_retrieval",
    "request_number_of_comments_at_retrieval",
    "requester_number_of_comments_at_request",
    "requester_number_of_comments_at_retrieval",
    "requester_number_of_comments_in_raop_at_request",
    "requester_number_of_comments_in_raop_at_retrieval",
    "requester_number_of_posts_at_request",
    "requester_number_of_posts_at_retrieval",
    "requester_number_of_posts_on_raop_at_request",
    "requester_number_of_posts_on_raop_at_retrieval",
    "requester_number_of_subreddits_at_request",
    "requester_upvotes_minus_downvotes_at_request",
    "requester_upvotes_minus_downvotes_at_retrieval",
    "requester_upvotes_plus_downvotes_at_request",
    "requester_upvotes_plus_downvotes_at_retrieval",
)
PIZZA_AGES = (
    "requester_account_age_in_days_at_request",
    "requester_account_age_in_days_at_retrieval",
    "requester_days_since_first_post_on_raop_at_request",
    "requester_days_since_first_post_on_raop_at_retrieval",
)
SUBREDDITS = ("AskReddit", "pics", "funny", "Random_Acts_Of_Pizza", "gaming", "food")


def _pizza_request(rng: np.random.Generator, request_id: str, received: bool) -> dict:
    """One request with the 32 fields of Kaggle's train.json (sorted, as json.dump keeps them)."""
    text = sentence(rng, "grateful" if received else "")
    stamp = float(1.3e9 + int(rng.integers(0, 10**7)))
    picked = rng.choice(len(SUBREDDITS), int(rng.integers(0, 4)), replace=False)
    request = {
        "giver_username_if_known": "N/A",
        "post_was_edited": bool(rng.random() < 0.1),
        "request_id": request_id,
        "request_text": text,
        "request_text_edit_aware": text,
        "request_title": "[REQUEST] " + sentence(rng),
        "requester_received_pizza": received,
        "requester_subreddits_at_request": [SUBREDDITS[k] for k in sorted(picked)],
        "requester_user_flair": "shroom" if received else None,
        "requester_username": f"user_{request_id[3:]}",
        "unix_timestamp_of_request": stamp,
        "unix_timestamp_of_request_utc": stamp - 3600,
    }
    request |= {name: int(rng.integers(0, 50)) for name in PIZZA_COUNTS}
    request |= {name: round(float(rng.uniform(0, 900)), 4) for name in PIZZA_AGES}
    return dict(sorted(request.items()))


def spooky(r: ReplicaDir) -> None:
    """§3.17: id<digits> ids, three authors, the fixed prior as the sample submission."""
    n = N_TRAIN + N_TEST
    ids = [f"id{v:05d}" for v in r.rng.choice(10**5, n, replace=False)]
    authors = list(SPOOKY)
    hot = one_hot(r.rng, n, 3, 6)
    author = [authors[k] for k in hot.argmax(axis=1)]
    texts = [
        sentence(r.rng, {"EAP": "raven", "HPL": "eldritch", "MWS": "creature"}[a]) for a in author
    ]
    write_csv(
        r.public / "train.csv", pd.DataFrame({"id": ids, "text": texts, "author": author})[:N_TRAIN]
    )
    test = pd.DataFrame({"id": ids[N_TRAIN:], "text": texts[N_TRAIN:]})
    write_csv(r.public / "test.csv", test)
    write_csv(r.public / "sample_submission.csv", test[["id"]].assign(**SPOOKY))
    answers = pd.DataFrame(hot[N_TRAIN:], columns=authors).assign(id=ids[N_TRAIN:])
    write_csv(r.private / "test.csv", answers[["id", *authors]])


TOKENS = {
    "en": [
        ("PLAIN", "hello", "hello"),
        ("PLAIN", "world", "world"),
        ("CARDINAL", "12", "twelve"),
        ("ABBR", "Dr.", "doctor"),
        ("MONEY", "£5", "five pounds"),
        ("PUNCT", ".", "."),
    ],
    "ru": [
        ("PLAIN", "привет", "привет"),
        ("PLAIN", "мир", "мир"),
        ("CARDINAL", "12", "двенадцать"),
        ("ABBR", "г.", "года"),
        ("MONEY", "5 руб.", "пять рублей"),
        ("PUNCT", ".", "."),
    ],
}


def text_normalization(lang: str) -> Callable[[ReplicaDir], None]:
    """§3.20/§3.21: zipped quoted CSVs in public; answers and the sample submission in private."""

    def build(r: ReplicaDir) -> None:
        train, test = _token_table(r, lang, 12), _token_table(r, lang, 8)
        write_zip(
            r.public / f"{lang}_train.csv.zip",
            {f"{lang}_train.csv": csv_bytes(train, quote_text=True)},
        )
        public_test = test[["sentence_id", "token_id", "before"]]
        write_zip(
            r.public / f"{lang}_test_2.csv.zip",
            {f"{lang}_test_2.csv": csv_bytes(public_test, quote_text=True)},
        )
        ids = test["sentence_id"].astype(str) + "_" + test["token_id"].astype(str)
        sample = pd.DataFrame({"id": ids, "after": test["before"]})
        name = f"{lang}_sample_submission_2.csv"
        write_zip(r.public / f"{name}.zip", {name: csv_bytes(sample, quote_text=True)})
        answers = pd.DataFrame({"id": ids, "after": test["after"]})
        write_csv(r.private / "answers.csv", answers, quote_text=True)
        write_csv(r.private / "sample_submission.csv", sample, quote_text=True)

    return build


def _token_table(r: ReplicaDir, lang: str, sentences: int) -> pd.DataFrame:
    """Tokens of ``sentences`` sentences, sentence ids renumbered from 0, token ids kept."""
    rows = []
    for sid in range(sentences):
        for tid in range(int(r.rng.integers(2, 6))):
            kind, before, after = TOKENS[lang][int(r.rng.integers(0, len(TOKENS[lang])))]
            rows.append((sid, tid, kind, before, after))
    return pd.DataFrame(rows, columns=["sentence_id", "token_id", "class", "before", "after"])
