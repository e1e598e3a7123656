"""Run every benchmark script in this folder (``make bench``); each prints its own figures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    failed = []
    for script in sorted(HERE.glob("bench_*.py")):
        if script.name == "bench_mcp_server.py":
            continue
        print(f"\n=== {script.name}", flush=True)
        if subprocess.call([sys.executable, str(script)]) != 0:
            failed.append(script.name)
    print("\nbelow target: " + ", ".join(failed) if failed else "\nall benchmarks at or above target")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
