"""Reference values from the MLE-bench-lite grading spec, read from its copy in tests/fixtures.

``SPEC_TABLE`` is the spec's §2 medal-threshold illustration (MLE-bench's medal rule applied to
MLE-Dojo's private leaderboards), copied verbatim into
``tests/fixtures/mlebench/medal-illustration.md``; the competition without a board (``n/a``,
siim-isic) has no row here.
"""

from __future__ import annotations

from pathlib import Path

ILLUSTRATION = Path(__file__).parent / "fixtures" / "mlebench" / "medal-illustration.md"


def _read_table(path: Path) -> dict[str, tuple[int, bool, float, float, float, float]]:
    """``id -> (teams, lower, gold, silver, bronze, median)`` from the spec's Markdown table."""
    table = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 7 or not cells[1].isdigit():  # the header, the rule, n/a rows, prose
            continue
        cid, teams, direction, *numbers = cells
        gold, silver, bronze, median = map(float, numbers)
        table[cid] = (int(teams), direction == "lower", gold, silver, bronze, median)
    return table


SPEC_TABLE = _read_table(ILLUSTRATION)
"""(teams, lower, gold, silver, bronze, median) per lite competition, as the spec prints them."""
