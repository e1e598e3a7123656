"""A whole trial whose tool answers with one 30 MB line, on the real run path.

Prints one ``BENCH`` line per figure: the trial's seconds (goal: seconds, not the minute it took
before the caps), and the trial against the least anyone can do with those bytes, measured in
the same run: a child writes the 30 MB line to a pipe and we read and parse it
(``bench_stdio_line``'s reference). The reference was once the same trial with a 1 KB answer;
since proctor reads stdio itself that trial takes milliseconds, so the ratio measured the fixed
cost of a trial, not the cost of the bytes (it read 38-62x for a trial of 0.4 s). The 1 KB
trial's seconds are still printed.
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
from bench_stdio_line import TRIES, _pipe_seconds  # noqa: E402

from proctor.engine.runs.options import RunOptions  # noqa: E402
from proctor.engine.runs.session import run_suite  # noqa: E402
from proctor.scenarios.loader import load_suite  # noqa: E402
from proctor.store.read.reader import StoreReader  # noqa: E402

SERVER = ROOT / "tests" / "fakes" / "hostile_mcp_server.py"
MAX_RATIO = 5.0
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
    pipe = min(_pipe_seconds() for _ in range(TRIES))
    print(
        f"trial with a 1 KB answer {small:.3f} s; 30 MB line read from a pipe and parsed {pipe:.2f} s",
        flush=True,
    )
    ok = bench_line("hostile_30mb_line_trial", huge, "s", "<=", MAX_SECONDS)
    ok &= bench_line("hostile_30mb_trial_vs_pipe_read", huge / pipe, "x", "<=", MAX_RATIO)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
