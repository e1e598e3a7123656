"""proctor's engine against Inspect AI on the same workload: samples (trials) per second, end to end.

Not a test: it prints figures, one ``BENCH`` line each; the ratio compares two figures measured
in the same run, because these machines are noisy.

    python tests/bench/bench_vs_inspect.py [--samples 1000] [--rounds 3] [--proctor-runs 3] [--concurrency N]

The workload, on both sides: ``--samples`` samples (trials), each a question whose model turn
asks for one tool call (a definition lookup) and whose second turn answers; no scoring.

* Inspect AI (``inspect-ai`` from PyPI, pinned in tests/reference_servers/requirements-inspect.txt,
  in the venv of its own that ``make test`` builds, ``_inspect_venv.py``, or built on first use;
  ``--inspect-venv`` to put it elsewhere): a ``Task`` of the samples,
  ``use_tools`` + ``generate()``, model ``mockllm/model`` with custom outputs (one
  ``ModelOutput.for_tool_call``, then an answer; explicit usage, so no tokenizer download), one
  in-process ``@tool``. Timed: the ``eval()`` call, with Inspect's defaults for concurrency
  (``max_samples``/``max_connections``) and logging (the default ``.eval`` log format, written
  to a temporary log dir as Inspect does by default); ``display="none"`` (our side shows no
  progress either).
* proctor: the same number of trials of the ``offline:single`` agent, each making its call over
  MCP stdio to ``bench_mcp_server.py`` (one shared server process, started under proctor's
  supervisor), every event redacted and committed to SQLite, at proctor's default concurrency
  (the suite's ``concurrency.global``: 8) unless ``--concurrency`` says otherwise. Timed:
  ``run_suite`` (database created, matrix stored, server started and stopped, last event committed).

Both sides first run a few samples untimed in the same process (what a first run sets up once).
Each round runs Inspect once, then proctor ``--proctor-runs`` times (a proctor run takes ~1 s,
Inspect's ~12 s: a burst of other work on a shared machine skews one short run much more); the
ratio is of the medians of all runs of each side. ``BENCH engine_vs_inspect``
must be >= 10. Also printed: proctor with an ``MCPServer`` (mcp SDK) bench server instead of the
hand-written one (informational: that measures the SDK's server as much as proctor).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench_line import bench_line
from _engine_workload import bench_suite, describe, engine, valid
from _inspect_venv import DEFAULT_VENV, inspect_python

GOAL_RATIO = 10.0
PROCTOR_SIDE = "(offline:single, MCP stdio, events in SQLite, unscored)"

INSPECT_SCRIPT = r'''
import json, os, re, sys, tempfile, time

from inspect_ai import Task, __version__, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model
from inspect_ai.solver import generate, use_tools
from inspect_ai.tool import tool


@tool
def find_definition():
    async def execute(symbol: str) -> str:
        """Find where a function or class is defined: path:start-end, then its numbered source lines.

        Args:
            symbol: The function or class to look up.
        """
        return f"pkg/mod.py:10-12: function pkg.mod.{symbol}\n  10 | def {symbol}(x):\n  11 |     return x + 1\n  12 |"

    return execute


USAGE = ModelUsage(input_tokens=900, output_tokens=12, total_tokens=912)  # no tokenizer needed


def outputs(input, tools, tool_choice, config):
    last = input[-1]
    if isinstance(last, ChatMessageTool):
        out = ModelOutput.from_content(model="mockllm/model", content="It is defined at pkg/mod.py:10.\n" + last.text)
    else:
        symbol = re.search(r"`([^`]+)`", last.text).group(1)
        out = ModelOutput.for_tool_call(model="mockllm/model", tool_name="find_definition", tool_arguments={"symbol": symbol})
    out.usage = USAGE
    return out


try:  # the default concurrency: adaptive connections (none of max_samples/max_connections set)
    from inspect_ai.util._concurrency import AdaptiveConcurrency

    a = AdaptiveConcurrency()
    adaptive = f"adaptive, start {a.start}, range {a.min}-{a.max}"
except Exception:
    adaptive = "adaptive (Inspect's default)"

def task_of(n):
    return Task(
        dataset=[Sample(input=f"Where is `func_{i % 10}` defined?", id=i) for i in range(n)],
        solver=[use_tools(find_definition()), generate()],
    )


n = int(sys.argv[1])
model = get_model("mockllm/model", custom_outputs=outputs)
with tempfile.TemporaryDirectory() as warm_dir:  # untimed: what a first eval() in a process sets up
    eval(task_of(10), model=model, log_dir=warm_dir, display="none")
task = task_of(n)
with tempfile.TemporaryDirectory() as log_dir:
    start = time.perf_counter()
    cpu = time.process_time()
    logs = eval(task, model=model, log_dir=log_dir, display="none")
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu
    log = logs[0]
    samples = log.samples or []
    tool_messages = [sum(isinstance(m, ChatMessageTool) for m in s.messages) for s in samples]
    files = os.listdir(log_dir)
    print(json.dumps({
        "version": __version__,
        "status": log.status,
        "samples": len(samples),
        "min_tool_messages": min(tool_messages) if tool_messages else 0,
        "elapsed_s": wall,
        "cpu_s": cpu,
        "samples_per_s": n / wall,
        "log_files": files,
        "log_bytes": sum(os.path.getsize(os.path.join(log_dir, f)) for f in files),
        "max_samples": log.eval.config.max_samples,
        "max_connections": log.plan.config.max_connections,
        "adaptive": adaptive,
    }))
'''


def run_inspect(python: Path, samples: int, script: Path) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="proctor-bench-inspect-") as cwd:
        # cwd: Inspect reads a .env and writes nothing else outside log_dir; keep it away from the repo.
        env = {k: v for k, v in os.environ.items() if not k.startswith("INSPECT_")}
        done = subprocess.run(
            [str(python), str(script), str(samples)],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=env,
            check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"the Inspect AI run failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--proctor-runs",
        type=int,
        default=3,
        help="proctor runs per round (each ~1 s against Inspect's ~12 s: more samples of the shorter, noisier figure)",
    )
    parser.add_argument(
        "--concurrency", type=int, default=None, help="proctor's trial concurrency (default: the suite's, 8)"
    )
    parser.add_argument("--inspect-venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--no-sdk-server", action="store_true", help="skip the informational MCPServer run")
    args = parser.parse_args()

    python = inspect_python(args.inspect_venv)
    inspect_rates: list[float] = []
    ours_rates: list[float] = []
    inspect_cpu: list[float] = []  # ms per sample, the whole Inspect process
    ours_cpu: list[float] = []  # ms per trial, engine process + server processes
    valid_all = True
    with tempfile.TemporaryDirectory(prefix="proctor-bench-vs-inspect-") as d:
        tmp = Path(d)
        script = tmp / "inspect_workload.py"
        script.write_text(INSPECT_SCRIPT)
        suite = bench_suite(tmp)
        engine(suite, tmp / "warm-up.db", 20, args.concurrency, None, scored=False)  # untimed, as Inspect's
        for r in range(args.rounds):
            ins = run_inspect(python, args.samples, script)
            ok_ins = (
                ins["status"] == "success"
                and ins["samples"] == args.samples
                and ins["min_tool_messages"] == 1
            )
            valid_all &= bool(ok_ins)
            rate = float(str(ins["samples_per_s"]))
            inspect_rates.append(rate)
            inspect_cpu.append(1000 * float(str(ins["cpu_s"])) / args.samples)
            print(
                f"round {r + 1}: Inspect AI {ins['version']}: {ins['samples']} samples ({ins['status']}, "
                f">= {ins['min_tool_messages']} tool call each) in {float(str(ins['elapsed_s'])):.2f} s: "
                f"{rate:.1f} samples/s, {1000 * float(str(ins['cpu_s'])) / args.samples:.2f} ms CPU/sample; "
                f"log {ins['log_files']} ({int(str(ins['log_bytes'])) / 1e6:.1f} MB, Inspect's default format); "
                f"max_samples {ins['max_samples']}, max_connections {ins['max_connections']}: {ins['adaptive']}",
                flush=True,
            )
            for k in range(args.proctor_runs):
                e = engine(
                    suite, tmp / f"round{r}-{k}.db", args.samples, args.concurrency, None, scored=False
                )
                valid_all &= valid(e)
                ours_rates.append(e["trials_per_s"])
                ours_cpu.append(1000 * (e["cpu_s"] + e["server_cpu_s"]) / e["trials"])
                describe(f"round {r + 1}: proctor {PROCTOR_SIDE}, concurrency {e['concurrency']:.0f}", e)
            time.sleep(0.5)
        sdk = None
        if not args.no_sdk_server:
            sdk = engine(
                bench_suite(tmp, sdk_server=True), tmp / "sdk.db", args.samples, args.concurrency, None, False
            )
    inspect_rate = statistics.median(inspect_rates)
    ours = statistics.median(ours_rates)
    if sdk is not None:
        describe("informational: proctor with an MCPServer (mcp SDK) bench server", sdk)
        print(f"  that is {sdk['trials_per_s'] / inspect_rate:.1f}x Inspect AI's median")
    cpu_in, cpu_ours = statistics.median(inspect_cpu), statistics.median(ours_cpu)
    print(
        f"CPU per sample (less sensitive to other work on the machine than wall time): Inspect AI "
        f"{cpu_in:.2f} ms, proctor {cpu_ours:.2f} ms (engine and server processes): {cpu_in / cpu_ours:.1f}x"
    )
    if not valid_all:
        print("a run did not complete every sample with its tool call: the ratio does not count")
    bench_line("inspect_samples_per_s", inspect_rate, "samples/s", ">", 0, valid_all)
    bench_line("proctor_trials_per_s", ours, "trials/s", ">", 0, valid_all)
    ok = bench_line("engine_vs_inspect", ours / inspect_rate, "x", ">=", GOAL_RATIO, valid_all)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
