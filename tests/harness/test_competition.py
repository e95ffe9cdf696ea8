from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sandmle.errors import CompetitionError
from sandmle.harness.competition import load_competition, metric_direction
from sandmle.harness.pack import PackManifest, PackTask, load_pack, write_manifest


def _edit(root: Path, **changes: object) -> None:
    path = root / "competition.yaml"
    data = yaml.safe_load(path.read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(yaml.safe_dump(data))


def test_loads_example(plant_dir: Path) -> None:
    comp = load_competition(plant_dir)
    assert comp.id == "plant-watering"
    assert comp.answers_path.is_file() and comp.public_dir.is_dir()
    assert comp.answers_path.is_relative_to(comp.private_dir)
    assert metric_direction(comp.config) is False  # roc_auc default: higher is better


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"metric": "not_a_metric"}, "metric 'not_a_metric' is unknown"),
        ({"name": None}, "name: Field required"),
        ({"target_columns": []}, "target_columns"),
        ({"leaderboard": "leaderboard.csv"}, "exactly one of 'thresholds' and 'leaderboard'"),
        ({"thresholds": None}, "exactly one of 'thresholds' and 'leaderboard'"),
        ({"answers": "prepared/public/test.csv"}, "must lie under prepared/private"),
        ({"id": "other-id"}, "does not match the folder name"),
        ({"colour": "blue"}, "colour: Extra inputs are not permitted"),
        ({"sample_submission": "prepared/public/nope.csv"}, "sample_submission file"),
        (
            {"thresholds": {"gold": 0.5, "silver": 0.9, "bronze": 0.95, "median": 0.99}},
            "out of order for a higher-is-better metric",
        ),
        ({"thresholds": {"gold": 1.0, "silver": 0.9}}, "thresholds.bronze: Field required"),
        ({"modality": "smell"}, "modality"),
    ],
)
def test_bad_fields_are_one_line_errors(plant_dir: Path, changes: dict, message: str) -> None:
    _edit(plant_dir, **changes)
    with pytest.raises(CompetitionError, match=message) as info:
        load_competition(plant_dir)
    assert "\n" not in str(info.value)


def test_broken_yaml_and_missing_files(plant_dir: Path, tmp_path: Path) -> None:
    (plant_dir / "competition.yaml").write_text("id: [unclosed\n")
    with pytest.raises(CompetitionError, match="not valid YAML"):
        load_competition(plant_dir)
    (plant_dir / "competition.yaml").write_text("- a list\n")
    with pytest.raises(CompetitionError, match="expected a mapping"):
        load_competition(plant_dir)
    with pytest.raises(CompetitionError, match="does not exist"):
        load_competition(tmp_path / "nowhere")
    with pytest.raises(CompetitionError, match="no competition.yaml in this folder"):
        load_competition(tmp_path)


def test_missing_answers_file(plant_dir: Path) -> None:
    (plant_dir / "prepared/private/answers.csv").unlink()
    with pytest.raises(CompetitionError, match="answers file"):
        load_competition(plant_dir)


def test_lower_is_better_threshold_order(bike_dir: Path) -> None:
    _edit(
        bike_dir,
        leaderboard=None,
        thresholds={"gold": 1.0, "silver": 2.0, "bronze": 3.0, "median": 4.0},
    )
    assert metric_direction(load_competition(bike_dir).config) is True


def test_pack_with_and_without_manifest(plant_dir: Path, bike_dir: Path) -> None:
    root = plant_dir.parent
    pack = load_pack(root)
    assert [c.id for c in pack.competitions] == ["bike-rentals", "plant-watering"]
    write_manifest(
        PackManifest(
            name="tiny", seed=3, tasks=[PackTask(id="plant-watering"), PackTask(id="bike-rentals")]
        ),
        root,
    )
    pack = load_pack(root)
    assert pack.manifest.name == "tiny" and pack.manifest.seed == 3
    assert [c.id for c in pack.competitions] == ["plant-watering", "bike-rentals"]
    assert [c.id for c in load_pack(root, ["bike-rentals"]).competitions] == ["bike-rentals"]
    assert len(load_pack(plant_dir)) == 1  # a single competition folder is a pack of one
    with pytest.raises(CompetitionError, match="no task"):
        load_pack(root, ["missing"])


def test_bad_manifest(plant_dir: Path) -> None:
    (plant_dir.parent / "pack.yaml").write_text("name: x\ntasks: [{idd: 1}]\n")
    with pytest.raises(CompetitionError, match="pack.yaml: tasks.0"):
        load_pack(plant_dir.parent)
