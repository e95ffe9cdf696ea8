"""Answer leaks: answer columns or their values reachable from the public files, and
descriptions that state the hidden rule."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pandas as pd

from sandmle.benchmarks.synthetic import targets as tg
from sandmle.benchmarks.synthetic.task_files import BLUEPRINT_FILE, RULE_FILE, load_blueprint
from sandmle.harness.competition import Competition

MIN_ROWS = 10  # below this, a column can match the answers by chance


def find_leaks(competition: Competition) -> list[str]:
    public, answers_path = competition.public_dir, competition.answers_path
    answers = pd.read_csv(answers_path)
    reasons = _leaked_names(competition)
    answer_bytes = answers_path.read_bytes()
    for path in sorted(public.rglob("*")):
        relative = path.relative_to(public).as_posix()
        if not path.is_file():
            continue
        if any(word in path.name.lower() for word in ("answer", "solution")):
            reasons.append(f"public file {relative} looks like an answers file")
        if path.read_bytes() == answer_bytes:
            reasons.append(f"public file {relative} is a copy of the answers")
        elif path.suffix == ".csv":
            reasons += _value_leaks(relative, pd.read_csv(path), answers, competition)
    return reasons + rule_description_leaks(competition)


def _leaked_names(competition: Competition) -> list[str]:
    labels = set(competition.config.target_columns)
    if (competition.root / BLUEPRINT_FILE).is_file():
        labels |= set(tg.train_label_columns(load_blueprint(competition.root)))
    header = pd.read_csv(competition.public_dir / "test.csv", nrows=0).columns
    return [f"test.csv has the answer column {c!r}" for c in header if c in labels]


def _value_leaks(
    relative: str, frame: pd.DataFrame, answers: pd.DataFrame, competition: Competition
) -> list[str]:
    id_column = competition.config.id_columns[0]
    if id_column not in frame.columns or len(answers) < MIN_ROWS:
        return []
    merged = answers.merge(frame, on=id_column, suffixes=("__answer", ""))
    if len(merged) != len(answers):
        return []
    reasons = []
    for target in competition.config.target_columns:
        truth = merged[target + "__answer" if target + "__answer" in merged else target]
        if truth.nunique() < 2:
            continue
        for column in frame.columns:
            if column != id_column and column in merged and _same(merged[column], truth):
                reasons.append(f"{relative} column {column!r} equals the answer {target!r}")
    return reasons


def _same(a: pd.Series, b: pd.Series) -> bool:
    if a.name == b.name:
        return False
    x, y = pd.to_numeric(a, errors="coerce"), pd.to_numeric(b, errors="coerce")
    if x.notna().all() and y.notna().all():
        return bool(np.allclose(x.to_numpy(float), y.to_numpy(float), rtol=1e-6, atol=1e-9))
    return bool((a.astype(str).to_numpy() == b.astype(str).to_numpy()).all())


# Words that describe how labels are made; a description never needs them.
RULE_TERMS = (
    "hidden rule",
    "oracle",
    "poisson",
    "keyword",
    "interaction",
    "threshold",
    "sine",
    "periodic",
    "changepoint",
    "change point",
    "harmonic",
    "seasonal",
    "trend",
    "shape",
    "label noise",
    "distractor",
)
SUMMARY_MIN_CHARS = 20


def description_leaks(markdown: str, rule: dict[str, Any], public: set[str]) -> list[str]:
    """Ways ``markdown`` states the hidden rule (``rule``: a ``HiddenRule`` as a dict).

    ``public`` holds the words the public files already show (column, class and file names),
    which a description may repeat. Flagged: rule vocabulary, the rule's summary, any of the
    image mapping's shape names, a text keyword quoted or two keywords of one class.
    """
    text = markdown.lower()
    words = set(re.findall(r"[a-z]+", text)) - public
    reasons = [f"description uses the rule term {t!r}" for t in RULE_TERMS if _has(text, t)]
    summary = str(rule.get("summary", "")).strip().lower()
    if len(summary) >= SUMMARY_MIN_CHARS and summary in text:
        reasons.append("description quotes the rule's summary")
    structure = (rule.get("params") or {}).get("structure")
    structure = structure if isinstance(structure, dict) else {}
    reasons += [f"description names the {k} {n!r}" for k, n in _mapped_names(structure, words)]
    groups = [list(map(str, g)) for g in structure.get("keywords", [])]
    groups.append(list(map(str, structure.get("partners", []))))
    for group in groups:
        hidden = [w for w in group if w not in public]
        quoted = sorted(w for w in hidden if re.search(rf"[`'\"]{re.escape(w)}[`'\"]", text))
        named = sorted(set(hidden) & words)
        if quoted or len(named) >= 2:
            reasons.append(f"description names keyword(s) {', '.join(quoted or named)}")
    return reasons


def _mapped_names(structure: dict[str, Any], words: set[str]) -> list[tuple[str, str]]:
    """Shapes (images) and call patterns (audio) of the class mapping, and degradation kinds
    (image-to-image), that the text names."""
    shapes = {str(s) for s in structure.get("shapes", [])}
    calls = structure.get("calls", [])
    patterns = {str(c["pattern"]) for c in calls if isinstance(c, dict) and "pattern" in c}
    # image-to-image: the degradation kinds ("salt-pepper" is named by either word)
    kinds = {w for k in structure.get("kinds", []) for w in re.findall(r"[a-z]+", str(k).lower())}
    found = [("shape", s) for s in shapes & words] + [("call pattern", p) for p in patterns & words]
    found += [("degradation", k) for k in kinds & words]
    return sorted(found)


def _has(text: str, term: str) -> bool:
    return re.search(rf"\b{re.escape(term)}", text) is not None


def rule_description_leaks(competition: Competition) -> list[str]:
    """:func:`description_leaks` of a generated task (none when it has no rule record)."""
    rule_path = competition.root / RULE_FILE
    if not rule_path.is_file() or not competition.description_path.is_file():
        return []
    rule = json.loads(rule_path.read_text(encoding="utf-8"))
    public = _public_words(competition)
    markdown = competition.description_path.read_text(encoding="utf-8")
    return description_leaks(markdown, rule, public)


def _public_words(competition: Competition) -> set[str]:
    public = competition.public_dir
    names = [competition.config.name]
    for path in sorted(public.iterdir()):
        names.append(path.name)
        if path.suffix == ".csv":
            names += map(str, pd.read_csv(path, nrows=0).columns)
    if (competition.root / BLUEPRINT_FILE).is_file():
        domain = load_blueprint(competition.root).domain
        names += [domain.entity, *domain.class_names]
    return set(re.findall(r"[a-z]+", " ".join(names).lower()))
