"""``proctor export --format jsonl|otel`` on large scored stores: linear time, flat memory.

Not a test: it prints ``BENCH`` lines. The stores are the ones ``bench_report.py`` builds (the
demo run replayed through the real ``StoreWriter``). Each export runs in a fresh process that
reports its peak RSS growth over the RSS it had after imports and the first query, so the figure
is what the export itself holds; the references (time and memory at N) are measured in the same
run as the figures at 4N.

    python tests/bench/bench_export.py [--n 2500] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench_line import bench_line
from bench_report import build_store

GOAL_SCALING_X = 5.0
GOAL_MEMORY_X = 1.5

_CHILD = """
import json, resource, sys, time
from pathlib import Path
from proctor.engine.reports.export import export_to_file
from proctor.engine.reports import otel_export  # noqa: F401 - imported before the baseline
from proctor.store.read.reader import StoreReader

def status(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

db, fmt, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
with StoreReader(db) as r:
    r.run()
try:  # Linux: reset the peak (VmHWM) to the current RSS, so imports' transient peak is not counted
    Path("/proc/self/clear_refs").write_text("5")
except OSError:
    pass
before = status("VmRSS")
start = time.perf_counter()
n = export_to_file(db, fmt, out)
elapsed = time.perf_counter() - start
after = status("VmHWM")
print(json.dumps({"n": n, "s": elapsed, "base_mib": before, "peak_mib": after, "bytes": out.stat().st_size}))
"""


def measure(db: Path, fmt: str, out: Path) -> dict[str, float]:
    """One export of ``db`` in a fresh process: rows, seconds, RSS before and at peak (MiB)."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(db), fmt, str(out)], check=True, capture_output=True, text=True
    )
    out.unlink()
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _label(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else f"{n / 1000:g}k"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2500, help="the reference store; the other has 4n trials")
    parser.add_argument("--keep", type=Path, help="keep the stores in this folder (reused when present)")
    parser.add_argument("--formats", default="jsonl,otel")
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory(prefix="proctor-export-") as d:
        tmp = args.keep or Path(d)
        tmp.mkdir(parents=True, exist_ok=True)
        sizes = (args.n, 4 * args.n)
        for n in sizes:
            db = tmp / f"report_{n}.db"
            if not db.exists():
                start = time.perf_counter()
                build_store(db, n, tmp)
                print(f"built {n} trials in {time.perf_counter() - start:.1f} s", flush=True)
        for fmt in args.formats.split(","):
            figures = {}
            for n in sizes:
                measure(tmp / f"report_{n}.db", fmt, tmp / "warm.out")  # page cache, not the disk
                m = measure(tmp / f"report_{n}.db", fmt, tmp / f"export.{fmt}")
                figures[n] = m
                growth = m["peak_mib"] - m["base_mib"]
                print(
                    f"export {fmt}, {n} trials: {m['n']:.0f} rows in {m['s']:.2f} s, "
                    f"{m['bytes'] / 2**20:.0f} MiB written, peak RSS {m['peak_mib']:.0f} MiB "
                    f"(+{growth:.0f} MiB over {m['base_mib']:.0f} MiB after imports)",
                    flush=True,
                )
            small, big = figures[sizes[0]], figures[sizes[1]]
            label = _label(sizes[1])
            print(f"export {fmt} {label}: {big['s']:.2f} s (a reference, no goal)", flush=True)
            ok &= bench_line(f"export_{fmt}_scaling_4x", big["s"] / small["s"], "x", "<=", GOAL_SCALING_X)
            ok &= bench_line(
                f"export_{fmt}_peak_rss_4x", big["peak_mib"] / small["peak_mib"], "x", "<=", GOAL_MEMORY_X
            )
            grow_small = max(1.0, small["peak_mib"] - small["base_mib"])
            print(
                f"  growth over imports: {small['peak_mib'] - small['base_mib']:.0f} MiB at {_label(sizes[0])}, "
                f"{big['peak_mib'] - big['base_mib']:.0f} MiB at {label} "
                f"({(big['peak_mib'] - big['base_mib']) / grow_small:.2f}x)",
                flush=True,
            )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
