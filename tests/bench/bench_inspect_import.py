"""``proctor import inspect`` of an Inspect AI log of 10,000 samples: wall time, end to end.

Not a test: it prints one ``BENCH`` line. The log is written by inspect-ai itself
(``write_eval_log``, its default zstd-compressed ``.eval``), in the Inspect venv
(``_inspect_venv.py``): the four samples of the committed ``tools.eval`` fixture (a tool call, its
result, an answer, usage, model and tool events, a score) repeated under new ids up to ``--samples``.
Timed: the CLI, ``proctor import inspect LOG -o DIR`` in a fresh process (read, convert, suite
files and every event committed to SQLite), with proctor's own reader (inspect_ai is not
installed in proctor's venv). The goal is on wall time; the process's CPU time is printed too,
as it is less sensitive to other work on a shared machine.

    python tests/bench/bench_inspect_import.py [--samples 10000] [--rounds 3] [--log PATH]

``--log PATH`` keeps the written log there and reuses it on the next run (writing 10,000
samples with inspect-ai takes minutes on a busy machine).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench_line import bench_line
from _inspect_venv import DEFAULT_VENV, inspect_python

GOAL_S = 10.0
FIXTURE = (
    Path(__file__).resolve().parents[1] / "scenarios" / "importers" / "fixtures" / "inspect" / "tools.eval"
)

WRITE_SCRIPT = r"""
import sys
from inspect_ai.log import read_eval_log, write_eval_log

log = read_eval_log(sys.argv[1])
n = int(sys.argv[3])
seed = log.samples
samples = []
for i in range(n):
    s = seed[i % len(seed)]
    samples.append(s.model_copy(update={"id": f"{s.id}-{i}", "uuid": f"{s.uuid}-{i}"}))
log.samples = samples
log.eval.dataset.samples = n
write_eval_log(log, sys.argv[2], format="eval")
"""


def write_log(python: Path, out: Path, samples: int, tmp: Path) -> None:
    script = tmp / "write_log.py"
    script.write_text(WRITE_SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("INSPECT_")}
    done = subprocess.run(
        [str(python), str(script), str(FIXTURE), str(out), str(samples)],
        capture_output=True,
        text=True,
        cwd=tmp,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(
            f"inspect-ai could not write the log (exit {done.returncode}):\n{done.stderr[-3000:]}"
        )


def import_once(log: Path, out: Path) -> tuple[float, float, bool, str]:
    """(wall s, CPU s of the import process, ok, its output)."""
    proctor = Path(sys.executable).parent / "proctor"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [str(proctor), "import", "inspect", str(log), "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, done.returncode == 0, (done.stdout + done.stderr).strip()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--inspect-venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--log", type=Path, help="keep the log here and reuse it when it exists")
    args = parser.parse_args()
    python = inspect_python(args.inspect_venv)
    with tempfile.TemporaryDirectory(prefix="proctor-bench-inspect-import-") as d:
        tmp = Path(d)
        log = args.log.resolve() if args.log else tmp / "big.eval"
        if not log.exists():
            write_log(python, log, args.samples, tmp)
        print(
            f"log: {args.samples} samples, {log.stat().st_size / 1e6:.1f} MB (written by inspect-ai)",
            flush=True,
        )
        times, ok = [], True
        for r in range(args.rounds):
            elapsed, cpu, good, said = import_once(log, tmp / f"imp{r}")
            good = good and f"{args.samples} imported trials" in said
            ok &= good
            times.append(elapsed)
            status = "" if good else f" (FAILED: {said[-500:]})"
            print(f"round {r + 1}: {elapsed:.2f} s wall, {cpu:.2f} s CPU{status}", flush=True)
    return 0 if bench_line("inspect_import_10k", statistics.median(times), "s", "<=", GOAL_S, ok) else 1


if __name__ == "__main__":
    sys.exit(main())
