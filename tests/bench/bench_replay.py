"""Replaying recorded calls against a shared stdio server, against making the same calls in a run.

Not a test: it prints one ``BENCH`` line, a ratio of two rates measured in the same run (these
machines are noisy). The reference is a real ``proctor run``: ``--calls`` offline trials, each
one MCP call to the mcp SDK's ``MCPServer`` over stdio (``bench_mcp_server.py --sdk``, shared,
concurrency 32), every event committed. Then ``proctor replay`` makes the same calls again from
that recording into a new database, against the same server, at the same concurrency. The
figure is the replay's calls per second over the run's; goal ≥ 0.8 (a replay has no model
turns to play, so it should not be slower; it does read the recording first).

    python tests/bench/bench_replay.py [--calls 10000] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from _bench_line import bench_line
from _engine_workload import bench_suite, describe, engine, valid

from proctor.engine.drift.runs_diff import replay_drift
from proctor.engine.replay.replayer import ReplayOptions, replay_run
from proctor.store.read.reader import StoreReader

GOAL_RATIO = 0.8


def _calls(db: Path) -> int:
    with StoreReader(db) as r:
        return sum(t.tool_calls or 0 for t in r.trials())


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="proctor-bench-replay-") as tmp:
        suite = bench_suite(Path(tmp), sdk_server=True)
        recorded = Path(tmp) / "recorded.db"
        run = engine(suite, recorded, args.calls, args.concurrency, None, False)
        describe("run (reference)", run)
        run_calls = _calls(recorded)
        run_rate = run_calls / run["elapsed_s"]
        replayed = Path(tmp) / "replayed.db"
        start = time.perf_counter()
        result = asyncio.run(replay_run(ReplayOptions(recorded, replayed, concurrency=args.concurrency)))
        elapsed = time.perf_counter() - start
        replay_rate = result.calls / elapsed
        drift = replay_drift(replayed)
    assert drift is not None
    print(
        f"run: {run_calls:,} calls in {run['elapsed_s']:.2f} s ({run_rate:.0f} calls/s); replay: "
        f"{result.calls:,} calls in {elapsed:.2f} s ({replay_rate:.0f} calls/s); drift {dict(drift.totals)}",
        flush=True,
    )
    ok = valid(run) and result.calls == run_calls and drift.totals["identical"] == run_calls
    return (
        0 if bench_line("replay_vs_run_calls_per_s", replay_rate / run_rate, "x", ">=", GOAL_RATIO, ok) else 1
    )


if __name__ == "__main__":
    raise SystemExit(main())
