"""Engine throughput: 1,000 offline trials against a real stdio MCP server, persisted to SQLite.

Not a test: it prints figures and compares them with references measured in the same run
(the raw ``sqlite3.executemany`` ceiling for the same rows), because these machines are noisy.

    python tests/bench/bench_engine.py [--trials 1000] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.session import run_suite
from proctor.scenarios.demo import SUITE_DIR
from proctor.scenarios.loader import load_suite
from proctor.store.events import Event, ModelResponse, ToolCall, ToolCallRequest, ToolResult, Usage
from proctor.store.reader import StoreReader
from proctor.store.schema import configure, migrate
from proctor.store.writer import StoreWriter, TrialRow, encode_payload

TRIAL_FLOOR_PER_S = 200.0
PERSISTENCE_MAX_RATIO = 2.0


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


def raw_ceiling(db: Path, rows: list[tuple[object, ...]], batch: int) -> float:
    """Rows/s for plain executemany of pre-serialized rows, one transaction per batch."""
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
    for ev in events:
        encoding, payload = encode_payload(ev)
        rows.append(("bench", 1, 0, time.time(), ev.kind, encoding, payload))
    raw = raw_ceiling(tmp / "raw.db", rows, batch)
    ours = asyncio.run(writer_rate(tmp / "writer.db", events, batch))
    return raw, ours


BENCH_SERVER = Path(__file__).resolve().parent / "bench_mcp_server.py"


def bench_suite(tmp: Path) -> Path:
    """Ten scenarios against the minimal bench server: measures the engine, not a server's work."""
    root = tmp / "suite"
    (root / "scenarios").mkdir(parents=True)
    (root / "suite.yaml").write_text(
        "name: bench\n"
        f"mcpServers:\n  bench: {{command: {sys.executable!r}, args: [{str(BENCH_SERVER)!r}]}}\n"
        "arms:\n  mcp: {servers: [bench]}\n"
        "models: ['offline:single']\n"
    )
    for i in range(10):
        (root / "scenarios" / f"s{i}.yaml").write_text(
            f"id: s{i}\nprompt: Where is `func_{i}` defined?\nkeywords: {{required: [func_{i}]}}\n"
        )
    return root


def engine(
    suite_dir: Path, db: Path, trials: int, concurrency: int, arms: list[str] | None, scored: bool
) -> dict[str, float]:
    """Run ``trials`` offline trials end to end: servers started, events persisted, optionally scored."""
    loaded = load_suite(suite_dir)
    epochs = max(1, trials // len(loaded.scenarios))
    options = RunOptions(db=db, models=["offline:single"], arms=arms, epochs=epochs, concurrency=concurrency)
    start = time.perf_counter()
    status = asyncio.run(run_suite(loaded, options, score=scored))
    elapsed = time.perf_counter() - start
    with StoreReader(options.db) as r:
        rows = r.trials()
        n_events = r.max_event_id()
    calls = [t.tool_calls or 0 for t in rows]
    return {
        "status_ok": float(status == "finished"),
        "trials": len(rows),
        "finished": sum(t.status == "finished" for t in rows),
        "min_tool_calls": min(calls),
        "elapsed_s": elapsed,
        "trials_per_s": len(rows) / elapsed,
        "events_per_s": n_events / elapsed,
        "events": n_events,
    }


def _print_engine(label: str, e: dict[str, float]) -> None:
    print(
        f"{label}: {e['trials']:.0f} trials ({e['finished']:.0f} finished), {e['events']:.0f} events in {e['elapsed_s']:.2f} s"
    )
    print(f"  trials/s             {e['trials_per_s']:9.1f}   (floor {TRIAL_FLOOR_PER_S:.0f})")
    print(f"  events/s             {e['events_per_s']:9.1f}")
    print(f"  min MCP calls/trial  {e['min_tool_calls']:9.0f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="proctor-bench-") as d:
        tmp = Path(d)
        suite = bench_suite(tmp)
        e = engine(suite, tmp / "engine.db", args.trials, args.concurrency, None, scored=False)
        scored = engine(suite, tmp / "scored.db", args.trials, args.concurrency, None, scored=True)
        demo = engine(SUITE_DIR, tmp / "demo.db", args.trials, args.concurrency, ["codeintel"], scored=True)
        raw, ours = persistence(tmp)
    rss_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rss_children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    ratio = raw / ours
    _print_engine("engine, minimal stdio server, events persisted", e)
    _print_engine("same, every trial also scored (2 judge passes)", scored)
    _print_engine("demo codeintel server (real index lookups), scored", demo)
    print(f"peak RSS {rss_self:.1f} MiB (largest child {rss_children:.1f} MiB)")
    print("persistence (same rows, same batch size, same run):")
    print(f"  raw executemany      {raw:9.0f} rows/s")
    print(f"  StoreWriter          {ours:9.0f} events/s (serialization included)")
    print(f"  ratio raw/ours       {ratio:9.2f}   (must be <= {PERSISTENCE_MAX_RATIO})")
    ok = e["status_ok"] == 1 and e["trials_per_s"] >= TRIAL_FLOOR_PER_S and ratio <= PERSISTENCE_MAX_RATIO
    ok = ok and e["min_tool_calls"] >= 1 and demo["min_tool_calls"] >= 1
    print("PASS" if ok else "BELOW TARGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
