"""Regenerate the packaged ``thresholds.csv`` from a folder of public leaderboards.

    python -m sandmle.benchmarks.mle_bench.make_thresholds LEADERBOARDS_DIR \\
        --source "MLE-Dojo/MLE-Dojo@667a8fd"

``LEADERBOARDS_DIR/<id>/private_leaderboard.csv`` (columns ``rank,score``, best first, as
MLE-Dojo ships them) is read for each lite competition, and MLE-bench's medal rule applied.
A competition without a file gets an *unavailable* row. The leaderboards themselves are
Kaggle data and stay out of the repository; only the derived numbers, the file's SHA-256
and the date are kept.
"""

from __future__ import annotations

import argparse
import csv
import datetime
from pathlib import Path

from sandmle.benchmarks.mle_bench.competitions import lite_competitions
from sandmle.benchmarks.mle_bench.thresholds import (
    TABLE,
    TABLE_COLUMNS,
    ThresholdEntry,
    leaderboard_entry,
)
from sandmle.errors import SandmleError

DEFAULT_OUT = Path(__file__).with_name(TABLE)


def build_entries(leaderboards: Path, source: str, board: str) -> list[ThresholdEntry]:
    """One entry per lite competition, in split order."""
    entries = []
    for lite in lite_competitions().values():
        relative = f"{lite.id}/{board}_leaderboard.csv"
        path = leaderboards / relative
        if not path.is_file():
            reason = f"unavailable: no {board} leaderboard in {source}"
            entries.append(ThresholdEntry(lite.id, lite.is_lower_better, None, reason))
            continue
        entry = leaderboard_entry(lite.id, path, f"{source}: {relative}")
        if entry.is_lower_better != lite.is_lower_better:
            # The direction is read from the board; a disagreement means a wrong or unsorted file.
            raise SandmleError(
                f"{path}: the leaderboard reads as lower-is-better={entry.is_lower_better}, "
                f"but {lite.id} is lower-is-better={lite.is_lower_better}"
            )
        entries.append(entry)
    return entries


def _row(entry: ThresholdEntry, date: str) -> dict[str, str]:
    t = entry.thresholds
    numbers = dict.fromkeys(("teams", "gold", "silver", "bronze", "median"), "")
    if t is not None:
        # repr() round-trips every float exactly.
        numbers = {
            "teams": str(t.teams),
            "gold": repr(t.gold),
            "silver": repr(t.silver),
            "bronze": repr(t.bronze),
            "median": repr(t.median),
        }
    return {
        "competition_id": entry.competition_id,
        "is_lower_better": "true" if entry.is_lower_better else "false",
        **numbers,
        "source": entry.source,
        "sha256": entry.sha256,
        "generated_on": date,
    }


def write_table(entries: list[ThresholdEntry], out: Path, date: str) -> None:
    with out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=TABLE_COLUMNS, lineterminator="\n")
        writer.writeheader()
        for entry in entries:
            writer.writerow(_row(entry, date))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "leaderboards", type=Path, help="folder holding <id>/<board>_leaderboard.csv"
    )
    parser.add_argument("--source", default="MLE-Dojo/MLE-Dojo@667a8fd", help="provenance label")
    parser.add_argument("--board", default="private", choices=("private", "public"))
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--date", default=datetime.date.today().isoformat())
    args = parser.parse_args(argv)
    if not args.leaderboards.is_dir():
        raise SystemExit(f"{args.leaderboards}: not a folder")
    entries = build_entries(args.leaderboards, args.source, args.board)
    write_table(entries, args.out, args.date)
    missing = [e.competition_id for e in entries if not e.available]
    print(
        f"wrote {args.out} ({len(entries)} competitions; unavailable: {', '.join(missing) or 'none'})"
    )


if __name__ == "__main__":
    main()
