"""``proctor replay DB --db NEW``: a run's tool calls made again, no model; then the drift."""

from __future__ import annotations

import argparse
import asyncio
import sys

from rich.console import Console
from rich.table import Table
from rich.text import Text

from proctor.app.exit_codes import ExitCode
from proctor.app.signals import until_stop_signal
from proctor.engine.drift.result_diff import STATUSES
from proctor.engine.drift.runs_diff import Drift, replay_drift
from proctor.engine.replay.replayer import ReplayOptions, replay_run
from proctor.store.display_text import one_line


def replay_command(args: argparse.Namespace) -> int:
    options = ReplayOptions(
        source=args.source, db=args.db, suite=args.suite, arms=args.arms, concurrency=args.concurrency
    )
    out = Console(highlight=False, stderr=False)
    terminated: list[int] = []

    try:
        result = asyncio.run(until_stop_signal(replay_run(options), terminated))  # a replay is not resumed
    except (KeyboardInterrupt, asyncio.CancelledError):
        print(f"proctor replay: interrupted; {args.db} keeps the calls replayed so far", file=sys.stderr)
        return ExitCode.TERMINATED if terminated else ExitCode.INTERRUPTED
    print(
        f"replayed {result.calls:,} call(s) of {result.trials:,} trial(s) in {result.wall_s:.1f} s "
        f"into {args.db} (run {result.run_id})"
        + (
            f"; {result.skipped:,} call(s) to proctor's built-in tools not replayed" if result.skipped else ""
        ),
        file=sys.stderr,
    )
    drift = replay_drift(args.db)
    if drift is not None:
        print_drift(out, drift)
    print(
        f"next: proctor watch {args.db} (c: recorded vs replayed), "
        f"proctor report {args.db} --format md, proctor gate {args.db} --max-changed 0",
        file=sys.stderr,
    )
    return ExitCode.OK


def print_drift(out: Console, drift: Drift) -> None:
    """The per-server counts, then one line per call that did not stay identical (first 20)."""
    table = Table(title=f"drift against {one_line(drift.source_db, 80)}", title_justify="left")
    table.add_column("server", overflow="fold")
    # The four classes always; missing and skipped only when some call is so.
    columns = [x for x in STATUSES if x not in ("missing", "skipped") or drift.totals[x]]
    for status in columns:
        table.add_column(status.replace("_", " "), justify="right")
    for s in drift.servers:
        table.add_row(Text(one_line(s.server, 40)), *(str(s.counts[x]) for x in columns))
    table.add_row(Text("all", style="bold"), *(str(drift.totals[x]) for x in columns))
    out.print(table)
    shown = [c for c in drift.calls if c.diff.status in ("changed", "new_error", "fixed_error")]
    for c in shown[:20]:
        out.print(Text(f"{one_line(c.name, 90)}: {one_line(c.diff.summary(), 200)}"))
    if len(shown) > 20:
        out.print(
            Text(f"… {len(shown) - 20} more; proctor report DB --format md lists them all", style="dim")
        )
    for note in drift.notes:
        out.print(Text(f"note: {one_line(note, 200)}", style="dim"))


__all__ = ["print_drift", "replay_command"]
