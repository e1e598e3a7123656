"""The event writer under a scored load: commit lag, memory growth and persistence cost.

Not a test: it prints figures and compares them with goals, and the persistence figure with a
reference measured in the same run (raw ``sqlite3.executemany`` of the same, already encoded
rows), because these machines are noisy.

The load replays real trials: the bundled demo suite is run offline and scored once (every arm,
one epoch), and its events (trial_started, tools_listed, server_connected, agent_brief, model
requests and responses, tool calls with results of a few KB, final answer, trial_finished, ~10
scores and 2 judgments per trial) are emitted again for thousands of trials, ``--concurrency``
at once, from an event loop kept busy the way the engine keeps it: CPU work before each model
turn and tool result, I/O waits around tool calls, a flush after each trial_finished (as the
runner does) and a block of scoring work before the scores.

    python tests/bench/bench_writer_lag.py [--trials 5000] [--rss-trials 10000] [--concurrency 32]

Figures (one ``BENCH`` line each):

* ``writer_commit_lag_p99`` / ``writer_commit_lag_max``: time from ``emit()`` to the commit that
  holds the event (what a ``kill -9`` can lose), over every event of ``--trials`` trials;
* ``writer_rss_growth``: resident memory growth over ``--rss-trials`` trials of the same load;
* ``writer_persistence_ratio``: the writer's total time for the events (and derived rows) of 1,000
  trials, serialization and redaction included, over raw ``executemany`` of the same rows.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import resource
import sqlite3
import sys
import tempfile
import time
from array import array
from collections.abc import Callable
from itertools import cycle
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from _bench_line import bench_line  # noqa: E402

from proctor.engine.runs.options import RunOptions  # noqa: E402
from proctor.engine.runs.session import run_suite  # noqa: E402
from proctor.scenarios.demo import SUITE_DIR  # noqa: E402
from proctor.scenarios.loader import load_suite  # noqa: E402
from proctor.store.events import Event, Judged, Scored, TrialFinished, TrialStarted, parse_event  # noqa: E402
from proctor.store.records import JudgmentMeta  # noqa: E402
from proctor.store.schema import configure, migrate  # noqa: E402
from proctor.store.scores import ScoreName  # noqa: E402
from proctor.store.write.derived_rows import dumps_sorted  # noqa: E402
from proctor.store.write.writer import StoreWriter, TrialRow, decode_payload, encode_payload  # noqa: E402

LAG_P99_GOAL_S = 1.0
RSS_GROWTH_GOAL_MB = 50.0
PERSISTENCE_GOAL_RATIO = 1.5
RUN = "bench"
META = JudgmentMeta(prompt_version="v3", prompt_hash="a" * 64, rubric_hash="b" * 64, temperature=0.0)

# CPU the engine spends on the loop thread (seconds) before emitting an event of this kind,
# from a cProfile of the scored demo suite: the offline agent's turn, parsing an MCP result,
# the scoring pass (claims, citations, lexical judge) before the first score.
CPU_BEFORE = {
    "model_response": 0.0006,
    "tool_result": 0.0003,
    "final_answer": 0.0002,
    "trial_started": 0.0003,
}
SCORING_CPU_S = 0.003
TOOL_IO_WAIT_S = 0.002  # a stdio round trip to the MCP server, during which the loop serves others


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def real_trials(tmp: Path) -> list[list[Event]]:
    """Every trial of the demo suite, run offline and scored: the events as the engine emitted them."""
    db = tmp / "demo.db"
    asyncio.run(run_suite(load_suite(SUITE_DIR), RunOptions(db=db, epochs=1, concurrency=8), score=True))
    conn = sqlite3.connect(db)
    by_trial: dict[int, list[Event]] = {}
    for trial_id, encoding, payload in conn.execute(
        "SELECT trial_id, encoding, payload FROM events WHERE trial_id IS NOT NULL ORDER BY id"
    ):
        by_trial.setdefault(trial_id, []).append(parse_event(decode_payload(encoding, payload)))
    conn.close()
    return [evs for evs in by_trial.values() if any(isinstance(e, TrialFinished) for e in evs)]


def _describe(trials: list[list[Event]]) -> None:
    n = sum(len(t) for t in trials)
    size = sum(len(encode_payload(e)[1]) for t in trials for e in t)
    scores = sum(isinstance(e, Scored) for t in trials for e in t) / len(trials)
    judged = sum(isinstance(e, Judged) for t in trials for e in t) / len(trials)
    print(
        f"templates: {len(trials)} real demo trials, {n / len(trials):.1f} events/trial "
        f"({scores:.1f} scores, {judged:.1f} judgments), {size / n:.0f} B/event"
    )


async def _open(db: Path, on_commit: Callable[[int, float], None] | None) -> StoreWriter:
    writer = await StoreWriter.open(db, on_commit=on_commit)
    await writer.create_run(RUN, "bench", {"epochs": 1})
    return writer


async def scored_load(
    db: Path,
    templates: list[list[Event]],
    trials: int,
    concurrency: int,
    emits: array[float] | None,
    commits: list[tuple[int, float]] | None,
    rss: list[float] | None,
    io_wait_s: float = TOOL_IO_WAIT_S,
) -> float:
    """Run ``trials`` trials of the templates through one writer on a busy loop; return the wall time."""

    def on_commit(count: int, at: float) -> None:
        if commits is not None:
            commits.append((count, at))

    writer = await _open(db, on_commit if commits is not None else None)
    await writer.add_trials(RUN, [TrialRow(f"s{i}", "arm", "model", i, i) for i in range(trials)])
    queue = cycle(templates)
    next_trial = iter(range(1, trials + 1))
    clock = time.perf_counter

    def emit(event: Event, trial_id: int, judgment: JudgmentMeta | None = None) -> None:
        if emits is not None:
            emits.append(clock())
        writer.emit(RUN, event, trial_id=trial_id, attempt=1, judgment=judgment)

    async def one(trial_id: int, events: list[Event]) -> None:
        for event in events:
            kind = event.kind
            if kind == "tool_call":
                emit(event, trial_id)
                await asyncio.sleep(io_wait_s)
                continue
            if kind == "score" and scoring_due[trial_id]:
                scoring_due[trial_id] = False
                _spin(SCORING_CPU_S)
            _spin(CPU_BEFORE.get(kind, 0.00005))
            emit(event, trial_id, META if isinstance(event, Judged) else None)
            if isinstance(event, TrialFinished):
                await writer.flush()  # as the runner does: a finished trial is on disk before it counts
                scoring_due[trial_id] = True
            elif kind in ("model_response", "tool_result"):
                await asyncio.sleep(0)

    scoring_due: dict[int, bool] = {}

    async def worker() -> None:
        for trial_id in next_trial:
            scoring_due[trial_id] = False
            await one(trial_id, next(queue))
            del scoring_due[trial_id]
            if rss is not None and trial_id % 250 == 0:
                rss.append(_rss_mb())

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    await writer.close()
    return time.perf_counter() - start


def lag_figures(emits: array[float], commits: list[tuple[int, float]]) -> list[float]:
    """Per event, commit time minus emit time; events commit in emit order, batch by batch."""
    lags: list[float] = []
    done = 0
    for count, at in commits:
        lags.extend(at - emits[i] for i in range(done, count))
        done = count
    return lags


# -- persistence: the writer against raw executemany of the same rows -------------------------

EVENT_SQL = (
    "INSERT INTO events (run_id, trial_id, attempt, ts, kind, encoding, payload) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
SCORE_SQL = (
    "INSERT OR REPLACE INTO scores (trial_id, name, value, details, created_at) VALUES (?, ?, ?, ?, ?)"
)
JUDGMENT_SQL = (
    "INSERT INTO judgments (trial_id, attempt, pass_no, judge, source, prompt_version, prompt_hash, "
    "rubric_hash, temperature, verdict, error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _stream(templates: list[list[Event]], trials: int) -> list[tuple[int, Event]]:
    queue = cycle(templates)
    return [(tid, ev) for tid in range(1, trials + 1) for ev in next(queue)]


def raw_reference(db: Path, stream: list[tuple[int, Event]], batch: int) -> float:
    """Seconds for plain executemany of the same rows, encoded beforehand (details and verdicts as
    the writer stores them), one transaction per batch: the events, the scores and judgments, and
    the trial row updates the writer derives from them."""
    conn = sqlite3.connect(db, isolation_level=None)
    configure(conn)
    migrate(conn)
    conn.execute(
        "INSERT INTO runs (id, suite, config, created_at) VALUES (?, ?, ?, ?)", (RUN, "b", "{}", 0.0)
    )
    conn.executemany(
        "INSERT INTO trials (run_id, scenario, arm, model, epoch, seed) VALUES (?, ?, ?, ?, ?, ?)",
        [(RUN, f"s{i}", "arm", "model", i, i) for i in range(len({t for t, _ in stream}))],
    )
    batches = []
    ts = time.time()
    for i in range(0, len(stream), batch):
        events, scores, judgments, started, finished, passed = [], [], [], [], [], []
        for tid, ev in stream[i : i + batch]:
            encoding, payload = encode_payload(ev)
            events.append((RUN, tid, 1, ts, ev.kind, encoding, payload))
            if isinstance(ev, Scored):
                scores.append((tid, ev.name, ev.value, dumps_sorted(ev.details), ts))
                if ev.name == ScoreName.PASSED:
                    passed.append((None if ev.value is None else int(ev.value >= 0.5), tid))
            elif isinstance(ev, Judged):
                verdict = None if ev.verdict is None else dumps_sorted(ev.verdict)
                judgments.append((tid, 1, ev.pass_no, ev.judge, META.source, META.prompt_version,
                                  META.prompt_hash, META.rubric_hash, META.temperature, verdict, ev.error, ts))  # fmt: skip
            elif isinstance(ev, TrialStarted):
                started.append((1, ts, tid))
            elif isinstance(ev, TrialFinished):
                u = ev.usage
                finished.append((ev.status, ts, ev.stop, ev.final_answer, ev.error, ev.tool_calls, u.input_tokens,
                                 u.output_tokens, u.cache_read_tokens, u.cache_write_tokens, int(u.estimated),
                                 ev.cost_usd, ev.wall_s, tid))  # fmt: skip
        batches.append((events, scores, judgments, started, finished, passed))
    start = time.perf_counter()
    for events, scores, judgments, started, finished, passed in batches:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(EVENT_SQL, events)
        conn.executemany(
            "UPDATE trials SET status = 'running', attempt = ?, started_at = ?, finished_at = NULL, "
            "passed = NULL WHERE id = ?",
            started,
        )
        conn.executemany("DELETE FROM scores WHERE trial_id = ?", [(r[2],) for r in started])
        conn.executemany(
            "UPDATE trials SET status = ?, finished_at = ?, stop = ?, final_answer = ?, error = ?, tool_calls = ?, "
            "input_tokens = ?, output_tokens = ?, cache_read_tokens = ?, cache_write_tokens = ?, "
            "tokens_estimated = ?, cost_usd = ?, wall_s = ? WHERE id = ?",
            finished,
        )
        conn.executemany(SCORE_SQL, scores)
        conn.executemany("UPDATE trials SET passed = ? WHERE id = ?", passed)
        conn.executemany(JUDGMENT_SQL, judgments)
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed


async def writer_time(db: Path, stream: list[tuple[int, Event]]) -> float:
    """Seconds from the first emit until close() returns, every row committed; an idle loop that
    yields every 64 events, as a trial does between turns."""
    writer = await _open(db, None)
    await writer.add_trials(
        RUN, [TrialRow(f"s{i}", "arm", "model", i, i) for i in range(len({t for t, _ in stream}))]
    )
    gc.collect()
    start = time.perf_counter()
    for i, (tid, ev) in enumerate(stream):
        writer.emit(RUN, ev, trial_id=tid, attempt=1, judgment=META if isinstance(ev, Judged) else None)
        if i % 64 == 63:
            await asyncio.sleep(0)
    await writer.close()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=5000)
    parser.add_argument("--rss-trials", type=int, default=10000)
    parser.add_argument("--persistence-trials", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="proctor-writer-") as d:
        tmp = Path(d)
        templates = real_trials(tmp)
        _describe(templates)

        emits: array[float] = array("d")
        commits: list[tuple[int, float]] = []
        elapsed = asyncio.run(
            scored_load(tmp / "lag.db", templates, args.trials, args.concurrency, emits, commits, None)
        )
        lags = sorted(lag_figures(emits, commits))
        missing = len(emits) - len(lags)
        p50, p99, worst = (lags[int(q * (len(lags) - 1))] for q in (0.5, 0.99, 1.0))
        print(
            f"lag: {args.trials} trials, {len(emits)} events in {elapsed:.1f} s ({len(emits) / elapsed:.0f}/s), "
            f"{len(commits)} commits; p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, max {worst * 1000:.1f} ms"
            + (f"; {missing} events never reported committed" if missing else "")
        )
        del emits, commits, lags
        gc.collect()

        rss: list[float] = []
        before = _rss_mb()
        elapsed = asyncio.run(
            scored_load(tmp / "rss.db", templates, args.rss_trials, args.concurrency, None, None, rss)
        )
        gc.collect()
        rss.append(_rss_mb())
        growth = max(rss) - before
        print(
            f"rss: {args.rss_trials} trials in {elapsed:.1f} s; {before:.0f} MB before, peak {max(rss):.0f} MB, "
            f"end {rss[-1]:.0f} MB"
        )

        stream = _stream(templates, args.persistence_trials)
        raw = min(raw_reference(tmp / f"raw{i}.db", stream, 512) for i in range(2))
        ours = min(asyncio.run(writer_time(tmp / f"writer{i}.db", stream)) for i in range(2))
        print(
            f"persistence: {len(stream)} events of {args.persistence_trials} trials; raw executemany "
            f"{raw:.3f} s (reference), StoreWriter {ours:.3f} s (serialization and redaction included)"
        )

    ok = bench_line("writer_commit_lag_p99", p99, "s", "<=", LAG_P99_GOAL_S, not missing, digits=3)
    bench_line("writer_commit_lag_max", worst, "s", "<=", LAG_P99_GOAL_S, digits=3)
    ok &= bench_line("writer_rss_growth", growth, "MB", "<=", RSS_GROWTH_GOAL_MB, digits=3)
    ok &= bench_line("writer_persistence_ratio", ours / raw, "x", "<=", PERSISTENCE_GOAL_RATIO, digits=3)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
