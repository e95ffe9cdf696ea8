from sandmle.harness.search_tree import STORE_KEY
from sandmle.scaffolds.aide import aide
from tests.scaffolds.conftest import BROKEN_SCRIPT, ScriptedModel, good, reply


def test_aide_tree_has_draft_debug_improve_and_valid_submission(pack_dir, run_eval):
    model = ScriptedModel(
        replies={"draft": [reply(BROKEN_SCRIPT), good(0.7)], "improve": [good(0.9, alpha=0.5)]}
    )
    log = run_eval(
        aide(steps=5, num_drafts=2, debug_prob=1.0), model, pack_dir, tasks="plant-watering"
    )
    assert log.status == "success"
    [sample] = log.samples
    nodes = sample.store[STORE_KEY]
    ops = [n["operator"] for n in nodes]
    assert ops[:2] == ["draft", "draft"]
    assert "debug" in ops and "improve" in ops
    assert nodes[0]["is_bug"] is True
    debug = next(n for n in nodes if n["operator"] == "debug")
    assert debug["parent"] == 0
    assert sample.scores["medal_scorer"].value["valid_submission"] == 1.0
