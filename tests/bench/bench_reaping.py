"""Random kills against the supervisor, many rounds, under load: how many rounds leave a process.

Each round starts a stand-in for proctor, which starts the supervisor on a hand-written hostile
server (tests/fakes/raw_stdio_server.py: ignores SIGTERM, spawns a grandchild, floods stderr,
and with ``--escape`` double-forks a ``setsid`` daemon). At a random moment it then does one of:

- ``proctor``: ``kill -9`` of the stand-in (proctor dies);
- ``supervisor``: ``kill -9`` of the supervisor, then the stand-in kills what is left of its
  group, as proctor does after a session ends (the daemon is not started: see below);
- ``storm``: a burst of SIGTERM/SIGINT/SIGHUP/SIGCHLD at the supervisor.

A round fails when any process carrying its marker is alive 10 s later.

    .venv/bin/python tests/bench/bench_reaping.py --rounds 30 --load 2
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from tempfile import TemporaryDirectory

ROOT = Path(__file__).resolve().parents[2]
RAW = ROOT / "tests" / "fakes" / "raw_stdio_server.py"
BUSY = "import time\nend = time.monotonic() + 900\nwhile time.monotonic() < end: pass\n"
STAND_IN = (
    "import os, signal, subprocess, sys, time\n"
    "argv = sys.argv[2:]\n"
    "argv[argv.index('--parent') + 1] = str(os.getpid())\n"
    "sup = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)\n"
    "open(sys.argv[1], 'w').write(str(sup.pid))\n"
    "sup.wait()\n"
    "try:\n"
    "    os.killpg(sup.pid, signal.SIGKILL)  # what proctor does once the supervisor has exited\n"
    "except ProcessLookupError:\n"
    "    pass\n"
    "time.sleep(600)\n"
)


def marked(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def one_round(folder: Path, mode: str, rng: random.Random) -> list[int]:
    marker = f"bench-reap-{uuid.uuid4().hex}"
    flags = ["--ignore-term", "--grandchild", "--stderr-bytes", "2000000"]
    if mode != "supervisor":
        flags.append("--escape")
    argv = [
        sys.executable, "-m", "proctor.engine.tools.supervise", "--parent", "0",
        "--log", str(folder / "raw.stderr.log"), "--log-bytes", "100000", "--",
        sys.executable, str(RAW), "--marker", marker, *flags,
    ]  # fmt: skip
    pid_file = folder / f"{marker}.pid"
    proctor = subprocess.Popen([sys.executable, "-c", STAND_IN, str(pid_file), *argv])
    time.sleep(rng.uniform(0.05, 1.5))
    if mode == "proctor":
        proctor.kill()
    else:
        deadline = time.monotonic() + 10
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        sup = int(pid_file.read_text() or 0)
        if mode == "supervisor":
            os.kill(sup, signal.SIGKILL)
        else:
            for _ in range(rng.randint(1, 30)):
                try:
                    os.kill(sup, rng.choice([signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD]))
                except ProcessLookupError:
                    break
                time.sleep(rng.uniform(0, 0.005))
    deadline = time.monotonic() + 10
    while (left := [p for p in marked(marker) if p != proctor.pid]) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:
        with contextlib.suppress(OSError):
            print("   left:", pid, (Path("/proc") / str(pid) / "cmdline").read_bytes()[:300], flush=True)
        os.kill(pid, signal.SIGKILL)
    proctor.kill()
    proctor.wait()
    return left


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--load", type=int, default=2)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    hogs = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(args.load)]
    failed: dict[str, int] = {}
    counts: dict[str, int] = {}
    try:
        with TemporaryDirectory(prefix="proctor-reap-") as tmp:
            for n in range(args.rounds):
                mode = ("proctor", "supervisor", "storm")[n % 3]
                left = one_round(Path(tmp), mode, rng)
                counts[mode] = counts.get(mode, 0) + 1
                if left:
                    failed[mode] = failed.get(mode, 0) + 1
                print(f"round {n} ({mode}): {'LEFT ' + str(left) if left else 'nothing left'}", flush=True)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    for mode, count in counts.items():
        print(f"{mode}: {failed.get(mode, 0)} of {count} rounds left a process (load {args.load})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
