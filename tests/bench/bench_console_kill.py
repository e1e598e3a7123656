"""How long the engine process outlives a console killed with ``kill -9`` (README: "within a second").

Each round starts ``proctor demo`` in a real terminal (tmux), waits until trials run, kills the
console process with SIGKILL at a random moment, and times until the engine process has exited.
``--load N`` keeps N busy-looping processes running meanwhile (the machine is shared: N=2 on two
cores doubles the run queue).

    .venv/bin/python tests/bench/bench_console_kill.py --rounds 8 --load 2
"""

from __future__ import annotations

import argparse
import contextlib
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUSY = "import time\nend = time.monotonic() + 600\nwhile time.monotonic() < end: pass\n"


def _pids(pattern: str) -> list[int]:
    out = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _screen(session: str) -> str:
    return subprocess.run(
        ["tmux", "capture-pane", "-p", "-t", session], capture_output=True, text=True
    ).stdout


def one_round(folder: Path, n: int, rng: random.Random) -> float:
    db = folder / f"round{n}.db"
    session = f"proctor-kill9-{time.monotonic_ns()}"
    command = f"{sys.executable} -m proctor.app.cli demo --db {db} --epochs 30; sleep 60"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "120", "-y", "35", command], check=True)
    try:
        deadline = time.monotonic() + 90
        while "▶running" not in _screen(session):
            if time.monotonic() > deadline:
                raise SystemExit(f"round {n}: the run never showed as running")
            time.sleep(0.1)
        time.sleep(rng.uniform(0.0, 2.0))
        console = _pids(f"cli demo --db {db}")
        engine = _pids(f"engine-process.*{db}")
        if not console or not engine:
            raise SystemExit(f"round {n}: console {console} engine {engine}")
        start = time.monotonic()
        for pid in console:
            with contextlib.suppress(ProcessLookupError):
                subprocess.run(["kill", "-9", str(pid)], check=False)
        while _pids(f"engine-process.*{db}"):
            if time.monotonic() - start > 60:
                return float("inf")
            time.sleep(0.02)
        return time.monotonic() - start
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--load", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if not shutil.which("tmux"):
        raise SystemExit("tmux is needed")
    rng = random.Random(args.seed)
    hogs = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(args.load)]
    times = []
    try:
        with tempfile.TemporaryDirectory(prefix="proctor-kill9-") as tmp:
            for n in range(args.rounds):
                t = one_round(Path(tmp), n, rng)
                times.append(t)
                print(f"round {n}: engine gone {t:.2f} s after kill -9 of the console", flush=True)
    finally:
        for hog in hogs:
            hog.send_signal(signal.SIGKILL)
            hog.wait()
    print(
        f"{len(times)} rounds, load {args.load}: median {statistics.median(times):.2f} s, "
        f"max {max(times):.2f} s, min {min(times):.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
