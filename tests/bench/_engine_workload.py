"""The engine benchmarks' shared workload: offline trials, one MCP stdio call each, end to end.

``bench_engine.py`` and ``bench_vs_inspect.py`` both run it. A trial is what ``proctor run``
does: the matrix is stored, the arm's server is started (once: it is ``shared``), the offline
agent asks for one lookup over MCP stdio and answers, every event is redacted and persisted to
SQLite (the trial is committed before it counts), and optionally scored (2 judge passes).
"""

from __future__ import annotations

import asyncio
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.session import run_suite
from proctor.scenarios.loader import load_suite
from proctor.store.read.reader import StoreReader, TrialRecord

BENCH_SERVER = Path(__file__).resolve().parent / "bench_mcp_server.py"
DEFAULT_CONCURRENCY = 32
SCENARIOS = 10


def bench_suite(tmp: Path, *, sdk_server: bool = False) -> Path:
    """Ten scenarios against the minimal bench server: measures the engine, not a server's work.

    ``sdk_server`` serves the same tool with the ``mcp`` SDK's ``MCPServer`` instead of the
    hand-written JSON-RPC loop (see ``bench_mcp_server.py``).
    """
    root = tmp / ("suite-sdk" if sdk_server else "suite")
    (root / "scenarios").mkdir(parents=True)
    args = [str(BENCH_SERVER), *(["--sdk"] if sdk_server else [])]
    (root / "suite.yaml").write_text(
        "name: bench\n"
        f"mcpServers:\n  bench: {{command: {sys.executable!r}, args: {args!r}}}\n"
        "arms:\n  mcp: {servers: [bench]}\n"
        "models: ['offline:single']\n"
    )
    for i in range(SCENARIOS):
        (root / "scenarios" / f"s{i}.yaml").write_text(
            f"id: s{i}\nprompt: Where is `func_{i}` defined?\nkeywords: {{required: [func_{i}]}}\n"
        )
    return root


def engine(
    suite_dir: Path,
    db: Path,
    trials: int,
    concurrency: int | None,
    arms: list[str] | None,
    scored: bool,
    on_progress: Callable[[TrialRecord], None] | None = None,
) -> dict[str, float]:
    """Run ``trials`` offline trials end to end: servers started, events persisted, optionally scored.

    ``concurrency`` None is the suite's own default (``concurrency.global``, 8 unless set).
    The clock runs from ``run_suite`` to its return: the run database created, the matrix
    stored, servers started and stopped, every event committed (as ``eval()`` for Inspect AI).
    """
    loaded = load_suite(suite_dir)
    epochs = max(1, trials // len(loaded.scenarios))
    options = RunOptions(db=db, models=["offline:single"], arms=arms, epochs=epochs, concurrency=concurrency)
    start = time.perf_counter()
    cpu = time.process_time()
    children = _children_cpu()
    status = asyncio.run(run_suite(loaded, options, score=scored, on_progress=on_progress))
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    children = _children_cpu() - children  # the server and its supervisor, reaped by the run's end
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
        "cpu_s": cpu,
        "server_cpu_s": children,
        "trials_per_s": len(rows) / elapsed,
        "events_per_s": n_events / elapsed,
        "events": n_events,
        "concurrency": float(concurrency or loaded.suite.concurrency.global_),
    }


def valid(e: dict[str, float]) -> bool:
    """Every trial finished, the run too, and each made its MCP call."""
    return e["status_ok"] == 1 and e["finished"] == e["trials"] and e["min_tool_calls"] >= 1


def describe(label: str, e: dict[str, float]) -> None:
    print(
        f"{label}: {e['trials']:.0f} trials ({e['finished']:.0f} finished, >= {e['min_tool_calls']:.0f} "
        f"MCP call each), {e['events']:.0f} events in {e['elapsed_s']:.2f} s: {e['trials_per_s']:.1f} trials/s, "
        f"{e['events_per_s']:.0f} events/s, {1000 * e['cpu_s'] / max(1, e['trials']):.2f} ms CPU/trial "
        f"in the engine process (all threads) + {1000 * e['server_cpu_s'] / max(1, e['trials']):.2f} ms "
        "in the server's",
        flush=True,
    )


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def rss_mb() -> float:
    """This process's resident memory now (not its peak), in MB."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


__all__ = [
    "BENCH_SERVER",
    "DEFAULT_CONCURRENCY",
    "bench_suite",
    "describe",
    "engine",
    "rss_mb",
    "valid",
]
