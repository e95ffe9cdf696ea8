"""Generator yield per seed family: attempts per accepted task, rejection reasons, seconds.

Every seed of the seed table (or those named) gets SLOTS pack slots, generated exactly as a
pack generates them (same secret salt, same entropy scheme, same sanity gate), one process per
worker. Prints JSON: per seed, the mean attempts per accepted task (a slot rejected on every
attempt counts its attempts and is reported as ``empty``), the share of each gate rule among
the rejections, and wall seconds per accepted task (loaded machine: other jobs share the cores).

Each finished slot is appended to ``--rows`` (JSON lines) as it comes back, so a long run
can be summarized part-way (``--summarize ROWS``).

A generated pack holds the same records (``pack.yaml``, or ``generation/slots/*.json`` while it
runs: attempts and each rejection's rule), so ``--pack DIR`` gives the table of a real ``synth generate`` run, each slot
counted under the seed family it was drawn for (a substituted slot under the family that
failed it); its seconds are the pack's wall time per task, not per family.

Usage: python bench/synth_yield.py [--slots 20] [--first-slot 0] [--workers 2] [--seeds a,b]
       [--out FILE] [--rows FILE.jsonl] [--summarize FILE.jsonl] [--pack DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import yaml

from sandmle.benchmarks.synthetic.pipeline import generate_task
from sandmle.benchmarks.synthetic.secret import salt_words
from sandmle.benchmarks.synthetic.seeds import SEEDS

SECRET, PACK_SEED = "yield-bench-secret", 2029


def _slot(job: tuple[str, int, str]) -> dict:
    seed_id, index, tmp = job
    out = Path(tmp) / f"{seed_id}-{index}"
    start = time.perf_counter()
    outcome = generate_task(SEEDS[seed_id], index, PACK_SEED, out, salt=salt_words(SECRET))
    seconds = time.perf_counter() - start
    reasons = [f.rule for r in outcome.rejections for f in r.failures[:1]]
    attempts = getattr(outcome, "attempts", None) or len(outcome.rejections) + (
        1 if outcome.task_id else 0
    )
    return {
        "seed": seed_id,
        "index": index,
        "accepted": outcome.task_id is not None,
        "attempts": attempts,
        "reasons": reasons,
        "seconds": seconds,
        "substituted": getattr(outcome, "substitute_for", None) is not None,
    }


def pack_rows(pack: Path) -> list[dict]:
    """One row per slot of a generated pack: from its ``pack.yaml`` once written, else from the
    slot records of a run still going (``generation/slots``)."""
    manifest = pack / "pack.yaml"
    if manifest.is_file():
        tasks = yaml.safe_load(manifest.read_text(encoding="utf-8"))["tasks"]
        slots = [
            {**t, "task_id": t["id"], "rejections": [r.split(":", 1)[0] for r in t["rejections"]]}
            for t in tasks
        ]
    else:
        slots = []
        for path in sorted((pack / "generation" / "slots").glob("*.json")):
            slot = json.loads(path.read_text(encoding="utf-8"))
            rules = [r["failures"][0]["rule"] for r in slot["rejections"] if r["failures"]]
            slots.append({**slot, "rejections": rules})
    if not slots:
        raise SystemExit(f"error: {pack} holds neither pack.yaml nor slot records")
    return [
        {
            "seed": slot.get("substitute_for") or slot["seed_task"],
            "accepted": slot.get("task_id") is not None,
            "attempts": slot["attempts"],
            "reasons": slot["rejections"],
            "seconds": None,
            "substituted": slot.get("substitute_for") is not None,
        }
        for slot in slots
    ]


def summarize(rows: list[dict]) -> dict:
    by_seed: dict[str, list[dict]] = {}
    for row in rows:
        by_seed.setdefault(row["seed"], []).append(row)
    table = {}
    for seed_id, slots in by_seed.items():
        accepted = [s for s in slots if s["accepted"]]
        reasons = Counter(r for s in slots for r in s["reasons"])
        total = sum(reasons.values())
        table[seed_id] = {
            "slots": len(slots),
            "accepted": len(accepted),
            "empty": len(slots) - len(accepted),
            "attempts_per_task": round(sum(s["attempts"] for s in slots) / len(slots), 2),
            "max_attempts": max(s["attempts"] for s in slots),
            "rejection_shares": {k: round(v / total, 2) for k, v in reasons.most_common()},
            "seconds_per_task": _seconds(slots, len(accepted)),
            "substituted": sum(s["substituted"] for s in slots),
        }
    worst = max(table.values(), key=lambda t: t["attempts_per_task"])
    return {
        "seeds": dict(sorted(table.items(), key=lambda kv: -kv[1]["attempts_per_task"])),
        "worst_attempts_per_task": worst["attempts_per_task"],
        "aim": "no seed family above 3 attempts per accepted task",
    }


def _seconds(slots: list[dict], accepted: int) -> float | None:
    if any(s["seconds"] is None for s in slots):
        return None  # a pack's records carry no per-slot time
    return round(sum(s["seconds"] for s in slots) / max(accepted, 1), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=20)
    parser.add_argument("--first-slot", type=int, default=0, help="extend an earlier run")
    parser.add_argument("--workers", type=int, default=min(os.cpu_count() or 1, 8))
    parser.add_argument("--seeds", default="")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--rows", type=Path, default=None)
    parser.add_argument("--summarize", type=Path, default=None)
    parser.add_argument("--pack", type=Path, default=None, help="summarize a generated pack")
    args = parser.parse_args()
    if args.pack:
        result = summarize(pack_rows(args.pack))
        result["slots_per_seed_min"] = min(t["slots"] for t in result["seeds"].values())
        print(json.dumps(result, indent=2))
        return
    if args.summarize:
        lines = args.summarize.read_text(encoding="utf-8").splitlines()
        print(json.dumps(summarize([json.loads(line) for line in lines if line]), indent=2))
        return
    seed_ids = [s for s in args.seeds.split(",") if s] or list(SEEDS)
    start = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        slots = range(args.first_slot, args.first_slot + args.slots)
        jobs = [(s, i, tmp) for i in slots for s in seed_ids]
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            for future in as_completed([pool.submit(_slot, job) for job in jobs]):
                rows.append(future.result())
                if args.rows:
                    with args.rows.open("a", encoding="utf-8") as f:
                        f.write(json.dumps(rows[-1]) + "\n")
    result = summarize(rows)
    result.update(slots=args.slots, workers=args.workers, cpus=os.cpu_count())
    result["wall_seconds"] = round(time.perf_counter() - start, 1)
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
