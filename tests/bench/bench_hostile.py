"""A hostile server's 30 MB single-line answer against a 1 KB one, on the same run path.

Prints one ``BENCH`` line per figure. The reference is the same trial with a small answer,
measured in the same process, so the ratio holds on a noisy machine; the absolute seconds of
the hostile trial are printed too (goal: seconds, not the minute it took before the caps).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from _bench_line import bench_line  # noqa: E402

from proctor.engine.runs.options import RunOptions  # noqa: E402
from proctor.engine.runs.session import run_suite  # noqa: E402
from proctor.scenarios.loader import load_suite  # noqa: E402
from proctor.store.read.reader import StoreReader  # noqa: E402

SERVER = ROOT / "tests" / "fakes" / "hostile_mcp_server.py"
MAX_RATIO = 15.0
MAX_SECONDS = 10.0


def _suite(root: Path, huge: int) -> Path:
    (root / "scenarios").mkdir(parents=True)
    args = [str(SERVER), "--pidfile", str(root / "pids"), "--huge-bytes", str(huge)]
    suite = {
        "name": "hostile-bench",
        "mcpServers": {"hostile": {"command": sys.executable, "args": args}},
        "arms": {"hostile": {"servers": ["hostile"]}},
        "models": ["offline:default"],
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    scenario = {
        "id": "dump",
        "prompt": "Dump the whole raw log of the billing service.",
        "keywords": {"required": ["x"]},
    }
    (root / "scenarios" / "dump.yaml").write_text(yaml.safe_dump(scenario))
    return root


def _trial_seconds(tmp: Path, huge: int) -> float:
    """The trial's own wall time (the server's slow exit at the end of the run is not the trial's)."""
    loaded = load_suite(_suite(tmp / f"suite-{huge}", huge))
    db = tmp / f"{huge}.db"
    assert asyncio.run(run_suite(loaded, RunOptions(db=db))) == "finished"
    with StoreReader(db) as reader:
        (trial,) = reader.trials()
    assert trial.status == "finished" and trial.wall_s is not None
    return trial.wall_s


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="proctor-hostile-") as d:
        tmp = Path(d)
        small = _trial_seconds(tmp, 1_000)
        huge = _trial_seconds(tmp, 30_000_000)
    ok = bench_line("hostile_30mb_line_trial", huge, "s", "<=", MAX_SECONDS)
    ok &= bench_line("hostile_30mb_vs_1kb_trial_ratio", huge / small, "x", "<=", MAX_RATIO)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
