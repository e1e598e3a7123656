"""``proctor report --format json`` on large scored stores: linear, and 10k trials in seconds.

Not a test: it prints ``BENCH`` lines. The store is built quickly but realistically: the bundled
demo suite is run once, offline and scored (every arm, one epoch), and its trials are then
replayed through the real ``StoreWriter`` with new trial ids until there are N of them: the same
events (tools listed, model calls, tool calls and results, answers), every score the demo writes
and every judgment with its metadata. The scaling reference is measured in the same run: the time
at 4N over the time at N.

    python tests/bench/bench_report.py [--n 2500] [--big 10000] [--skip-40k] [--profile]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import gc
import io
import pstats
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import orjson
from _bench_line import bench_line

from proctor.engine.reports import collector, report
from proctor.engine.reports.report import build_report, report_json
from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.session import run_suite
from proctor.scenarios.demo import SUITE_DIR
from proctor.scenarios.loader import load_suite
from proctor.store.events import Event, Judged
from proctor.store.read.reader import JudgmentRecord, StoredEvent, StoreReader, TrialRecord
from proctor.store.records import JudgmentMeta
from proctor.store.write.writer import StoreWriter, TrialRow

ROOT = Path(__file__).resolve().parents[2]
GOAL_10K_S = 3.0
GOAL_SCALING_X = 5.0


@dataclass(frozen=True)
class _Template:
    trial: TrialRecord
    events: list[StoredEvent]
    judgments: list[JudgmentRecord]


def template_db(path: Path) -> Path:
    """The demo suite, offline, every arm, one epoch, scored: the trials every store replays."""
    if not path.exists():
        loaded = load_suite(SUITE_DIR)
        status = asyncio.run(run_suite(loaded, RunOptions(db=path, epochs=1, concurrency=8)))
        if status != "finished":
            raise SystemExit(f"template run ended {status}")
    return path


def _templates(db: Path) -> tuple[str, dict[str, object], list[StoredEvent], list[_Template]]:
    with StoreReader(db) as r:
        run = r.run()
        assert run is not None
        trials = r.trials()
        judgments = r.judgments()
        events: list[StoredEvent] = []
        while True:
            chunk = r.events_after(events[-1].id if events else 0, 5000)
            events.extend(chunk)
            if len(chunk) < 5000:
                break
    run_level = [e for e in events if e.trial_id is None]
    out = []
    for t in trials:
        mine = [e for e in events if e.trial_id == t.id and not e.abandoned and e.attempt == t.attempt]
        out.append(_Template(t, mine, [j for j in judgments if j.trial_id == t.id]))
    return run.suite, dict(run.config), run_level, out


async def _replay(db: Path, n: int, source: Path) -> None:
    suite, config, run_level, templates = _templates(source)
    writer = await StoreWriter.open(db, batch_size=2000)
    run_id = "bench-report"
    await writer.create_run(run_id, suite, config)
    rows = []
    for i in range(n):
        t = templates[i % len(templates)].trial
        rows.append(TrialRow(t.scenario, t.arm, t.model, i // len(templates), 1000 + i))
    await writer.add_trials(run_id, rows)
    starts = [e for e in run_level if e.kind != "run_finished"]
    for e in starts:
        writer.emit(run_id, e.event)
    for i in range(n):
        tpl = templates[i % len(templates)]
        meta = {
            j.pass_no: JudgmentMeta(j.prompt_version, j.prompt_hash, j.rubric_hash, j.temperature, j.source)
            for j in tpl.judgments
        }
        for e in tpl.events:
            ev: Event = e.event
            judgment = meta.get(ev.pass_no) if isinstance(ev, Judged) else None
            writer.emit(run_id, ev, trial_id=i + 1, attempt=0, judgment=judgment)
        if i % 200 == 0:
            await asyncio.sleep(0)
    for e in run_level:
        if e.kind == "run_finished":
            writer.emit(run_id, e.event)
    await writer.close()


def build_store(db: Path, n: int, cache: Path) -> Path:
    """A scored store of ``n`` trials at ``db`` (replays of the demo run kept in ``cache``)."""
    asyncio.run(_replay(db, n, template_db(cache / "template.db")))
    return db


def _time_report(db: Path, profile: bool = False) -> tuple[float, float]:
    """Seconds to build the report and to encode it as the CLI does (``report_json``: orjson, indent 2)."""
    prof = cProfile.Profile() if profile else None
    if prof is not None:
        prof.enable()
    start = time.perf_counter()
    data = build_report(db)
    built = time.perf_counter()
    report_json(data)
    encoded = time.perf_counter()
    if prof is not None:
        prof.disable()
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(30)
        print(s.getvalue())
    return built - start, encoded - built


# The event kinds the report decodes (model and judge usage, tool usage).
_REFERENCE_KINDS = ("model_response", "judgment", "tools_listed", "tool_call", "tool_result")


def _reference_time(db: Path) -> float:
    """A plain read of the rows a report looks at, timed in the same run: trials, scores,
    verdicts and the events of the kinds it decodes, with sqlite3, each JSON value decoded with
    orjson (no shapes, no models, no aggregation). A report/reference ratio moves much less
    with the machine's load than seconds do (both slow down alike)."""
    start = time.perf_counter()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        conn.execute("SELECT * FROM trials").fetchall()
        for (details,) in conn.execute("SELECT details FROM scores"):
            orjson.loads(details)
        for (verdict,) in conn.execute("SELECT verdict FROM judgments"):
            if verdict is not None:
                orjson.loads(verdict)
        marks = ",".join("?" * len(_REFERENCE_KINDS))
        cur = conn.execute(
            f"SELECT payload FROM events WHERE kind IN ({marks}) ORDER BY id", _REFERENCE_KINDS
        )
        while rows := cur.fetchmany(1000):
            for (payload,) in rows:
                orjson.loads(payload)
    finally:
        conn.close()
    return time.perf_counter() - start


def _collector_ab(db: Path, rounds: int = 2) -> None:
    """The report built with the collector paused (engine/reports/collector.py) and on, alternated
    in the same run: that machinery stays only while this shows it pays (issue 26)."""
    best: dict[str, tuple[float, float]] = {}
    for _ in range(rounds):
        for label, pause in (("paused", collector.collector_paused), ("on", contextlib.nullcontext)):
            report.collector_paused = pause
            try:
                gc.collect()
                t0, c0 = time.perf_counter(), time.process_time()
                build_report(db)
                t1, c1 = time.perf_counter(), time.process_time()
            finally:
                report.collector_paused = collector.collector_paused
            if label not in best or c1 - c0 < best[label][1]:
                best[label] = (t1 - t0, c1 - c0)
    print(
        "report build, best of {r}: collector paused {p[0]:.2f} s wall, {p[1]:.2f} s CPU; "
        "collector on {o[0]:.2f} s wall, {o[1]:.2f} s CPU".format(r=rounds, p=best["paused"], o=best["on"]),
        flush=True,
    )


def _cli_time(db: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of ``proctor report --format json`` in a fresh process. The CPU seconds
    (user + system) move much less with the machine's load than the wall time: they are the
    report's work, the wall time is that work plus waiting for a core."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "proctor.app.cli",
            "report",
            str(db),
            "--format",
            "json",
            "-o",
            str(db) + ".json",
        ],
        check=True,
        cwd=ROOT,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    print(f"report json through the CLI: {wall:.2f} s wall, {cpu:.2f} s CPU", flush=True)
    return wall, cpu


def _label(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else f"{n / 1000:g}k"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2500, help="the small store (reference for scaling)")
    parser.add_argument("--big", type=int, default=10_000, help="the headline store (10k goal)")
    parser.add_argument("--skip-40k", action="store_true", help="scale from n to 4n only")
    parser.add_argument("--profile", action="store_true", help="cProfile the headline report")
    parser.add_argument("--keep", type=Path, help="keep the stores in this folder (reused when present)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="proctor-report-") as d:
        tmp = args.keep or Path(d)
        tmp.mkdir(parents=True, exist_ok=True)
        sizes = sorted({args.n, args.big} | (set() if args.skip_40k else {4 * args.big}))
        times: dict[int, float] = {}
        builds: dict[int, float] = {}
        for n in sizes:
            db = tmp / f"report_{n}.db"
            if not db.exists():
                start = time.perf_counter()
                build_store(db, n, tmp)
                print(f"built {n} trials in {time.perf_counter() - start:.1f} s", flush=True)
            _time_report(db)  # warms the page cache: the figure is the report's work
            runs = [_time_report(db, profile=args.profile and n == args.big) for _ in range(2)]
            build, encode = min(runs, key=lambda r: r[0] + r[1])
            times[n], builds[n] = build + encode, build
            print(
                f"report json, {n} trials: {times[n]:.2f} s in process "
                f"(build_report {build:.2f} s, JSON encoding {encode:.2f} s)",
                flush=True,
            )
        _collector_ab(tmp / f"report_{args.big}.db")
        cli_runs = [_cli_time(tmp / f"report_{args.big}.db") for _ in range(3)]
        cli, cli_cpu = min(w for w, _ in cli_runs), min(c for _, c in cli_runs)
        reference = min(_reference_time(tmp / f"report_{args.big}.db") for _ in range(2))
        print(
            f"reference (rows read and decoded, no report), {args.big} trials: {reference:.2f} s; "
            f"report json in process / reference: {times[args.big] / reference:.1f}x, "
            f"through the CLI: {cli / reference:.1f}x",
            flush=True,
        )
        ok = bench_line(f"report_json_{_label(args.big)}", cli, "s", "<=", GOAL_10K_S)
        ok &= bench_line(f"report_json_{_label(args.big)}_cpu", cli_cpu, "s", "<=", GOAL_10K_S)
        ok &= bench_line(f"report_json_{_label(args.big)}_in_process", times[args.big], "s", "<=", GOAL_10K_S)
        bench_line(f"report_build_{_label(args.big)}", builds[args.big], "s", "<=", GOAL_10K_S)
        for n in sizes:
            if 4 * n in times:
                ok &= bench_line(
                    f"report_json_scaling_4x_{_label(n)}", times[4 * n] / times[n], "x", "<=", GOAL_SCALING_X
                )
                bench_line(
                    f"report_build_scaling_4x_{_label(n)}",
                    builds[4 * n] / builds[n],
                    "x",
                    "<=",
                    GOAL_SCALING_X,
                )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
