"""Difficulty: share of a pack's tasks where the strong baseline reaches each tier (JSON).

A pack where every baseline reaches gold teaches nothing; this says how far from that it is.
Usage: python bench/synth_difficulty.py [PACK_DIR]   (default: a fresh 100-task pack)
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from sandmle.benchmarks.synthetic.packs import PackSpec, generate_pack
from sandmle.harness.grading import grade_csv
from sandmle.harness.pack import load_pack

TIERS = ("gold", "silver", "bronze", "above_median", "none")


def _tier(report) -> str:
    for tier in TIERS[:-1]:
        if getattr(report, f"{tier}_medal" if tier != "above_median" else tier):
            return tier
    return "none"


def difficulty(pack_dir: Path) -> dict:
    pack = load_pack(pack_dir)
    result: dict = {"tasks": len(pack)}
    for baseline in ("dummy", "linear", "strong", "oracle"):
        tiers = [
            _tier(grade_csv(c.root / f"generation/submissions/{baseline}.csv", c))
            for c in pack.competitions
        ]
        result[baseline] = {t: round(tiers.count(t) / len(tiers), 3) for t in TIERS}
    return result


if __name__ == "__main__":
    if len(sys.argv) > 1:
        print(json.dumps(difficulty(Path(sys.argv[1])), indent=2))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            generate_pack(PackSpec(n=100, seed=123), Path(tmp) / "p", workers=2, progress=False)
            print(json.dumps(difficulty(Path(tmp) / "p"), indent=2))
