"""Engine throughput and memory: offline trials against a real stdio MCP server, persisted to SQLite.

Not a test: it prints figures, one ``BENCH`` line each, and compares the persistence figure with
a reference measured in the same run (the raw ``sqlite3.executemany`` ceiling for the same rows:
each event's and its fact's, as the writer stores them),
because these machines are noisy.

    python tests/bench/bench_engine.py [--trials 1000] [--concurrency 32] [--rss-trials 10000]

* ``engine_trials_per_s``: ``--trials`` unscored trials, one MCP stdio call each, end to end
  (server start and stop, every event committed); floor 200 trials/s. Scored runs and the
  demo's codeintel server are printed as plain lines.
* ``persistence_vs_executemany``: raw ``executemany`` rows/s over ``StoreWriter`` events/s for the
  same rows and batch size (serialization and redaction included).
* ``engine_rss_growth_10k_scored``: resident memory after ``--rss-trials`` scored trials minus
  after the first ``--rss-warmup`` (in a child process of its own, so nothing else run here counts).
  Also printed: the RSS once the run has returned, which includes the end-of-run work.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench_line import bench_line
from _engine_workload import (
    DEFAULT_CONCURRENCY,
    bench_suite,
    describe,
    engine,
    rss_mb,
    valid,
)

from proctor.scenarios.demo import SUITE_DIR
from proctor.store.event_facts import FACT_KINDS, event_fact
from proctor.store.events import Event, ModelResponse, ToolCall, ToolCallRequest, ToolResult, Usage
from proctor.store.read.reader import TrialRecord
from proctor.store.schema import configure, migrate
from proctor.store.write.writer import StoreWriter, TrialRow, encode_payload

TRIAL_FLOOR_PER_S = 200.0
PERSISTENCE_MAX_RATIO = 1.5
RSS_GROWTH_MAX_MB = 50.0


def _sample_events(n: int) -> list[Event]:
    """A realistic mix: model responses, tool calls and tool results of a few hundred bytes."""
    out: list[Event] = []
    for i in range(n):
        k = i % 3
        if k == 0:
            out.append(
                ModelResponse(
                    turn=1,
                    model="offline:single",
                    text="",
                    tool_calls=[
                        ToolCallRequest(call_id=f"c{i}", name="find_definition", arguments={"symbol": "f"})
                    ],
                    stop_reason="tool_use",
                    usage=Usage(input_tokens=900, output_tokens=12, estimated=True),
                    cost_usd=0.0,
                    latency_s=0.001,
                )
            )
        elif k == 1:
            out.append(
                ToolCall(
                    call_id=f"c{i}", server="codeintel", tool="find_definition", arguments={"symbol": "f"}
                )
            )
        else:
            body = "\n".join(f"{n:>5} | line {n} of the definition" for n in range(10))
            out.append(
                ToolResult(
                    call_id=f"c{i}",
                    server="codeintel",
                    tool="find_definition",
                    content=body,
                    is_error=False,
                    latency_s=0.002,
                )
            )
    return out


def raw_ceiling(
    db: Path, rows: list[tuple[object, ...]], facts: list[tuple[object, ...] | None], batch: int
) -> float:
    """Rows/s for plain executemany of pre-serialized rows, one transaction per batch: each event's
    row and, for the kinds a report reads (``store.event_facts``), its fact row, as the writer
    stores them (``facts[i]`` is event i's, without its id: ids are 1..n in a new table)."""
    conn = sqlite3.connect(db, isolation_level=None)
    configure(conn)
    migrate(conn)
    start = time.perf_counter()
    for i in range(0, len(rows), batch):
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO events (run_id, trial_id, attempt, ts, kind, encoding, payload) VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows[i : i + batch],
        )
        conn.executemany(
            "INSERT INTO event_facts (event_id, trial_id, attempt, kind, facts) VALUES (?, ?, ?, ?, ?)",
            [(i + j + 1, *f) for j, f in enumerate(facts[i : i + batch]) if f is not None],
        )
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return len(rows) / elapsed


async def writer_rate(db: Path, events: list[Event], batch: int) -> float:
    """Events/s through StoreWriter, serialization included, until the last one is committed.

    It yields to the event loop every batch, as the engine does between events."""
    writer = await StoreWriter.open(db, batch_size=batch)
    await writer.create_run("bench", "bench", {})
    await writer.add_trials("bench", [TrialRow("s", "a", "m", 0, 0)])
    start = time.perf_counter()
    for i, ev in enumerate(events):
        writer.emit("bench", ev, trial_id=1)
        if i % batch == 0:
            await asyncio.sleep(0)
    await writer.close()
    return len(events) / (time.perf_counter() - start)


def persistence(tmp: Path, n: int = 60_000, batch: int = 512) -> tuple[float, float]:
    events = _sample_events(n)
    rows = []
    facts: list[tuple[object, ...] | None] = []
    for ev in events:
        encoding, payload = encode_payload(ev)
        rows.append(("bench", 1, 0, time.time(), ev.kind, encoding, payload))
        fact = event_fact(ev) if ev.kind in FACT_KINDS else None
        facts.append(None if fact is None else (1, 0, ev.kind, fact))
    raw = raw_ceiling(tmp / "raw.db", rows, facts, batch)
    ours = asyncio.run(writer_rate(tmp / "writer.db", events, batch))
    stored = [_row_counts(tmp / name) for name in ("raw.db", "writer.db")]
    if stored[0] != stored[1]:  # the reference must write what the writer writes
        raise SystemExit(f"raw executemany stored {stored[0]} rows, StoreWriter {stored[1]}")
    return raw, ours


def _row_counts(db: Path) -> tuple[int, int]:
    with sqlite3.connect(db) as conn:
        events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        facts = conn.execute("SELECT count(*) FROM event_facts").fetchone()[0]
    return int(events), int(facts)


def rss_child(trials: int, warmup: int, concurrency: int) -> int:
    """In a process of its own: RSS after ``warmup`` scored trials and after ``trials``; prints JSON."""
    marks: dict[str, float] = {}
    done = 0

    def on_progress(record: TrialRecord) -> None:
        nonlocal done
        done += 1
        if done in (warmup, trials):
            gc.collect()
            marks["warm" if done == warmup else "end"] = rss_mb()

    with tempfile.TemporaryDirectory(prefix="proctor-bench-rss-") as d:
        tmp = Path(d)
        e = engine(bench_suite(tmp), tmp / "rss.db", trials, concurrency, None, True, on_progress)
        gc.collect()
        marks["after_run"] = rss_mb()  # the run's end-of-run work included (score_unscored, closing)
    print(json.dumps({**marks, **e}))
    return 0


def rss_growth(trials: int, warmup: int, concurrency: int) -> dict[str, float]:
    args = [sys.executable, __file__, "--rss-child", str(trials), "--rss-warmup", str(warmup)]
    out = subprocess.run(
        [*args, "--concurrency", str(concurrency)], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(f"the memory run failed:\n{out.stderr[-2000:]}")
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY)
    parser.add_argument("--rss-trials", type=int, default=10_000, help="scored trials of the memory figure")
    parser.add_argument("--rss-warmup", type=int, default=500, help="trials before the first RSS reading")
    parser.add_argument("--rss-child", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        return rss_child(args.rss_child, args.rss_warmup, args.concurrency)

    with tempfile.TemporaryDirectory(prefix="proctor-bench-") as d:
        tmp = Path(d)
        suite = bench_suite(tmp)
        e = engine(suite, tmp / "engine.db", args.trials, args.concurrency, None, scored=False)
        scored = engine(suite, tmp / "scored.db", args.trials, args.concurrency, None, scored=True)
        demo = engine(SUITE_DIR, tmp / "demo.db", args.trials, args.concurrency, ["codeintel"], scored=True)
        raw, ours = persistence(tmp)
    rss_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rss_children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    mem = rss_growth(args.rss_trials, args.rss_warmup, args.concurrency)

    describe("engine, minimal stdio server, events persisted, unscored", e)
    describe("same, every trial also scored (2 judge passes)", scored)
    describe("demo codeintel server (real index lookups), scored", demo)
    print(
        f"peak RSS {rss_self:.1f} MiB (largest child {rss_children:.1f} MiB); concurrency {args.concurrency}"
    )
    print(
        f"persistence (same rows, same batch size, same run): raw executemany {raw:.0f} rows/s, "
        f"StoreWriter {ours:.0f} events/s (serialization and redaction included)"
    )
    print(
        f"memory: {mem['trials']:.0f} scored trials ({mem['finished']:.0f} finished) in {mem['elapsed_s']:.1f} s; "
        f"RSS {mem['warm']:.1f} MB after {args.rss_warmup}, {mem['end']:.1f} MB after {args.rss_trials}, "
        f"{mem['after_run']:.1f} MB once the run returned (its end-of-run work included)"
    )
    if not (valid(e) and valid(scored) and valid(demo)):
        print("not every trial finished with an MCP call: the throughput figures below do not count")
    ok = bench_line("engine_trials_per_s", e["trials_per_s"], "trials/s", ">=", TRIAL_FLOOR_PER_S, valid(e))
    ok &= bench_line("persistence_vs_executemany", raw / ours, "x", "<=", PERSISTENCE_MAX_RATIO)
    growth = mem["end"] - mem["warm"]
    ok &= bench_line("engine_rss_growth_10k_scored", growth, "MB", "<=", RSS_GROWTH_MAX_MB, valid(mem))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
