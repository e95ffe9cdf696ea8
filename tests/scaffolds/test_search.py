"""The shared search machinery: reply parsing, the journal's derived views, prompt layout."""

from inspect_ai.model import ModelOutput

from sandmle.scaffolds.aide_prompts import AidePrompter
from sandmle.scaffolds.aira_prompts import AiraPrompter, complexity_tier
from sandmle.scaffolds.prompt_format import (
    EXECUTION_OUTPUT_SECTION,
    MEMORY_SECTION,
    PREVIOUS_CODE_SECTION,
    REVIEW_TOOL,
    SECOND_CODE_SECTION,
    TASK_SECTION,
    operator_of,
    section,
)
from sandmle.scaffolds.search import parse_proposal, parse_review
from sandmle.scaffolds.search.prompts import analyze_prompt
from sandmle.scaffolds.search.runner import truncate
from tests.scaffolds.test_aide import journal, node

TASK = "Solve it.\n\n# Plant Watering\n\nPredict `needs_water`.\n\n## Evaluation\nROC-AUC."


def test_proposal_takes_the_python_block_and_the_rest_as_plan():
    p = parse_proposal("Use a tree.\n```bash\nls\n```\n```python\nprint(1)\n```\nDone.")
    assert p.code == "print(1)" and "Use a tree." in p.plan and "Done." in p.plan
    assert parse_proposal("no code here").code == ""
    assert parse_proposal("```\nx = 1\n```").code == "x = 1"  # an unlabelled block counts
    assert parse_proposal("```python\nx = 1\n").code == "x = 1"  # an unclosed one too


def test_review_parsing_rejects_missing_calls_and_bad_arguments():
    args = {"is_bug": False, "summary": "ok", "metric": 0.9, "lower_is_better": False}
    review, _ = parse_review(ModelOutput.for_tool_call("m", REVIEW_TOOL, args))
    assert review is not None and review.metric == 0.9
    assert parse_review(ModelOutput.from_content("m", "fine"))[0] is None
    bad, why = parse_review(ModelOutput.for_tool_call("m", REVIEW_TOOL, {"is_bug": "maybe"}))
    assert bad is None and "invalid" in why


def test_journal_derives_stage_debug_depth_and_best():
    j = journal(node(0, bug=True), node(1, parent=0, bug=True), node(2, parent=1, metric=0.4),
                node(3, parent=2, metric=0.3), lower_is_better=True)  # fmt: skip
    assert [j.stage(n) for n in j.nodes] == ["draft", "debug", "debug", "improve"]
    assert [j.debug_depth(n) for n in j.nodes] == [0, 1, 2, 0]
    assert j.best_node().id == 3 and j.is_leaf(j.get(3)) and not j.is_leaf(j.get(0))
    j.lower_is_better = False
    assert j.best_node().id == 2


def test_truncate_keeps_both_ends():
    text = "A" * 100 + "B" * 100
    cut = truncate(text, head=10, tail=10)
    assert cut.startswith("A" * 10) and cut.endswith("B" * 10) and "180 characters cut" in cut


def test_prompts_follow_the_shared_format():
    parent = node(0, metric=0.8)
    parent.plan, parent.code, parent.output = "Ridge.", "# fit\nprint(1)", "# not a heading"
    other = node(1, metric=0.7)
    other.code = "print(2)"
    j = journal(parent, other)
    aide, aira = AidePrompter(TASK, "train.csv"), AiraPrompter(TASK)
    prompts = {
        "draft": aide("draft", [], j),
        "improve": aira("improve", [parent], j),
        "debug": aide("debug", [parent], j),
        "crossover": aira("crossover", [parent, other], j),
        "analyze": analyze_prompt(TASK, parent),
    }
    for name, prompt in prompts.items():
        assert operator_of(prompt) == name
        assert "ROC-AUC" in section(prompt, TASK_SECTION)  # demoted headings stay inside
    assert "print(1)" in section(prompts["improve"], PREVIOUS_CODE_SECTION)
    assert "not a heading" in section(prompts["debug"], EXECUTION_OUTPUT_SECTION)
    assert "print(2)" in section(prompts["crossover"], SECOND_CODE_SECTION)
    assert "Solution 0" in section(prompts["draft"], MEMORY_SECTION)
    assert REVIEW_TOOL in prompts["analyze"]


def test_complexity_tiers_grow_with_children():
    assert [complexity_tier(n) for n in (0, 1, 2, 3, 4, 9)] == [
        "simple", "simple", "normal", "normal", "complex", "complex"
    ]  # fmt: skip
