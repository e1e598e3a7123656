"""Console responsiveness: live latency and loop lag under 10k events/s, first paint on 1M events.

Not a test: it prints figures, each next to a reference measured in the same run, because
these machines are noisy. Exit code 1 when a figure misses its target.

* live: a writer *process* emits ~10,000 events/s through the real StoreWriter while the console
  runs headless in this process. Latency is from an event's timestamp (set when the engine
  emits it, before the writer batches it) to the screen refresh that includes it; the reference
  is a bare ``EventTail`` loop with no UI reading the same stream. Loop lag is the overshoot of
  a 10 ms sleep in the console's event loop; the reference is the same probe in an idle console.
* first paint: a child process opens a 1,000,000-event store and paints the dashboard; the
  reference is a 100,000-event store with the same 10,000 trials. Memory (peak RSS, also after
  the tool-I/O backfill) must not grow with the number of events.

    python tests/bench/bench_console.py [--events 1000000] [--rate 10000] [--seconds 8]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _bench_line import bench_line

from proctor.store.events import (
    Event,
    FinalAnswer,
    Judged,
    ModelRequest,
    ModelResponse,
    Scored,
    ToolCall,
    ToolCallRequest,
    ToolResult,
    TrialFinished,
    TrialStarted,
    Usage,
)
from proctor.store.schema import configure, migrate
from proctor.store.write.writer import DEFAULT_FLUSH_INTERVAL_S, encode_payload

LATENCY_P95_TARGET_S = 0.150
LAG_P99_TARGET_S = 0.050
FIRST_PAINT_TARGET_S = 1.0
MEMORY_GROWTH_LIMIT = 1.25
RUN = "bench"
ARMS = ["baseline", "mcp"]
MODELS = [f"offline:m{i}" for i in range(5)]


# -- fixture stores -------------------------------------------------------------------------------


def _templates() -> list[tuple[str, str, bytes]]:
    """A realistic event mix, encoded once and reused (building 1M pydantic objects takes minutes)."""
    body = "\n".join(f"{n:>5} | line {n} of the definition" for n in range(12))
    events: list[Event] = [
        ModelRequest(turn=1, messages=3, tools=8),
        ModelResponse(
            turn=1, model="offline:m0", text="", tool_calls=[ToolCallRequest(call_id="c", name="grep", arguments={"q": "x"})],
            stop_reason="tool_use", usage=Usage(input_tokens=900, output_tokens=12, estimated=True),
            tool_io_tokens=300, cost_usd=0.0001, latency_s=0.01,
        ),
        ToolCall(call_id="c", server="codeintel", tool="grep", arguments={"q": "x"}),
        ToolResult(call_id="c", server="codeintel", tool="grep", content=body, is_error=False, latency_s=0.002),
        ToolCall(call_id="d", server="codeintel", tool="read", arguments={"path": "a.py"}),
        ToolResult(call_id="d", server="codeintel", tool="read", content=body * 3, is_error=False, latency_s=0.002),
    ]  # fmt: skip
    out = []
    for ev in events:
        encoding, payload = encode_payload(ev)
        out.append((ev.kind, encoding, payload))
    return out


def build_store(path: Path, n_events: int, n_trials: int = 10_000) -> float:
    """Trials, scores, judgments and ``n_events`` events, written straight through SQLite."""
    started = time.perf_counter()
    conn = sqlite3.connect(path, isolation_level=None)
    configure(conn)
    migrate(conn, str(path))
    conn.execute(
        "INSERT INTO runs VALUES (?, 'bench', ?, 0, 0, NULL, 'running')", (RUN, json.dumps({"held_out": []}))
    )
    rng = random.Random(7)
    trials = []
    combos = [(a, m) for a in ARMS for m in MODELS]
    for i in range(n_trials):
        arm, model = combos[i % len(combos)]
        passed = rng.random() < 0.7
        trials.append(
            (i + 1, RUN, f"scenario-{i // len(combos):05d}", arm, model, 0, i, "finished", 1, 1e9 + i, 1e9 + i + 5,
             "answer", "answer text", "", 4, 2000, 100, 0, 0, 1, 0.002, 5.0, int(passed))
        )  # fmt: skip
    conn.execute("BEGIN")
    conn.executemany(f"INSERT INTO trials VALUES ({','.join('?' * 23)})", trials)
    grounding = json.dumps({"counts": {"grounded": 2, "unresolved": 1, "hallucinated": 0}, "citations": []})
    scores = []
    judgments = []
    for t in trials:
        tid = t[0]
        scores += [(tid, "passed", float(t[-1]), "{}", 0), (tid, "fairness", rng.random(), "{}", 0),
                   (tid, "grounding", 0.66, grounding, 0), (tid, "efficiency", rng.random(), "{}", 0)]  # fmt: skip
        for p in (1, 2):
            verdict = {
                "score": rng.random(),
                "criteria": [{"name": "c", "score": rng.random(), "rationale": "r"}],
            }
            judgments.append((tid, 1, p, "openai:gpt-4o-mini", json.dumps(verdict), "", 0))
    conn.executemany(
        "INSERT INTO scores (trial_id, name, value, details, created_at) VALUES (?, ?, ?, ?, ?)", scores
    )
    conn.executemany(
        "INSERT INTO judgments (trial_id, attempt, pass_no, judge, verdict, error, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        judgments,
    )
    conn.execute("COMMIT")
    templates = _templates()
    chunk = 50_000
    for start in range(0, n_events, chunk):
        rows = []
        for i in range(start, min(n_events, start + chunk)):
            kind, encoding, payload = templates[i % len(templates)]
            rows.append((RUN, 1 + i % n_trials, 1, 1e9 + i * 1e-3, kind, encoding, payload))
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO events (run_id, trial_id, attempt, ts, kind, encoding, payload) VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        conn.execute("COMMIT")
    conn.close()
    return time.perf_counter() - started


async def until(predicate: Callable[[], bool], step: float = 0.005) -> None:
    """Poll ``predicate`` (the bench watches an app it does not own; there is no event to await)."""
    while not predicate():  # noqa: ASYNC110
        await asyncio.sleep(step)


# -- child: first paint ---------------------------------------------------------------------------


def _rss_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def child_first_paint(db: str) -> None:
    from proctor.app.tui import ProctorApp

    result: dict[str, float] = {}
    started = time.perf_counter()
    app = ProctorApp(Path(db))
    base_rss = _rss_kb("VmRSS")

    def painted() -> None:
        result["first_paint_s"] = time.perf_counter() - started
        result["rss_paint_mb"] = (_rss_kb("VmRSS") - base_rss) / 1024

    async def watch() -> None:
        await until(lambda: app.state.loaded and bool(app.state.trials), 0.001)
        app.call_after_refresh(painted)
        await until(
            lambda: app.feed.backfill_done and app.state.details_loaded and app.state.usage.backfill_done
        )
        result["backfill_s"] = time.perf_counter() - started
        await asyncio.sleep(0.3)
        result["rss_peak_mb"] = (_rss_kb("VmHWM") - base_rss) / 1024
        app.exit()

    async def main() -> None:
        async with app.run_test(headless=True, size=(160, 50)):
            await watch()

    asyncio.run(main())
    print(json.dumps(result))


def first_paint(db: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child-first-paint", str(db)], capture_output=True, text=True, check=True
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


# -- child: live writer ---------------------------------------------------------------------------


def child_writer(db: str, rate: int, seconds: float, n_trials: int, flush_s: float) -> None:
    from proctor.store.write.writer import StoreWriter, TrialRow

    async def main() -> None:
        w = await StoreWriter.open(db, flush_interval_s=flush_s)
        await w.create_run(RUN, "bench", {"held_out": []})
        await w.add_trials(
            RUN, [TrialRow(f"s{i:04d}", ARMS[i % 2], MODELS[i % 5], 0, i) for i in range(n_trials)]
        )
        await w.flush()
        print("ready", flush=True)
        sys.stdin.readline()
        usage = Usage(input_tokens=500, output_tokens=20, estimated=True)
        tick = 0.01
        per_tick = max(1, int(rate * tick))
        begin = time.perf_counter()
        sent = 0
        step = 0
        while time.perf_counter() - begin < seconds:
            for _ in range(per_tick):
                tid = 1 + step % n_trials
                k = step // n_trials
                ev: Event
                if k == 0:
                    ev = TrialStarted(
                        scenario=f"s{tid - 1:04d}", arm="a", model="m", epoch=0, seed=1, attempt=1
                    )
                elif step % 7 == 0:
                    ev = ModelResponse(turn=k, model="m", text="thinking", tool_calls=[], stop_reason="tool_use",
                                       usage=usage, tool_io_tokens=100, cost_usd=0.0001, latency_s=0.01)  # fmt: skip
                elif step % 2:
                    ev = ToolCall(call_id=f"c{step}", server="s", tool="grep", arguments={"q": step})
                else:
                    ev = ToolResult(
                        call_id=f"c{step}",
                        server="s",
                        tool="grep",
                        content="hit\n" * 8,
                        is_error=False,
                        latency_s=0.001,
                    )
                w.emit(RUN, ev, trial_id=tid, attempt=1)
                if k > 0 and k % 40 == 0 and step % n_trials < 5:
                    w.emit(RUN, FinalAnswer(text="done"), trial_id=tid, attempt=1)
                    w.emit(RUN, TrialFinished(status="finished", stop="answer", final_answer="done", tool_calls=k,
                                              usage=usage, cost_usd=0.01, wall_s=1.0), trial_id=tid, attempt=1)  # fmt: skip
                    w.emit(RUN, Scored(name="passed", value=1.0, details={}), trial_id=tid, attempt=1)
                    w.emit(RUN, Judged(pass_no=1, judge="j", verdict={"score": 0.5}), trial_id=tid, attempt=1)
                step += 1
                sent += 1
            target = begin + sent / rate
            await asyncio.sleep(max(0.0, target - time.perf_counter()))
        await w.close()
        print(json.dumps({"sent": sent, "rate": sent / (time.perf_counter() - begin)}), flush=True)

    asyncio.run(main())


def _start_writer(
    db: Path, rate: int, seconds: float, n_trials: int, flush_s: float
) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--child-writer",
            str(db),
            str(rate),
            str(seconds),
            str(n_trials),
            str(flush_s),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc


def _finish_writer(proc: subprocess.Popen[str]) -> dict[str, float]:
    out, _ = proc.communicate(timeout=120)
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


# -- live measurements ----------------------------------------------------------------------------


def reference_tail(
    db: Path, rate: int, seconds: float, n_trials: int, flush_s: float
) -> tuple[list[float], dict[str, float]]:
    """The same writer, read by a bare EventTail loop (no UI): the floor for event latency."""
    from proctor.store.read.reader import EventTail, StoreReader

    proc = _start_writer(db, rate, seconds, n_trials, flush_s)
    reader = StoreReader(db)
    tail = EventTail(reader, after_id=reader.max_event_id())
    proc.stdin.write("go\n")  # type: ignore[union-attr]
    proc.stdin.flush()  # type: ignore[union-attr]
    latencies: list[float] = []
    while proc.poll() is None:
        batch = tail.poll()
        now = time.time()
        latencies.extend(now - e.ts for e in batch)
        time.sleep(0.01)
    reader.close()
    return latencies, _finish_writer(proc)


def live_console(
    db: Path,
    rate: int,
    seconds: float,
    n_trials: int,
    open_trial: bool,
    flush_s: float = DEFAULT_FLUSH_INTERVAL_S,
) -> dict[str, Any]:
    from proctor.app.tui import ProctorApp

    latencies: list[float] = []
    lags: list[float] = []
    app = ProctorApp(db)

    def probe(stamps: list[float], _: float) -> None:
        now = time.time()
        latencies.extend(now - ts for ts in stamps)

    async def lag_probe(stop: asyncio.Event) -> None:
        while not stop.is_set():
            t = time.perf_counter()
            await asyncio.sleep(0.01)
            lags.append(time.perf_counter() - t - 0.01)

    async def main() -> dict[str, Any]:
        proc = _start_writer(db, rate, seconds, n_trials, flush_s) if rate else None
        async with app.run_test(headless=True, size=(160, 50)) as pilot:
            await until(lambda: app.state.details_loaded and app.state.usage.backfill_done)
            if open_trial:
                app.open_trial(1)
                await pilot.pause()
            app.latency_probe = probe
            stop = asyncio.Event()
            task = asyncio.create_task(lag_probe(stop))
            if proc is not None:
                proc.stdin.write("go\n")  # type: ignore[union-attr]
                proc.stdin.flush()  # type: ignore[union-attr]
                await until(lambda: proc.poll() is not None, 0.05)
                await asyncio.sleep(0.5)
            else:
                await asyncio.sleep(seconds)
            stop.set()
            await task
            flushes = app.flushes
            app.exit()
        writer = _finish_writer(proc) if proc is not None else {}
        return {"latencies": latencies, "lags": lags, "writer": writer, "flushes": flushes}

    return asyncio.run(main())


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return statistics.quantiles(values, n=1000)[int(q * 10) - 1] if len(values) > 1 else values[0]


def ms(x: float) -> str:
    return f"{x * 1000:7.1f} ms"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--rate", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--live-trials", type=int, default=400)
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory(prefix="proctor-bench-") as tmp:
        root = Path(tmp)
        print(
            f"console benchmark ({args.rate:,} events/s for {args.seconds:.0f}s; first paint at {args.events:,} events)"
        )

        for flush_s, judged in ((DEFAULT_FLUSH_INTERVAL_S, True), (0.01, False)):
            note = "the engine's default" if judged else "a faster-committing writer, for comparison"
            print(f"\nwriter commits every {flush_s * 1000:.0f} ms or 512 events ({note})")
            ref_lat, ref_writer = reference_tail(
                root / f"ref-{flush_s}.db", args.rate, args.seconds, args.live_trials, flush_s
            )
            for screen, open_trial in (("dashboard", False), ("trial view", True)):
                db = root / f"live-{flush_s}-{open_trial}.db"
                res = live_console(db, args.rate, args.seconds, args.live_trials, open_trial, flush_s)
                idle = live_console(db, 0, 3.0, args.live_trials, open_trial)
                lat95, ref95 = pct(res["latencies"], 95), pct(ref_lat, 95)
                lag99, idle99 = pct(res["lags"], 99), pct(idle["lags"], 99)
                print(f"  [{screen}] writer achieved {res['writer']['rate']:,.0f} events/s; "
                      f"{len(res['latencies']):,} events reached the screen in {res['flushes']} flushes")  # fmt: skip
                print(f"    event-to-screen p95 {ms(lat95)} (target <= {ms(LATENCY_P95_TARGET_S)}); "
                      f"reference bare EventTail p95 {ms(ref95)}")  # fmt: skip
                print(
                    f"    event-to-screen p50 {ms(pct(res['latencies'], 50))};  reference p50 {ms(pct(ref_lat, 50))}"
                )
                print(
                    f"    UI loop lag p99     {ms(lag99)} (target <= {ms(LAG_P99_TARGET_S)}); reference idle console {ms(idle99)}"
                )
                if judged:
                    tag = "dashboard" if not open_trial else "trial_view"
                    ok &= bench_line(
                        f"console_event_to_screen_p95_{tag}", lat95 * 1000, "ms", "<=", 150, digits=3
                    )
                    ok &= bench_line(f"console_loop_lag_p99_{tag}", lag99 * 1000, "ms", "<=", 50, digits=3)
                    ok &= len(res["latencies"]) > 0
            print(f"  (reference run: writer achieved {ref_writer['rate']:,.0f} events/s)")

        small, big = root / "small.db", root / "big.db"
        t_small = build_store(small, args.events // 10)
        t_big = build_store(big, args.events)
        print(f"\nfirst paint (stores built in {t_small:.1f}s and {t_big:.1f}s; 10,000 trials each)")
        fs, fb = first_paint(small), first_paint(big)
        print(f"  {args.events:,} events: first paint {fb['first_paint_s']:.3f} s (target <= {FIRST_PAINT_TARGET_S:.1f} s); "
              f"reference {args.events // 10:,} events: {fs['first_paint_s']:.3f} s")  # fmt: skip
        print(
            f"  memory at first paint  {fb['rss_paint_mb']:6.1f} MB   reference {fs['rss_paint_mb']:6.1f} MB"
        )
        print(f"  peak memory (after backfill of tool-I/O tokens in {fb['backfill_s']:.1f}s / {fs['backfill_s']:.1f}s) "
              f"{fb['rss_peak_mb']:6.1f} MB   reference {fs['rss_peak_mb']:6.1f} MB")  # fmt: skip
        growth = fb["rss_peak_mb"] / max(1.0, fs["rss_peak_mb"])
        print(f"  memory growth for 10x the events: x{growth:.2f} (limit x{MEMORY_GROWTH_LIMIT})")
        ok &= bench_line(
            "console_first_paint_1m_events", fb["first_paint_s"], "s", "<=", FIRST_PAINT_TARGET_S, digits=3
        )
        ok &= bench_line("console_memory_growth_10x_events", growth, "x", "<=", MEMORY_GROWTH_LIMIT, digits=3)
    print("\nall console figures within target" if ok else "\nsome console figures missed their target")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child-first-paint":
        child_first_paint(sys.argv[2])
    elif len(sys.argv) > 2 and sys.argv[1] == "--child-writer":
        child_writer(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6]))
    else:
        sys.exit(main())
