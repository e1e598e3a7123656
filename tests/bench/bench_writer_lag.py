"""How far the run database lags behind finished trials: what a ``kill -9`` would lose.

Runs the bench suite scored, at high concurrency, while a thread polls the database. For every
trial the engine reports finished, the lag is the time until the database shows that many
finished trials. Prints a ``BENCH`` line for the worst lag (an absolute goal: what a crash may
lose must stay under a second, whatever the machine), with the median beside it.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_engine import bench_suite  # noqa: E402

from proctor.engine.runs.options import RunOptions  # noqa: E402
from proctor.engine.runs.session import run_suite  # noqa: E402
from proctor.scenarios.loader import load_suite  # noqa: E402
from proctor.store.reader import TrialRecord  # noqa: E402

MAX_LAG_S = 1.0


def _committed(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return int(
                conn.execute("SELECT count(*) FROM trials WHERE status IN ('finished','error')").fetchone()[0]
            )
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="proctor-lag-") as d:
        tmp = Path(d)
        loaded = load_suite(bench_suite(tmp))
        db = tmp / "lag.db"
        finished: list[float] = []
        seen: list[tuple[float, int]] = []
        stop = threading.Event()

        def poll() -> None:
            while not stop.is_set():
                seen.append((time.monotonic(), _committed(db)))
                time.sleep(0.02)

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        epochs = max(1, args.trials // len(loaded.scenarios))
        start = time.monotonic()
        options = RunOptions(db=db, epochs=epochs, concurrency=args.concurrency)

        def on_progress(record: TrialRecord) -> None:
            del record
            finished.append(time.monotonic())

        asyncio.run(run_suite(loaded, options, on_progress=on_progress))
        elapsed = time.monotonic() - start
        time.sleep(0.2)
        stop.set()
        poller.join()
    lags = []
    for n, t in enumerate(finished, 1):
        shown = next((ts for ts, count in seen if count >= n and ts >= t), None)
        if shown is not None:
            lags.append(shown - t)
    worst = max(lags) if lags else float("inf")
    ordered = sorted(lags)
    p50 = ordered[len(ordered) // 2] if ordered else float("inf")
    print(f"{len(finished)} trials in {elapsed:.1f} s; lag p50 {p50:.3f} s, max {worst:.3f} s")
    ok = worst <= MAX_LAG_S
    print(f"BENCH writer_max_lag {worst:.3f} s goal <={MAX_LAG_S:g} {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
