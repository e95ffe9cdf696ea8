"""Each lite grader through ``grade_csv`` on tiny competitions in MLE-bench's prepared layout.

Expected scores are computed by hand (in comments) or from first principles in the test;
every invalid condition and every "(verified)" / "accepted but surprising" case of the
grading spec has a test here.
"""

from __future__ import annotations

import math

import pytest

from sandmle.benchmarks.mle_bench.competitions import get_competition
from sandmle.harness.grading.report import CompetitionReport

from .conftest import Grade, MakeCompetition

EPS = 2.220446049250313e-16
HARD_WRONG = -math.log(EPS)  # 36.04365338911715: a probability of 0 on the true class


def table(header: list[str], *rows: list[object]) -> str:
    lines = [",".join(header)] + [",".join(str(v) for v in row) for row in rows]
    return "\n".join(lines) + "\n"


def valid(report: CompetitionReport, score: float) -> None:
    assert report.valid_submission, report.invalid_reason
    assert report.score == score


def invalid(report: CompetitionReport, reason: str = "") -> None:
    assert not report.valid_submission
    assert report.score is None
    assert report.invalid_reason is not None
    assert not report.invalid_reason.startswith("grader error"), report.invalid_reason
    assert reason in report.invalid_reason


# ---- H-AUC competitions ----

AUC_COMPETITIONS = {
    "aerial-cactus-identification": ("id", "has_cactus"),
    "detecting-insults-in-social-commentary": ("Comment", "Insult"),
    "histopathologic-cancer-detection": ("id", "label"),
    "mlsp-2013-birds": ("Id", "Probability"),
    "random-acts-of-pizza": ("request_id", "requester_received_pizza"),
    "siim-isic-melanoma-classification": ("image_name", "target"),
    "tabular-playground-series-may-2022": ("id", "target"),
    "the-icml-2013-whale-challenge-right-whale-redux": ("clip", "probability"),
}
AUC_IDS = ["a1", "b2", "c3", "d4"]
AUC_TRUTH = [0, 1, 1, 0]


@pytest.fixture(params=sorted(AUC_COMPETITIONS))
def auc_case(request: pytest.FixtureRequest, make_competition: MakeCompetition):
    cid = request.param
    id_col, target = AUC_COMPETITIONS[cid]
    answers = table([id_col, target], *zip(AUC_IDS, AUC_TRUTH, strict=True))
    return make_competition(cid, answers), id_col, target


def test_auc_pairs_by_sorted_id(auc_case, grade: Grade) -> None:
    comp, i, t = auc_case
    # Rows shuffled. Positives b2=.9, c3=.4; negatives a1=.1, d4=.6: 3 of 4 pairs ordered.
    valid(grade(comp, table([i, t], ["b2", 0.9], ["d4", 0.6], ["a1", 0.1], ["c3", 0.4])), 0.75)
    # Tied scores count one half; hard labels and booleans are scores too; extra columns ignored.
    valid(grade(comp, table([t, i, "x"], *[[0.5, k, 1] for k in AUC_IDS])), 0.5)
    valid(grade(comp, table([i, t], *zip(AUC_IDS, AUC_TRUTH, strict=True))), 1.0)
    bools = table([i, t], *zip(AUC_IDS, ["False", "True", "True", "False"], strict=True))
    valid(grade(comp, bools), 1.0)


@pytest.mark.parametrize(
    ("rows", "reason"),
    [
        ([["a1", 0.1], ["b2", 0.9], ["c3", 0.4], ["d4", 1.2]], "[0, 1]"),
        ([["a1", -0.1], ["b2", 0.9], ["c3", 0.4], ["d4", 0.6]], "[0, 1]"),
        ([["a1", "low"], ["b2", 0.9], ["c3", 0.4], ["d4", 0.6]], "not numeric"),
        ([["a1", ""], ["b2", 0.9], ["c3", 0.4], ["d4", 0.6]], "NaN"),
        ([["a1", 0.1], ["b2", 0.9], ["c3", 0.4]], "rows"),
        ([["a1", 0.1], ["b2", 0.9], ["c3", 0.4], ["zz", 0.6]], "do not match"),
        ([["a1", 0.1], ["b2", 0.9], ["c3", 0.4], ["c3", 0.6]], "do not match"),
        ([["a1", 0.1], ["b2", 0.9], ["c3", 0.4], ["", 0.6]], "do not match"),
    ],
)
def test_auc_invalid(auc_case, grade: Grade, rows: list[list[object]], reason: str) -> None:
    comp, i, t = auc_case
    invalid(grade(comp, table([i, t], *rows)), reason)


def test_auc_missing_columns(auc_case, grade: Grade) -> None:
    comp, i, t = auc_case
    invalid(grade(comp, table([i], *[[k] for k in AUC_IDS])), "missing")
    invalid(grade(comp, table([t], [0.1], [0.9], [0.4], [0.6])), "missing")


def test_auc_one_class_answers_invalid(make_competition: MakeCompetition, grade: Grade) -> None:
    comp = make_competition(
        "histopathologic-cancer-detection", table(["id", "label"], [1, 1], [2, 1])
    )
    invalid(grade(comp, table(["id", "label"], [1, 0.2], [2, 0.3])), "one class")


def test_auc_rounds_numpy_style(make_competition: MakeCompetition, grade: Grade) -> None:
    # AUC = 7001/8000 = 0.875125, an exact decimal tie: numpy's rule gives 0.87512
    # (Python's round on the binary value would give 0.87513).
    ids = range(8001)
    comp = make_competition(
        "aerial-cactus-identification",
        table(["id", "has_cactus"], *[[k, int(k == 0)] for k in ids]),
    )
    scores = [0.5] + [0.1] * 7001 + [0.9] * 999
    report = grade(comp, table(["id", "has_cactus"], *zip(ids, scores, strict=True)))
    valid(report, 0.87512)


def test_mlsp_float_ids_match_text_ids_do_not(
    make_competition: MakeCompetition, grade: Grade
) -> None:
    comp = make_competition(
        "mlsp-2013-birds", table(["Id", "Probability"], [100, 0], [101, 1], [200, 1], [201, 0])
    )
    floats = table(["Id", "Probability"], [100.0, 0.2], [101.0, 0.8], [200.0, 0.7], [201.0, 0.1])
    valid(grade(comp, floats), 1.0)
    text = table(["Id", "Probability"], ["100a", 0.2], [101, 0.8], [200, 0.7], [201, 0.1])
    invalid(grade(comp, text), "do not match")


def test_insults_duplicate_comments_pair_row_by_row(
    make_competition: MakeCompetition, grade: Grade
) -> None:
    answers = table(
        ["Insult", "Date", "Comment"],
        [1, "20120618192155Z", '"you fool"'],
        [0, "", '"same"'],
        [1, "", '"same"'],
        [0, "20120618192156Z", '"nice"'],
    )
    comp = make_competition("detecting-insults-in-social-commentary", answers)
    # In test.csv order the run of equal comments pairs row by row: a perfect ranking.
    sub = table(
        ["Comment", "Insult"],
        ['"you fool"', 0.9],
        ['"same"', 0.1],
        ['"same"', 0.8],
        ['"nice"', 0.2],
    )
    valid(grade(comp, sub), 1.0)


# ---- several ROC-AUCs ----

JIGSAW = list(get_competition("jigsaw-toxic-comment-classification-challenge").target_columns)
# toxic and identity_hate are each other's complement; the four others share one pattern.
JIGSAW_ROWS = [
    ["0a", 1, 1, 1, 1, 1, 0],
    ["0b", 1, 0, 0, 0, 0, 0],
    ["0c", 0, 1, 1, 1, 1, 1],
    ["0d", 0, 0, 0, 0, 0, 1],
    ["0e", -1, -1, -1, -1, -1, -1],
]


@pytest.fixture
def jigsaw(make_competition: MakeCompetition):
    return make_competition(
        "jigsaw-toxic-comment-classification-challenge", table(["id", *JIGSAW], *JIGSAW_ROWS)
    )


def test_jigsaw_scores_kept_rows(jigsaw, grade: Grade) -> None:
    # The -1 row is dropped, so its NaN scores are harmless.
    rows = [r[:] for r in JIGSAW_ROWS[:4]] + [["0e", *[""] * 6]]
    valid(grade(jigsaw, table(["id", *JIGSAW], *reversed(rows))), 1.0)


def test_jigsaw_reversed_columns_are_misaligned_but_valid(jigsaw, grade: Grade) -> None:
    # Column k is paired with column k by position: toxic meets identity_hate's scores (AUC 0),
    # identity_hate meets toxic's (0); the four others meet identical patterns (1). Mean 4/6.
    header = ["id", *reversed(JIGSAW)]
    rows = [[r[0], *reversed(r[1:])] for r in JIGSAW_ROWS]
    valid(grade(jigsaw, table(header, *rows)), round(4 / 6, 5))


def test_jigsaw_scores_are_not_range_checked(jigsaw, grade: Grade) -> None:
    rows = [[r[0], *[10 * v - 3 for v in r[1:]]] for r in JIGSAW_ROWS]
    valid(grade(jigsaw, table(["id", *JIGSAW], *rows)), 1.0)


@pytest.mark.parametrize(
    ("header", "rows", "reason"),
    [
        (["id", *JIGSAW, "extra"], [[*r, 0] for r in JIGSAW_ROWS], "extra columns"),
        (["id", *JIGSAW[:5]], [r[:6] for r in JIGSAW_ROWS], "missing"),
        (JIGSAW, [r[1:] for r in JIGSAW_ROWS], "missing"),
        (["id", *JIGSAW], JIGSAW_ROWS[:4], "rows"),
        (["id", *JIGSAW], [*JIGSAW_ROWS[:4], ["zz", 0, 0, 0, 0, 0, 0]], "not in the test set"),
        (["id", *JIGSAW], [["0a", *[""] * 6], *JIGSAW_ROWS[1:]], "NaN"),
        # 0e (unscored) twice and 0d missing: the kept-row counts differ.
        (["id", *JIGSAW], [*JIGSAW_ROWS[:3], *JIGSAW_ROWS[4:], *JIGSAW_ROWS[4:]], "rows x"),
    ],
)
def test_jigsaw_invalid(jigsaw, grade: Grade, header: list[str], rows: list, reason: str) -> None:
    invalid(grade(jigsaw, table(header, *rows)), reason)


def test_jigsaw_partial_minus_one_row_is_kept_and_fails(
    make_competition: MakeCompetition, grade: Grade
) -> None:
    rows = [*JIGSAW_ROWS[:4], ["0e", -1, 1, 1, 1, 1, 1]]  # sums to 4 >= 0: kept, label -1
    comp = make_competition(
        "jigsaw-toxic-comment-classification-challenge", table(["id", *JIGSAW], *rows)
    )
    invalid(grade(comp, table(["id", *JIGSAW], *rows)), "classes")


PLANT = ["healthy", "multiple_diseases", "rust", "scab"]
PLANT_ROWS = [
    ["Test_0", 1, 0, 0, 0],
    ["Test_1", 0, 1, 0, 0],
    ["Test_2", 0, 0, 1, 0],
    ["Test_10", 0, 0, 0, 1],
    ["Test_11", 1, 1, 1, 1],
]


@pytest.fixture
def plant(make_competition: MakeCompetition):
    return make_competition("plant-pathology-2020-fgvc7", table(["image_id", *PLANT], *PLANT_ROWS))


def test_plant_pathology_mean_of_class_aucs(plant, grade: Grade) -> None:
    # Any column order, scores outside [0, 1]; same-named columns are paired.
    header = ["scab", "image_id", "rust", "healthy", "multiple_diseases"]
    rows = [[r[4] * 5, r[0], r[3], r[1] - 2, r[2]] for r in PLANT_ROWS]
    valid(grade(plant, table(header, *reversed(rows))), 1.0)
    # healthy scored backwards: positives Test_0 and Test_11 get the two lowest scores -> AUC 0.
    rows = [[r[0], -r[1], *r[2:]] for r in PLANT_ROWS]
    valid(grade(plant, table(["image_id", *PLANT], *rows)), 0.75)


@pytest.mark.parametrize(
    ("header", "rows", "reason"),
    [
        (["image_id", *PLANT, "extra"], [[*r, 0] for r in PLANT_ROWS], "unexpected"),
        (["image_id", *PLANT[:3]], [r[:4] for r in PLANT_ROWS], "missing"),
        (["image_id", *PLANT], PLANT_ROWS[:4], "rows"),
        (["image_id", *PLANT], [*PLANT_ROWS[:4], ["Test_3", 1, 1, 1, 1]], "do not match"),
        (["image_id", *PLANT], [*PLANT_ROWS[:4], ["Test_11", "", 1, 1, 1]], "NaN"),
    ],
)
def test_plant_pathology_invalid(
    plant, grade: Grade, header: list, rows: list, reason: str
) -> None:
    invalid(grade(plant, table(header, *rows)), reason)


RANZCR = list(get_competition("ranzcr-clip-catheter-line-classification").target_columns)
RANZCR_ALL = [*RANZCR, "CVC - Normal", "Swan Ganz Catheter Present"]


@pytest.fixture
def ranzcr(make_competition: MakeCompetition):
    answers = table(
        ["StudyInstanceUID", *RANZCR_ALL, "PatientID"],
        ["1.2.1", *[1] * 11, "p1"],
        ["1.2.2", *[0] * 11, "p2"],
        ["1.2.3", *[1, 0] * 5, 1, "p3"],
    )
    return make_competition("ranzcr-clip-catheter-line-classification", answers)


def test_ranzcr_grades_nine_labels(ranzcr, grade: Grade) -> None:
    # Perfect on the 9 graded labels; the 2 others are ignored, present or not.
    rows = [
        ["1.2.1", *[0.9] * 9, 0, 0],
        ["1.2.2", *[0.1] * 9, 1, 1],
        ["1.2.3", *[0.9, 0.1] * 4, 0.9, 0.5, 0.5],
    ]
    valid(grade(ranzcr, table(["StudyInstanceUID", *RANZCR_ALL], *rows)), 1.0)
    valid(grade(ranzcr, table(["StudyInstanceUID", *RANZCR], *[r[:10] for r in rows])), 1.0)
    # ETT - Abnormal (positives 1.2.1, 1.2.3) ranked worst -> that AUC is 0, mean 8/9.
    rows[0][1], rows[2][1] = 0.0, 0.0
    valid(grade(ranzcr, table(["StudyInstanceUID", *RANZCR_ALL], *rows)), round(8 / 9, 5))


def test_ranzcr_invalid(ranzcr, grade: Grade) -> None:
    rows = [["1.2.1", *[0.9] * 9], ["1.2.2", *[0.1] * 9], ["1.2.3", *[0.5] * 9]]
    invalid(
        grade(ranzcr, table(["StudyInstanceUID", *RANZCR[:8]], *[r[:9] for r in rows])), "missing"
    )
    invalid(grade(ranzcr, table(["StudyInstanceUID", *RANZCR], *rows[:2])), "rows")
    rows[1][5] = 1.5
    invalid(grade(ranzcr, table(["StudyInstanceUID", *RANZCR], *rows)), "[0, 1]")


# ---- log loss ----


def one_hot(classes: list[str], labels: list[int]) -> list[list[int]]:
    return [[int(j == label) for j in range(len(classes))] for label in labels]


def test_dog_breed_uniform_and_extra_columns(
    make_competition: MakeCompetition, grade: Grade
) -> None:
    breeds = list(get_competition("dog-breed-identification").target_columns)
    ids = ["f0a", "e1b", "d2c"]
    answers = table(
        ["id", *breeds], *[[i, *r] for i, r in zip(ids, one_hot(breeds, [0, 5, 119]), strict=True)]
    )
    comp = make_competition("dog-breed-identification", answers)
    uniform = [1 / 120] * 120
    # id in any position, extra columns ignored and not part of the row sum: ln 120.
    sub = table([*breeds, "note", "id"], *[[*uniform, 7, i] for i in reversed(ids)])
    valid(grade(comp, sub), round(math.log(120), 5))
    missing = table(["id", *breeds[1:]], *[[i, *uniform[1:]] for i in ids])
    invalid(grade(comp, missing), "missing")
    off = [[i, *uniform[:-1], 1 / 120 + 2e-5] for i in ids]
    invalid(grade(comp, table(["id", *breeds], *off)), "sum")
    invalid(grade(comp, table(["id", *breeds], *[[i, *uniform] for i in ids[:2]])), "rows")
    unknown = [[i, *uniform] for i in ["f0a", "e1b", "zzz"]]
    invalid(grade(comp, table(["id", *breeds], *unknown)), "do not match")


LEAF = list(get_competition("leaf-classification").target_columns)


@pytest.fixture
def leaf(make_competition: MakeCompetition):
    rows = [[i, *r] for i, r in zip([5, 17, 42], one_hot(LEAF, [0, 50, 98]), strict=True)]
    return make_competition("leaf-classification", table(["id", *LEAF], *rows))


def test_leaf_uniform_scores_ln_99(leaf, grade: Grade) -> None:
    uniform = [1 / 99] * 99
    # Float ids match the integer answers; any row order.
    valid(grade(leaf, table(["id", *LEAF], *[[i, *uniform] for i in (42.0, 5.0, 17.0)])), 4.59512)


def test_leaf_extra_column_invalid(leaf, grade: Grade) -> None:
    uniform = [1 / 99] * 99
    extra = table(["id", *LEAF, "note"], *[[i, *uniform, 0] for i in (5, 17, 42)])
    invalid(grade(leaf, extra), "unexpected")
    dup = table(["id", *LEAF, LEAF[0]], *[[i, *uniform, 0] for i in (5, 17, 42)])
    invalid(grade(leaf, dup), "unexpected")  # pandas renames it Acer_Capillipes.1


def test_leaf_probability_checks(leaf, grade: Grade) -> None:
    rows = [[i, *[1 / 99] * 99] for i in (5, 17, 42)]
    rows[0][1] = ""
    invalid(grade(leaf, table(["id", *LEAF], *rows)), "[0, 1]")
    rows[0][1], rows[0][2] = 1.5, 1 / 99 - 1.5 + 1 / 99
    invalid(grade(leaf, table(["id", *LEAF], *rows)), "[0, 1]")


SPOOKY = ["EAP", "HPL", "MWS"]


@pytest.fixture
def spooky(make_competition: MakeCompetition):
    answers = table(["id", *SPOOKY], ["id001", 1, 0, 0], ["id002", 0, 1, 0], ["id003", 0, 0, 1])
    return make_competition("spooky-author-identification", answers)


def test_spooky_uniform_in_any_class_order(spooky, grade: Grade) -> None:
    third = 1 / 3
    sub = table(
        ["id", "MWS", "EAP", "HPL"],
        *[[i, third, third, third] for i in ("id003", "id001", "id002")],
    )
    valid(grade(spooky, sub), round(math.log(3), 5))


def test_spooky_row_sum_tolerance(spooky, grade: Grade) -> None:
    # The true class gets .5 in every row: loss ln 2 whatever the other columns hold.
    def rows(first_other: float) -> str:
        return table(
            ["id", *SPOOKY],
            ["id001", 0.5, first_other, 0.25],
            ["id002", 0.25, 0.5, 0.25],
            ["id003", 0.25, 0.25, 0.5],
        )

    valid(grade(spooky, rows(0.25001)), round(math.log(2), 5))  # sums to 1.00001
    invalid(grade(spooky, rows(0.25002)), "sum")  # 1.00002


@pytest.mark.parametrize(
    ("header", "rows", "reason"),
    [
        # id not first: the columns after the first include the id text.
        (
            ["EAP", "id", "HPL", "MWS"],
            [[1, "id001", 0, 0], [0, "id002", 1, 0], [0, "id003", 0, 1]],
            "not numeric",
        ),
        (
            ["id", "EAP", "HPL", "XXX"],
            [["id001", 1, 0, 0], ["id002", 0, 1, 0], ["id003", 0, 0, 1]],
            "missing",
        ),
        (
            ["id", *SPOOKY, "x"],
            [["id001", 1, 0, 0, 0], ["id002", 0, 1, 0, 0], ["id003", 0, 0, 1, 0]],
            "expected",
        ),
        (["id", *SPOOKY], [["id001", 1, 0, 0], ["id002", 0, 1, 0]], "expected"),
        (
            ["id", *SPOOKY],
            [["id001", 1, 0, 0], ["id002", 0, 1, 0], ["id009", 0, 0, 1]],
            "do not match",
        ),
        (
            ["id", *SPOOKY],
            [["id001", 1.2, -0.2, 0], ["id002", 0, 1, 0], ["id003", 0, 0, 1]],
            "[0, 1]",
        ),
    ],
)
def test_spooky_invalid(spooky, grade: Grade, header: list, rows: list, reason: str) -> None:
    invalid(grade(spooky, table(header, *rows)), reason)


@pytest.fixture
def dogs_vs_cats(make_competition: MakeCompetition):
    return make_competition(
        "dogs-vs-cats-redux-kernels-edition", table(["id", "label"], [1, 1], [2, 0], [3, 1], [4, 0])
    )


def test_dogs_vs_cats_hard_wrong_label(dogs_vs_cats, grade: Grade) -> None:
    # Three hard right labels cost -ln(1 - eps) ~ 2.2e-16 each, the hard wrong one -ln(eps).
    sub = table(["id", "label"], [4.0, 1], [3.0, 1], [2.0, 0], [1.0, 1])
    valid(grade(dogs_vs_cats, sub), round(HARD_WRONG / 4, 5))
    assert round(HARD_WRONG, 4) == 36.0437


def test_dogs_vs_cats_probabilities(dogs_vs_cats, grade: Grade) -> None:
    sub = table(
        ["id", "label", "extra"], [1, 0.8, "x"], [2, 0.2, "y"], [3, 0.6, "z"], [4, 0.4, "w"]
    )
    expected = -(2 * math.log(0.8) + 2 * math.log(0.6)) / 4
    valid(grade(dogs_vs_cats, sub), round(expected, 5))


@pytest.mark.parametrize(
    ("rows", "reason"),
    [
        ([[1, 0.5], [2, 0.5], [3, 0.5], [9, 0.5]], "differ"),
        ([[1, 0.5], [2, 0.5], [3, 0.5], [3, 0.5], [4, 0.5]], "rows"),
        ([[1, 0.5], [2, 0.5], [3, 0.5], [4, 1.01]], "[0, 1]"),
        ([[1, 0.5], [2, 0.5], [3, 0.5], [4, ""]], "missing"),
        ([[1, 0.5], [2, 0.5], [3, 0.5], [4, "dog"]], "not numeric"),
    ],
)
def test_dogs_vs_cats_invalid(dogs_vs_cats, grade: Grade, rows: list, reason: str) -> None:
    invalid(grade(dogs_vs_cats, table(["id", "label"], *rows)), reason)


# ---- labels and text ----

APTOS_IDS = [
    "0a1b2c3d4e5f",
    "1b2c3d4e5f6a",
    "2c3d4e5f6a7b",
    "3d4e5f6a7b8c",
    "4e5f6a7b8c9d",
    "5f6a7b8c9d0e",
]


@pytest.fixture
def aptos(make_competition: MakeCompetition):
    answers = table(["id_code", "diagnosis"], *zip(APTOS_IDS, [0, 0, 1, 2, 4, 4], strict=True))
    return make_competition("aptos2019-blindness-detection", answers)


def test_aptos_kappa_weights_label_positions(aptos, grade: Grade) -> None:
    # Labels {0, 1, 2, 4}: weights use positions 0..3, giving 0.8 (value-based QWK: 0.766).
    rows = list(zip(APTOS_IDS, [0, 1, 2, 2, 2, 4], strict=True))
    valid(grade(aptos, table(["id_code", "diagnosis"], *reversed(rows))), 0.8)
    floats = [(i, float(d)) for i, d in rows]
    valid(grade(aptos, table(["id_code", "diagnosis"], *floats)), 0.8)


def test_aptos_constant_everywhere_is_valid_nan(
    make_competition: MakeCompetition, grade: Grade
) -> None:
    comp = make_competition(
        "aptos2019-blindness-detection", table(["id_code", "diagnosis"], ["a", 2], ["b", 2])
    )
    report = grade(comp, table(["id_code", "diagnosis"], ["a", 2], ["b", 2]))
    assert report.valid_submission and math.isnan(report.score)
    assert not report.any_medal and not report.above_median


def test_aptos_out_of_range_labels_join_the_label_set(aptos, grade: Grade) -> None:
    rows = list(zip(APTOS_IDS, [0, 0, 1, 2, 4, 7], strict=True))
    report = grade(aptos, table(["id_code", "diagnosis"], *rows))
    assert report.valid_submission and 0 < report.score < 1


@pytest.mark.parametrize(
    ("labels", "reason"),
    [
        ([0, 0, 1, 2, 4, ""], "missing"),
        ([0, 0, 1, 2, 4, 2.5], "non-integral"),
        ([0, 0, 1, 2, 4, "four"], "text"),
    ],
)
def test_aptos_bad_labels(aptos, grade: Grade, labels: list, reason: str) -> None:
    invalid(
        grade(aptos, table(["id_code", "diagnosis"], *zip(APTOS_IDS, labels, strict=True))), reason
    )


def test_aptos_invalid_shapes(aptos, grade: Grade) -> None:
    rows = list(zip(APTOS_IDS, [0, 0, 1, 2, 4, 4], strict=True))
    invalid(grade(aptos, table(["id_code", "grade"], *rows)), "missing")
    invalid(grade(aptos, table(["id_code", "diagnosis"])), "no rows")
    invalid(grade(aptos, table(["image", "diagnosis"], *rows)), "missing")
    invalid(grade(aptos, table(["id_code", "diagnosis"], *rows[:5], ("zzz", 4))), "differ")
    # Same set, one id twice: only the row count catches it.
    invalid(grade(aptos, table(["id_code", "diagnosis"], *rows, rows[0])), "rows")


@pytest.fixture
def cover_type(make_competition: MakeCompetition):
    return make_competition(
        "tabular-playground-series-dec-2021",
        table(
            ["Id", "Elevation", "Cover_Type"],
            [10, 3000, 1],
            [11, 2900, 2],
            [12, 2800, 3],
            [13, 2700, 2],
        ),
    )


def test_tabular_dec_accuracy(cover_type, grade: Grade) -> None:
    # 2.0 equals 2; labels outside 1-7 are just wrong: 3 of 4 right.
    sub = table(["Id", "Cover_Type"], [13, 2.0], [12, 3.0], [11, 2.0], [10, 9.0])
    valid(grade(cover_type, sub), 0.75)


def test_tabular_dec_text_column_scores_zero(cover_type, grade: Grade) -> None:
    # One non-numeric token makes every cell text: no row equals its integer label.
    sub = table(["Id", "Cover_Type"], [10, 1], [11, 2], [12, 3], [13, "two"])
    valid(grade(cover_type, sub), 0.0)


@pytest.mark.parametrize(
    ("rows", "reason"),
    [
        ([[10, 1], [11, 2], [12, 1.5], [13, 2]], "non-integral"),
        ([[10, 1], [11, 2], [12, ""], [13, 2]], "NaN"),
        ([[10, 1], [11, 2], [12, 3]], "rows"),
        ([[10, 1], [11, 2], [12, 3], [14, 2]], "do not match"),
    ],
)
def test_tabular_dec_invalid(cover_type, grade: Grade, rows: list, reason: str) -> None:
    invalid(grade(cover_type, table(["Id", "Cover_Type"], *rows)), reason)


def test_tabular_dec_rounds_python_style(make_competition: MakeCompetition, grade: Grade) -> None:
    # 7001/8000 = 0.875125, an exact decimal tie: Python's round on the binary value gives
    # 0.87513 (numpy's rule would give 0.87512).
    comp = make_competition(
        "tabular-playground-series-dec-2021",
        table(["Id", "Cover_Type"], *[[k, 1] for k in range(8000)]),
    )
    sub = table(["Id", "Cover_Type"], *[[k, 1 if k < 7001 else 2] for k in range(8000)])
    valid(grade(comp, sub), 0.87513)


TEXT_NORM = [
    "text-normalization-challenge-english-language",
    "text-normalization-challenge-russian-language",
]


@pytest.mark.parametrize("cid", TEXT_NORM)
def test_text_normalization_na_tokens_all_read_nan(
    make_competition: MakeCompetition, grade: Grade, cid: str
) -> None:
    answers = table(
        ["id", "after"],
        ["0_0", '"hello"'],
        ["0_1", ""],
        ["0_2", "null"],
        ["1_0", '"nan"'],
        ["2_0", '"1.50"'],
        ["10_0", '"World"'],
    )
    comp = make_competition(cid, answers)
    # Every NA spelling becomes "nan" on both sides; text keeps its literal form ("1.5" is not
    # "1.50") and its case ("world" is not "World"). 4 of 6 match.
    sub = table(
        ["id", "after"],
        ["10_0", "world"],
        ["2_0", "1.5"],
        ["1_0", "n/a"],
        ["0_2", "None"],
        ["0_1", "NA"],
        ["0_0", "hello"],
    )
    valid(grade(comp, sub), round(4 / 6, 5))


@pytest.mark.parametrize("cid", TEXT_NORM)
def test_text_normalization_numeric_looking_columns(
    make_competition: MakeCompetition, grade: Grade, cid: str
) -> None:
    comp = make_competition(
        cid, table(["id", "after"], ["0_0", "1.5"], ["0_1", "2.0"], ["0_2", "word"])
    )
    # An all-numeric column is parsed as floats first: 1.50 -> "1.5", 2 -> "2.0", 3 -> "3.0".
    valid(
        grade(comp, table(["id", "after"], ["0_0", "1.50"], ["0_1", "2"], ["0_2", "3"])),
        round(2 / 3, 5),
    )
    comp = make_competition(cid, table(["id", "after"], ["1_0", "1"], ["1_1", "x"]))
    # All integers stay "1"; with an NA the column turns float and 1 becomes "1.0".
    valid(grade(comp, table(["id", "after"], ["1_0", "1"], ["1_1", "2"])), 0.5)
    valid(grade(comp, table(["id", "after"], ["1_0", "1"], ["1_1", ""])), 0.0)


def test_text_normalization_russian_exact_code_points(
    make_competition: MakeCompetition, grade: Grade
) -> None:
    comp = make_competition(
        TEXT_NORM[1], table(["id", "after"], ["0_0", "двенадцать"], ["0_1", "ёж"])
    )
    valid(grade(comp, table(["id", "after"], ["0_0", "двенадцать"], ["0_1", "еж"])), 0.5)


@pytest.mark.parametrize(
    ("header", "rows", "reason"),
    [
        (["id", "after"], [["0_0", "a"]], "rows"),
        (["id", "before"], [["0_0", "a"], ["10_0", "b"]], "missing"),
        (["key", "after"], [["0_0", "a"], ["10_0", "b"]], "missing"),
        (["id", "after"], [["0_0", "a"], ["2_0", "b"]], "do not match"),
    ],
)
def test_text_normalization_invalid(
    make_competition: MakeCompetition, grade: Grade, header: list, rows: list, reason: str
) -> None:
    comp = make_competition(TEXT_NORM[0], table(["id", "after"], ["0_0", "a"], ["10_0", "b"]))
    invalid(grade(comp, table(header, *rows)), reason)


# ---- regression ----


@pytest.fixture
def denoising(make_competition: MakeCompetition):
    rows = [["1_1_1", 1.0], ["1_1_2", 0.5], ["1_2_1", 0.25], ["10_1_1", 0.0]]
    return make_competition("denoising-dirty-documents", table(["id", "value"], *rows))


def test_denoising_rmse(denoising, grade: Grade) -> None:
    # Errors 0.2, 0, 0, -0.4 (a prediction below 0 is scored, not clipped): sqrt(0.2 / 4).
    sub = table(
        ["value", "id", "x"],
        [-0.4, "10_1_1", 1],
        [0.25, "1_2_1", 1],
        [0.5, "1_1_2", 1],
        [0.8, "1_1_1", 1],
    )
    valid(grade(denoising, sub), round(math.sqrt(0.05), 5))


@pytest.mark.parametrize(
    ("rows", "reason"),
    [
        ([["1_1_1", 1], ["1_1_2", 0.5], ["1_2_1", "dark"], ["10_1_1", 0]], "not numeric"),
        ([["1_1_1", 1], ["1_1_2", 0.5], ["1_2_1", ""], ["10_1_1", 0]], "NaN"),
        ([["1_1_1", 1], ["1_1_2", 0.5], ["1_2_1", 0.2]], "rows"),
        ([["1_1_1", 1], ["1_1_2", 0.5], ["1_2_1", 0.2], ["1_2_1", 0]], "do not match"),
    ],
)
def test_denoising_invalid(denoising, grade: Grade, rows: list, reason: str) -> None:
    invalid(grade(denoising, table(["id", "value"], *rows)), reason)
    invalid(grade(denoising, table(["id", "pixel"], *rows)), "missing")


@pytest.fixture
def taxi(make_competition: MakeCompetition):
    header = ["key", "fare_amount", "pickup_datetime", "passenger_count"]
    rows = [
        ["2009-06-15 17:26:21.0000001", 10.0, "2009-06-15 17:26:21 UTC", 1],
        ["2010-01-05 16:52:16.0000002", 20.0, "2010-01-05 16:52:16 UTC", 1],
        ["2011-08-18 00:35:00.00000049", 30.0, "2011-08-18 00:35:00 UTC", 2],
    ]
    return make_competition("new-york-city-taxi-fare-prediction", table(header, *rows))


def test_taxi_wrong_keys_still_scored_by_sorted_position(taxi, grade: Grade) -> None:
    # Keys never compared: sorted positions pair 11 with 10, 20 with 20, 33 with 30.
    sub = table(["key", "fare_amount"], ["zz", 33.0], ["aa", 11.0], ["mm", 20.0])
    valid(grade(taxi, sub), round(math.sqrt(10 / 3), 5))
    negative = table(["key", "fare_amount"], ["a", -10.0], ["a", 20.0], ["b", 30.0])
    valid(grade(taxi, negative), round(math.sqrt(400 / 3), 5))


def test_taxi_invalid(taxi, grade: Grade) -> None:
    invalid(grade(taxi, table(["key", "fare_amount"], ["a", 1.0], ["b", 2.0])), "rows")
    invalid(grade(taxi, table(["key", "fare_amount"], ["a", 1.0], ["b", ""], ["c", 3])), "NaN")
    invalid(grade(taxi, table(["key", "fare"], ["a", 1.0], ["b", 2.0], ["c", 3])), "missing")
    invalid(grade(taxi, table(["id", "fare_amount"], ["a", 1.0], ["b", 2.0], ["c", 3])), "missing")


NOMAD = ["formation_energy_ev_natom", "bandgap_energy_ev"]


@pytest.fixture
def nomad(make_competition: MakeCompetition):
    rows = [[1, 12, 0.1, 1.0], [2, 33, 0.2, 2.0], [3, 167, 0.3, 3.0]]
    return make_competition(
        "nomad2018-predict-transparent-conductors", table(["id", "spacegroup", *NOMAD], *rows)
    )


def _rmsle(truth: list[float], pred: list[float]) -> float:
    return math.sqrt(
        sum((math.log1p(t) - math.log1p(p)) ** 2 for t, p in zip(truth, pred, strict=True))
        / len(truth)
    )


def test_nomad_rows_matched_by_position(nomad, grade: Grade) -> None:
    valid(grade(nomad, table(NOMAD, [0.1, 1.0], [0.2, 2.0], [0.3, 3.0])), 0.0)  # no id: fine
    # Reversed rows (ids and all) are still compared row by row.
    reversed_rows = table(["id", *NOMAD], [3, 0.3, 3.0], [2, 0.2, 2.0], [1, 0.1, 1.0])
    expected = (_rmsle([0.1, 0.2, 0.3], [0.3, 0.2, 0.1]) + _rmsle([1, 2, 3], [3, 2, 1])) / 2
    valid(grade(nomad, reversed_rows), round(expected, 5))


@pytest.mark.parametrize(
    ("rows", "reason"),
    [
        ([[0.1, 1.0], [-0.01, 2.0], [0.3, 3.0]], "negative"),
        ([[0.1, 1.0], ["", 2.0], [0.3, 3.0]], "NaN"),
        ([[0.1, 1.0], [0.2, 2.0]], "rows"),
    ],
)
def test_nomad_invalid(nomad, grade: Grade, rows: list, reason: str) -> None:
    invalid(grade(nomad, table(NOMAD, *rows)), reason)
    invalid(grade(nomad, table([NOMAD[0]], *[r[:1] for r in rows])), "missing")
