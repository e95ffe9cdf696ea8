"""Load and export times of the leaderboard over 1,000 logs (JSON on stdout).

One real 24-sample log (the built-in pack's 12 tasks × 2 epochs by ``sandmle/heuristic`` under
AIDE, as the demo runs them; or ``--log``, e.g. one of ``sandmle demo``'s) is copied 1,000
times with varied model, scaffold and checkpoint names written into each copy's header (its
samples copied as stored). Cold: a fresh ``LogCache`` reads every log (and saves its disk
file). Warm: the same cache loads again with nothing changed. Restart: a new process's cache,
from the disk file. Incremental: one log is added, then loaded. Then: the ranked table with its
intervals and paired tests (100 entrants).

The export, as ``sandmle leaderboard export`` runs it: ``export_s`` with the log cache the app
and earlier exports keep (the logs' summaries already read), ``export_cold_s`` with an empty
one, ``export_cli_s`` the command's wall time (Python start-up and imports included, warm
cache) and ``export_cli_cold_s`` the same command with no cache at all (a user's first
export). ``drilldowns_reachable`` counts the samples whose drill-down the exported page can
open (read back from the file; each body is unpacked when its row is clicked), against
``samples``. A drill-down is rendered once per distinct sample record, so the copies share
theirs; ``drilldowns_new_log_s`` is what one log of new records costs (read in full, 24
drill-downs rendered), the export's price per log for logs that are all different.

Each ``*_cpu_s`` is the CPU time of the same run (this process, or the command's): on a
shared machine the wall time also counts the time other jobs held the cores.

The app itself (Streamlit's ``AppTest``, the script as a server runs it): ``app_cold_s`` the
first run of a fresh server process' cache, ``app_warm_reload_s`` a page reload (a new
session, nothing changed), ``app_click_s`` a click (the "All columns" toggle). Side by side,
Inspect View's list load: ``inspect_view_list_s``, the headers of every log read as its log
list reads them (``read_eval_log_headers_async``, as its ``/log-headers`` endpoint).

    python bench/leaderboard_load.py [--logs 1000] [--log REAL.eval] [--out result.json]
"""

from __future__ import annotations

import argparse
import base64
import copy
import gzip
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from inspect_ai import eval as inspect_eval

from sandmle.benchmarks.synthetic.task import synthetic
from sandmle.leaderboard.export import export_html
from sandmle.leaderboard.export_drill import drills, sample_keys
from sandmle.leaderboard.logs import LogCache
from sandmle.leaderboard.tables import leaderboard_table
from sandmle.scaffolds.aide import aide

MODELS = 25
SCAFFOLDS = ("aide", "aira", "react", "copy_sample_submission")
EPOCHS = 2
"""The built-in pack's 12 tasks × 2 epochs: a 24-sample log."""


def real_log(work: Path) -> Path:
    """One log of a real offline eval: the demo's heuristic policy under AIDE (two steps, as
    the demo runs it) on the built-in pack, twice over (a few minutes on 2 cores)."""
    (log,) = inspect_eval(
        synthetic(),
        model="sandmle/heuristic",
        solver=aide(steps=2),
        epochs=EPOCHS,
        log_dir=str(work / "seed"),
        display="none",
        max_samples=2,
    )
    assert log.status == "success", log.error
    return Path(log.location)


def raw_entries(source: Path) -> tuple[list[tuple[zipfile.ZipInfo, bytes]], dict]:
    """Every zip entry of ``source`` but its header, as stored (still compressed), and the
    header: a copy is written without decompressing or recompressing a sample."""
    entries = []
    with zipfile.ZipFile(source) as src, source.open("rb") as raw:
        for info in src.infolist():
            if info.filename == "header.json":
                header = json.loads(src.read(info))
                continue
            raw.seek(info.header_offset)
            local = raw.read(30)
            name_len, extra_len = struct.unpack("<HH", local[26:30])
            raw.seek(info.header_offset + 30 + name_len + extra_len)
            entries.append((info, raw.read(info.compress_size)))
    return entries, header


def varied_copy(source: Path, dest: Path, i: int, parts: tuple | None = None) -> None:
    """``source`` with another model, scaffold and eval id in its header; its samples are
    copied as stored (``raw_entries``), byte for byte."""
    entries, header = parts or raw_entries(source)
    header = json.loads(json.dumps(header))
    step = 100 * (i % 10)
    header["eval"]["model"] = f"mockllm/org/model-{i % MODELS}/checkpoint-{step}"
    header["eval"]["solver"] = f"sandmle/{SCAFFOLDS[i % len(SCAFFOLDS)]}"
    header["eval"]["eval_id"] = f"bench{i:06d}"
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as out:
        assert out.fp is not None
        for info, data in entries:
            copied = copy.copy(info)
            copied.flag_bits &= ~0x08  # sizes in the local header, no data descriptor
            copied.header_offset = out.fp.tell()
            out.fp.write(copied.FileHeader())
            out.fp.write(data)
            out.filelist.append(copied)
            out.NameToInfo[copied.filename] = copied
            out.start_dir = out.fp.tell()
        out.writestr("header.json", json.dumps(header))


def make_logs(source: Path, log_dir: Path, count: int) -> None:
    log_dir.mkdir(parents=True)
    stem = source.stem.rsplit("_", 1)[0]
    parts = raw_entries(source)
    for i in range(count):
        varied_copy(source, log_dir / f"{stem}_bench{i:06d}.eval", i, parts)


def exported_keys(page: Path) -> set[str]:
    """The sample addresses whose drill-down the exported page can open (its index)."""
    text = page.read_text(encoding="utf-8")
    head = "<script type='application/octet-stream' id='drill-index'>"
    start = text.index(head) + len(head)
    packed = text[start : text.index("</script>", start)]
    index = json.loads(gzip.decompress(base64.b64decode(packed)))
    return set(index["samples"])


def export_command(log_dir: Path, out: Path, cache_file: Path | None) -> tuple[float, float]:
    """``sandmle leaderboard export`` as a user runs it, with the log cache in ``cache_file``
    (a missing file: nothing read before): wall and CPU seconds."""
    env = {**os.environ, "SANDMLE_LEADERBOARD_CACHE": str(cache_file)}
    command = [sys.executable, "-m", "sandmle.cli", "leaderboard", "export", str(log_dir),
               "--out", str(out)]  # fmt: skip
    start, children = time.perf_counter(), os.times()
    subprocess.run(command, check=True, capture_output=True, env=env)
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - children.children_user) + (
        after.children_system - children.children_system
    )
    return wall, cpu


def export_times(log_dir: Path, work: Path, cache: LogCache) -> dict[str, object]:
    """The export with the kept log cache, with an empty one, and as the command."""
    out = work / "all.html"
    start, cpu = time.perf_counter(), time.process_time()
    export_html([log_dir], out, cache)
    warm, warm_cpu = time.perf_counter() - start, time.process_time() - cpu
    start, cpu = time.perf_counter(), time.process_time()
    export_html([log_dir], work / "cold.html", LogCache())
    cold, cold_cpu = time.perf_counter() - start, time.process_time() - cpu
    cli, cli_cpu = export_command(log_dir, work / "cli.html", cache.file)
    cli_cold, cli_cold_cpu = export_command(log_dir, work / "cli-cold.html", work / "none.pkl")
    samples = cache.load([log_dir]).samples
    reachable = exported_keys(out) & set(sample_keys(samples))
    first = samples[samples["log"] == samples["log"].iloc[0]]  # its records never seen: read
    start = time.perf_counter()
    drills(first, sample_keys(first))
    new_log = time.perf_counter() - start
    return {
        "export_s": round(warm, 3),
        "export_cpu_s": round(warm_cpu, 3),
        "export_cold_s": round(cold, 3),
        "export_cold_cpu_s": round(cold_cpu, 3),
        "export_cli_s": round(cli, 3),
        "export_cli_cpu_s": round(cli_cpu, 3),
        "export_cli_cold_s": round(cli_cold, 3),
        "export_cli_cold_cpu_s": round(cli_cold_cpu, 3),
        "export_bytes": out.stat().st_size,
        "samples": len(samples),
        "drilldowns_reachable": len(reachable),
        "drilldowns_new_log_s": round(new_log, 3),
    }


def app_times(log_dir: Path, work: Path) -> dict[str, float]:
    """Cold run, warm reload and one click of the real app script, in seconds."""
    from streamlit.testing.v1 import AppTest

    from sandmle.leaderboard.cli import APP_FILE

    os.environ["SANDMLE_LEADERBOARD_CACHE"] = str(work / "app-cache.pkl")
    os.environ["SANDMLE_LEADERBOARD_DIRS"] = str(log_dir)
    sys.argv = [str(APP_FILE)]  # the app reads its log dirs from argv first

    cpu: list[float] = []

    def run(app: AppTest) -> float:
        start, began = time.perf_counter(), time.process_time()
        app.run(timeout=600)
        assert not app.exception, app.exception
        cpu.append(time.process_time() - began)
        return time.perf_counter() - start

    first = AppTest.from_file(str(APP_FILE), default_timeout=600)
    cold = run(first)
    again = AppTest.from_file(str(APP_FILE), default_timeout=600)  # a reload: a new session
    warm = run(again)
    again.toggle(key="all_columns").set_value(True)
    click = run(again)
    return {"app_cold_s": round(cold, 3), "app_warm_reload_s": round(warm, 3),
            "app_warm_reload_cpu_s": round(cpu[1], 3), "app_click_s": round(click, 3),
            "app_click_cpu_s": round(cpu[2], 3)}  # fmt: skip


def inspect_view_list(log_dir: Path) -> float:
    import asyncio

    from inspect_ai.log import list_eval_logs, read_eval_log_headers_async

    start = time.perf_counter()  # what inspect view's /log-headers does (fastapi_server.py)
    asyncio.run(read_eval_log_headers_async(list_eval_logs(str(log_dir))))
    return time.perf_counter() - start


def timed(cache: LogCache, log_dir: Path) -> tuple[float, int]:
    start = time.perf_counter()
    loaded = cache.load([log_dir])
    return time.perf_counter() - start, len(loaded.runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=1000)
    parser.add_argument("--log", type=Path, help="a real log to copy (default: make one)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sandmle-lb-bench-") as tmp:
        work = Path(tmp)
        source = args.log or real_log(work)
        with zipfile.ZipFile(source) as archive:
            per_log = sum(n.startswith("samples/") for n in archive.namelist())
        log_dir = work / "logs"
        make_logs(source, log_dir, args.logs)
        cache = LogCache.persistent(work / "cache.pkl")
        cpu = time.process_time()
        cold, runs = timed(cache, log_dir)
        cold_cpu = time.process_time() - cpu
        warm, _ = timed(cache, log_dir)
        restart, _ = timed(LogCache.persistent(work / "cache.pkl"), log_dir)
        start = time.perf_counter()
        entrants = len(leaderboard_table(cache.load([log_dir]).samples))
        table = time.perf_counter() - start
        exports = export_times(log_dir, work, cache)
        app = app_times(log_dir, work)
        view_list = inspect_view_list(log_dir)
        varied_copy(source, log_dir / f"{source.stem}_new.eval", args.logs)
        incremental, _ = timed(cache, log_dir)
    result = {
        "logs": args.logs,
        "samples_per_log": per_log,
        "runs_loaded": runs,
        "cold_s": round(cold, 3),
        "cold_cpu_s": round(cold_cpu, 3),
        "warm_s": round(warm, 4),
        "restart_from_disk_cache_s": round(restart, 4),
        "incremental_one_new_s": round(incremental, 4),
        "table_s": round(table, 3),
        "table_entrants": entrants,
        **exports,
        **app,
        "inspect_view_list_s": round(view_list, 3),
        "app_warm_reload_vs_inspect_view_list": round(app["app_warm_reload_s"] / view_list, 2),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "cores": os.cpu_count(),
        "aim": {
            "export_s": 10.0,
            "export_cli_cold_s": 10.0,
            "app_warm_reload_s": 2.0,
            "app_click_s": 1.0,
            "warm_s": 0.5,
        },
    }
    result["meets_aim"] = (
        exports["export_s"] <= 10.0
        and exports["export_cli_cold_s"] <= 10.0
        and exports["drilldowns_reachable"] == exports["samples"]
        and app["app_warm_reload_s"] <= 2.0
        and app["app_click_s"] <= 1.0
        and warm < 0.5
    )
    result["headline"] = (
        f"{args.logs} logs × {per_log} samples: export {exports['export_s']} s "
        f"(as a first command, no cache: {exports['export_cli_cold_s']} s wall, "
        f"{exports['export_cli_cold_cpu_s']} s CPU), "
        f"{exports['drilldowns_reachable']}/{exports['samples']} drill-downs; "
        f"app warm reload {app['app_warm_reload_s']} s"
    )
    text = json.dumps(result, indent=2)
    print(text)
    print(json.dumps(result))  # one line, for run_all and the docs
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
