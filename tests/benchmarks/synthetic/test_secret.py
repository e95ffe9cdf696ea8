"""Secret seeds: same secret and seed give the same bytes anywhere; no secret, no answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandmle.benchmarks.synthetic.blueprint import TaskRequest
from sandmle.benchmarks.synthetic.developer import develop
from sandmle.benchmarks.synthetic.packs import PackSpec, generate_pack
from sandmle.benchmarks.synthetic.secret import SECRET_FILE, salt_words
from sandmle.benchmarks.synthetic.seeds import get_seed
from sandmle.benchmarks.synthetic.strategist import plan
from sandmle.benchmarks.synthetic.task_files import DATA_FLOAT_FORMAT, file_digests
from sandmle.errors import SandmleError
from sandmle.harness.pack import load_pack
from tests.benchmarks.synthetic.conftest import SMALL_SECRET

SECRET = "two-folders-test-secret"


def test_same_secret_and_seed_are_byte_identical_in_different_folders(tmp_path: Path):
    spec = PackSpec(name="where", n=2, seed=9, secret=SECRET)
    generate_pack(spec, tmp_path / "a", workers=1, progress=False)
    generate_pack(spec, tmp_path / "deeper" / "folder" / "b", workers=1, progress=False)
    digests = file_digests(tmp_path / "a")
    assert digests == file_digests(tmp_path / "deeper" / "folder" / "b")
    assert SECRET_FILE in digests
    assert (tmp_path / "a" / SECRET_FILE).read_text().strip() == SECRET
    for path in (tmp_path / "a").rglob("rejections.json"):
        assert str(tmp_path) not in path.read_text()


def test_a_different_secret_gives_different_answers(tmp_path: Path):
    for name, secret in (("a", SECRET), ("b", SECRET + "!")):
        generate_pack(PackSpec(n=1, seed=9, secret=secret), tmp_path / name, progress=False)
    answers = [next((tmp_path / n).glob("*/prepared/private/answers.csv")) for n in "ab"]
    assert answers[0].read_bytes() != answers[1].read_bytes()


def test_a_short_secret_is_a_user_error(tmp_path: Path):
    with pytest.raises(SandmleError, match="at least 16 characters"):
        generate_pack(PackSpec(n=1, secret="short"), tmp_path / "p", progress=False)


def _answers_text(task) -> str:
    return task.answers.to_csv(index=False, float_format=DATA_FLOAT_FORMAT, lineterminator="\n")


def test_brute_force_over_seeds_without_the_secret_fails(small_pack: Path):
    """What an agent could do: it knows the generator, the task index and (say) the seed task."""
    pack = load_pack(small_pack)
    entry = next(t for t in pack.manifest.tasks if t.seed_task == "lish-moa")
    root = small_pack / entry.id
    real = (root / "prepared/private/answers.csv").read_text()
    blueprint = json.loads((root / "generation/blueprint.json").read_text())
    dna = str(entry.seed_task)
    index, attempt = int(entry.id.rsplit("-", 1)[1]), blueprint["entropy"][-1]
    tried = 0
    for seed in range(0, 40):
        for guess in range(2):
            bp = plan(TaskRequest(index=index, dna=get_seed(dna), entropy=[seed, index, guess]))
            assert _answers_text(develop(bp)) != real
            tried += 1
    assert tried == 80
    # the same search with the secret finds them: the search itself works
    entropy = [*salt_words(SMALL_SECRET), 11, index, attempt]
    bp = plan(TaskRequest(index=index, dna=get_seed(dna), entropy=entropy))
    assert _answers_text(develop(bp)) == real
