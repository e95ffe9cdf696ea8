"""Start-up cost of the ``sandmle`` command and its subcommands' help (JSON on stdout).

Each figure is the median wall time of ``python -m sandmle.cli ... --help`` in a fresh
process, plus the cumulative import time of ``sandmle.cli`` from ``python -X importtime``
and its five most expensive top-level imports.

    python bench/cli_import_time.py [--repeat 3] [--out result.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = [[], ["eval"], ["demo"], ["study"], ["grade"], ["leaderboard"],
            ["leaderboard", "export"], ["train"], ["synth"], ["sandbox"]]  # fmt: skip
AIM_S = 1.0


def help_time(command: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "sandmle.cli", *command, "--help"],
            check=True,
            capture_output=True,
        )
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def import_profile() -> dict[str, object]:
    """``-X importtime`` of ``sandmle.cli``: total and the heaviest top-level imports (s)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import sandmle.cli"],
        check=True,
        capture_output=True,
        text=True,
    )
    rows = []
    for line in proc.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        name = parts[2].rstrip()
        depth = (len(name) - len(name.lstrip()) - 1) // 2  # two spaces per nesting level
        rows.append((name.strip(), int(parts[1]) / 1e6, depth))
    total = next((c for name, c, depth in rows if name == "sandmle.cli" and depth == 0), None)
    # direct imports of sandmle.cli are the lines at depth 1 before its own line
    end = next(i for i, (name, _, depth) in enumerate(rows) if name == "sandmle.cli" and depth == 0)
    start = max((i for i, (_, _, depth) in enumerate(rows[:end]) if depth == 0), default=-1) + 1
    direct = sorted(((n, c) for n, c, depth in rows[start:end] if depth == 1), key=lambda r: -r[1])
    return {
        "sandmle_cli_import_s": total,
        "heaviest_direct_imports_s": {n: round(c, 3) for n, c in direct[:5]},
    }


def baseline_s(repeat: int) -> float:
    """A fresh Python importing only typer: the floor of any typer command's help."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import typer.main"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    helps = {
        " ".join(["sandmle", *c, "--help"]): round(help_time(c, args.repeat), 3) for c in COMMANDS
    }
    result = {
        "python_with_typer_s": round(baseline_s(args.repeat), 3),
        "help_s": helps,
        **import_profile(),
        "aim_s": AIM_S,
        "over_aim": [name for name, seconds in helps.items() if seconds >= AIM_S],
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
