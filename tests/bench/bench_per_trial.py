"""A server per trial (``lifecycle: per_trial``): proctor's throughput against the server's own cost.

Both sides, in the same run, at the same concurrency: N times, start the ``mcp`` SDK bench server
(``bench_mcp_server.py --sdk``), initialize, make one tool call, close it.

* reference: exactly that with the SDK's ``Client(StdioServerParameters(...))``, nothing else;
* proctor: ``run_suite`` of N offline trials whose arm's server is ``per_trial`` (each trial's
  server started under proctor's supervisor, tools listed, one call, events in SQLite).

    python tests/bench/bench_per_trial.py [--trials 40] [--concurrency 4]

``BENCH per_trial_throughput_ratio`` = reference throughput / proctor's, goal <= 1.25.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from _bench_line import bench_line
from _engine_workload import BENCH_SERVER, engine, valid
from mcp import Client, StdioServerParameters

GOAL = 1.25


def _suite(tmp: Path) -> Path:
    root = tmp / "suite"
    (root / "scenarios").mkdir(parents=True)
    args = [str(BENCH_SERVER), "--sdk"]
    (root / "suite.yaml").write_text(
        "name: bench-per-trial\n"
        f"mcpServers:\n  bench: {{command: {sys.executable!r}, args: {args!r}, lifecycle: per_trial}}\n"
        "arms:\n  mcp: {servers: [bench]}\n"
        "models: ['offline:single']\n"
    )
    for i in range(10):
        (root / "scenarios" / f"s{i}.yaml").write_text(
            f"id: s{i}\nprompt: Where is `func_{i}` defined?\nkeywords: {{required: [func_{i}]}}\n"
        )
    return root


async def _reference(trials: int, concurrency: int) -> float:
    """Seconds for ``trials`` start-initialize-call-close rounds of the bare server, ``concurrency`` at a time."""
    params = StdioServerParameters(command=sys.executable, args=[str(BENCH_SERVER), "--sdk"])
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int) -> None:
        async with gate, Client(params) as client:
            result = await client.call_tool("find_definition", {"symbol": f"func_{i % 10}"})
            assert not result.is_error

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(trials)))
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="proctor-per-trial-") as d:
        tmp = Path(d)
        suite = _suite(tmp)
        asyncio.run(_reference(args.concurrency, args.concurrency))  # untimed: warm the disk cache
        ref = asyncio.run(_reference(args.trials, args.concurrency))
        ours = engine(suite, tmp / "run.db", args.trials, args.concurrency, None, False)
        ok = valid(ours)
    ref_rate, our_rate = args.trials / ref, args.trials / ours["elapsed_s"]
    print(
        f"per_trial, {args.trials} trials at concurrency {args.concurrency}: bare SDK server "
        f"{ref_rate:.2f}/s, proctor {our_rate:.2f}/s",
        flush=True,
    )
    good = bench_line("per_trial_throughput_ratio", ref_rate / our_rate, "x", "<=", GOAL, ok)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
