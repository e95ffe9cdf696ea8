"""The shared search machinery: reply parsing, review reading, the journal, prompt layout."""

import pytest
from inspect_ai.model import ModelOutput

from sandmle.scaffolds.aide_prompts import AidePrompter
from sandmle.scaffolds.aira_prompts import (
    DEBUG_TIPS,
    LIBRARY_TIPS,
    AiraPrompter,
    complexity_tier,
)
from sandmle.scaffolds.prompt_format import (
    BUGGY_CODE_SECTION,
    DATA_SECTION,
    ENVIRONMENT_SECTION,
    EXECUTION_OUTPUT_SECTION,
    FIRST_CODE_SECTION,
    IMPROVE_CODE_SECTION,
    INSTRUCTIONS_SECTION,
    MEMORY_SECTION,
    REVIEW_TOOL,
    SECOND_CODE_SECTION,
    TASK_SECTION,
    data_dir_of,
    operator_of,
    section,
)
from sandmle.scaffolds.search import Budget, Journal, Search, parse_proposal, parse_review
from sandmle.scaffolds.search.engine import RESERVE_S
from sandmle.scaffolds.search.prompts import Environment, PromptParts, analyze_prompt, memory_text
from sandmle.scaffolds.search.responses import printed_metric
from sandmle.scaffolds.search.runner import truncate
from tests.scaffolds.test_aide import journal, node

TASK = (
    "Solve it.\n- The competition's data is in `/srv/comp/data` (read-only).\n\n"
    "# Plant Watering\n\nPredict `needs_water`.\n\n## Evaluation\nROC-AUC."
)
ENV = Environment(steps_left=3, steps_total=5, time_left_s=5400, hardware="2 CPUs, no GPU",
                  packages=("pandas 2.2",))  # fmt: skip


def test_proposal_joins_compiling_blocks_and_skips_the_rest():
    p = parse_proposal(
        "Use a tree.\n```bash\nls\n```\n```python\nx = 1\n```\nThen\n```\nprint(x)\n```"
    )
    assert p.code == "x = 1\n\nprint(x)" and p.plan == "Use a tree."
    broken = parse_proposal("Plan.\n```python\ndef f(:\n```\n```python\nprint(2)\n```")
    assert broken.code == "print(2)"
    assert parse_proposal("```python\nx = 1\n").code == "x = 1"  # an unclosed block counts


@pytest.mark.parametrize(
    ("text", "code", "problem"),
    [
        ("import os\nprint(os.sep)", "import os\nprint(os.sep)", ""),  # unfenced code
        ("I would fit a tree.", "", "no code block"),
        ("", "", "empty"),
        ("Plan.\n```python\ndef f(:\n    pass\n```", "", "does not compile"),
    ],
)
def test_proposal_falls_back_to_the_whole_reply_only_when_it_compiles(text, code, problem):
    p = parse_proposal(text)
    assert p.code == code and problem in p.problem


def test_review_by_tool_call_or_json_text_with_missing_fields_filled():
    args = {"is_bug": False, "summary": "ok", "metric": 0.9, "lower_is_better": False}
    review, _ = parse_review(ModelOutput.for_tool_call("m", REVIEW_TOOL, args))
    assert review is not None and review.metric == 0.9 and review.source == "tool"
    text = ModelOutput.from_content("m", 'My review: {"metric": "0.7", "summary": "fine"} end')
    review, _ = parse_review(text)
    assert review is not None and review.source == "text" and review.metric == 0.7
    assert review.is_bug is False and set(review.filled) == {"is_bug", "lower_is_better"}
    missing = parse_review(ModelOutput.for_tool_call("m", REVIEW_TOOL, {"summary": "?"}))[0]
    assert missing is not None and missing.is_bug and missing.metric is None
    none, why = parse_review(ModelOutput.from_content("m", "Looks fine!"))
    assert none is None and "JSON" in why


def test_reported_metric_must_appear_in_the_output_unless_a_metric_line_says_it():
    assert printed_metric("fold 1: 0.81\nmean cv 0.8123", 0.8123) == (0.8123, "")
    metric, why = printed_metric("mean cv 0.8123", 0.95)
    assert metric is None and "does not appear" in why
    assert printed_metric("score 0.5\nValidation metric: 0.61", 0.95) == (0.61, "")
    assert printed_metric("nothing printed", None) == (None, "")


def test_journal_derives_stage_debug_depth_best_and_failed_chains():
    j = journal(node(0, bug=True), node(1, parent=0, bug=True), node(2, parent=1, metric=0.4),
                node(3, parent=2, metric=0.3), node(4, parent=3, bug=True),
                node(5, parent=4, bug=True), lower_is_better=True)  # fmt: skip
    assert [j.stage(n) for n in j.nodes][:4] == ["draft", "debug", "debug", "improve"]
    assert [j.debug_depth(n) for n in j.nodes][:4] == [0, 1, 2, 0]
    assert j.best_node().id == 3 and not j.is_leaf(j.get(0))
    assert [n.id for n in j.failed_chain(j.get(5))] == [4, 5]
    assert [n.id for n in j.failed_chain(j.get(1))] == [0, 1]
    j.lower_is_better = False
    assert j.best_node().id == 2


def test_truncate_keeps_both_ends():
    text = "A" * 100 + "B" * 100
    cut = truncate(text, head=10, tail=10)
    assert cut.startswith("A" * 10) and cut.endswith("B" * 10) and "180 characters cut" in cut


def test_memory_budget_keeps_the_newest_entries():
    nodes = [node(i, metric=0.1 * i) for i in range(30)]
    for n in nodes:
        n.plan = "word " * 40
    full, cut = memory_text(nodes), memory_text(nodes, max_tokens=200)
    assert len(cut) < len(full) and "older entries left out" in cut
    assert cut.rstrip().endswith(f"Validation Metric: {nodes[-1].metric}")


def prompts() -> dict[str, str]:
    parent = node(0, metric=0.8)
    parent.plan, parent.code, parent.output = "Ridge.", "# fit\nprint(1)", "# not a heading"
    other = node(1, metric=0.7)
    other.code = "print(2)"
    buggy = node(2, parent=0, bug=True)
    buggy.code, buggy.output = "print(3)", "Traceback: boom"
    j = journal(parent, other, buggy)
    parts = PromptParts(TASK, "train.csv (3 rows)")
    aide, aira = AidePrompter(parts, fork=True), AiraPrompter(parts)
    return {
        "draft": aide("draft", [], j, ENV),
        "improve": aira("improve", [parent], j, ENV),
        "debug": aide("debug", [buggy], j, ENV),
        "crossover": aira("crossover", [parent, other], j, ENV),
        "analyze": analyze_prompt(TASK, parent),
    }


def test_prompts_show_their_operator_in_their_sections_only():
    made = prompts()
    for name, prompt in made.items():
        assert operator_of(prompt) == name
        assert "Operator" not in prompt
        assert "ROC-AUC" in section(prompt, TASK_SECTION)  # demoted headings stay inside
        if name != "analyze":
            env = section(prompt, ENVIRONMENT_SECTION)
            assert "1.5 hours" in env and "3 of 5" in env and "2 CPUs" in env and "pandas" in env
            assert "/srv/comp/data" in prompt  # the data dir the task names
    assert "print(1)" in section(made["improve"], IMPROVE_CODE_SECTION)
    assert "not a heading" in section(made["improve"], EXECUTION_OUTPUT_SECTION)
    assert "boom" in section(made["debug"], EXECUTION_OUTPUT_SECTION)
    assert "print(3)" in section(made["debug"], BUGGY_CODE_SECTION)
    assert "print(2)" in section(made["crossover"], SECOND_CODE_SECTION)
    assert "Validation Metric: 0.8" in section(made["draft"], MEMORY_SECTION)
    assert "train.csv" in section(made["draft"], DATA_SECTION)
    assert REVIEW_TOOL in made["analyze"]
    assert data_dir_of(TASK) == "/srv/comp/data"


def test_aide_reference_prompts_state_only_what_aideml_states():
    """aideml: the draft lists the packages (``Agent._prompt_environment``, aide/agent.py:95-115);
    improve and debug state no resources. The time, steps and hardware are MLE-bench's fork."""
    j = journal(node(0, metric=0.8), node(1, parent=0, bug=True))
    reference = AidePrompter(PromptParts(TASK, "train.csv (3 rows)"))
    draft = section(reference("draft", [], j, ENV), ENVIRONMENT_SECTION)
    assert "pandas" in draft and "1.5 hours" not in draft and "CPUs" not in draft
    for operator, parents in (("improve", [j.get(0)]), ("debug", [j.get(1)])):
        assert section(reference(operator, parents, j, ENV), ENVIRONMENT_SECTION) is None


def test_parents_show_their_code_not_their_plan_and_no_metric_line_is_required():
    """aideml shows ``Previous solution``/``Previous (buggy) implementation`` as code only
    (aide/agent.py:219-221, 252 @ 9643875), aira-dojo ``prev_code``/``prev_buggy_code``/
    ``prev_code1``/``prev_code2`` (aira_operators/*.yaml @ c795d86); neither asks for a
    machine-readable metric line (aide/agent.py:120)."""
    made = prompts()
    assert "Ridge." not in section(made["improve"], IMPROVE_CODE_SECTION)
    assert "Ridge." not in section(made["crossover"], FIRST_CODE_SECTION)
    assert section(made["debug"], BUGGY_CODE_SECTION).startswith("```python")
    assert all("Validation metric:" not in p for p in made.values())


def test_aira_library_notes_stand_where_aira_dojo_has_them():
    """draft/improve/crossover carry the AdamW, lightgbm and timm notes
    (aira_operators/draft.yaml:37-39, improve.yaml:44-46, crossover.yaml:56-58 @ c795d86), debug
    the two timm notes (debug.yaml:63-64); aideml's prompts have none."""
    made = prompts()
    aira_debug = AiraPrompter(PromptParts(TASK))("debug", [node(2, parent=0, bug=True)],
                                                journal(node(0), node(2, parent=0, bug=True)), ENV)  # fmt: skip
    aira_draft = AiraPrompter(PromptParts(TASK))("draft", [], journal(node(0)), ENV)
    for prompt in (made["improve"], made["crossover"], aira_draft):
        rules = section(prompt, INSTRUCTIONS_SECTION)
        assert all(tip in rules for tip in LIBRARY_TIPS)
    assert all(t in section(aira_debug, INSTRUCTIONS_SECTION) for t in DEBUG_TIPS)
    assert LIBRARY_TIPS[0] not in aira_debug
    assert all("timm" not in made[op] and "AdamW" not in made[op] for op in ("draft", "debug"))


def test_complexity_tiers_grow_with_children():
    assert [complexity_tier(n) for n in (0, 1, 2, 3, 4, 9)] == [
        "simple", "simple", "normal", "normal", "complex", "complex"
    ]  # fmt: skip


def test_prompts_state_the_run_limit_as_min_of_exec_timeout_and_time_left():
    """aira-dojo: ``exec_timeout = int(min(cfg.execution_timeout, remaining_time))`` in every
    operator prompt (``core/solvers/operators/draft.py:40``, ``improve.py``/``debug.py`` the
    same @ c795d86); the prompt must not promise 4 hours with 10 minutes left."""
    parts = PromptParts("A task.", exec_timeout=14400)
    for prompter in (AidePrompter(parts), AidePrompter(parts, fork=True), AiraPrompter(parts)):
        search = Search("A task.", Journal(blank_root=True), prompter,
                        Budget(5, time_limit=600 + RESERVE_S, exec_timeout=14400), "t")  # fmt: skip
        env = search.environment(16_000)
        assert env.run_timeout_s is not None and 590 <= env.run_timeout_s <= 600
        assert env.steps_left == 4  # the blank root took one
        text = prompter("draft", [], search.journal, env)
        assert "must finish within 9." in text or "must finish within 10 minutes" in text
        assert "4 hours" not in text
        if not isinstance(prompter, AidePrompter) or prompter.fork:
            assert "Steps left: 4 of 4" in section(text, ENVIRONMENT_SECTION)
