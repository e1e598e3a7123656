"""``proctor judge DB``: more judge passes over finished trials, without re-running agents."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from proctor.app.commands._checks import need_db
from proctor.app.exit_codes import ExitCode
from proctor.engine.grading.rejudge import load_run_suite, refuse_replay, rejudge_db
from proctor.engine.judges.base import NOTHING_TO_JUDGE_ON
from proctor.engine.runs.options import suite_drift
from proctor.store.lock import EngineLock
from proctor.store.operator_commands import enqueue_operator_command
from proctor.store.read.reader import StoreReader


def _warn_if_suite_changed(db: Path) -> None:
    """Re-judging with an edited rubric is legitimate, but the user must know the scores moved with it."""
    _, loaded = load_run_suite(db)
    with StoreReader(db) as reader:
        run = reader.run()
    drift = suite_drift(run.config, loaded) if run else None
    if drift is not None:
        print(
            f"warning: {loaded.root} has changed since the run ({drift}); "
            "new passes are scored against the suite as it is now",
            file=sys.stderr,
        )


def judge_command(args: argparse.Namespace) -> int:
    need_db(args.db)
    with StoreReader(args.db) as reader:
        run = reader.run()
    if run is not None:  # before the suite is loaded or a live engine is asked: neither applies
        refuse_replay(args.db, run.config)
    _warn_if_suite_changed(args.db)
    lock = EngineLock.try_acquire(args.db)
    if lock is None:
        # A live engine owns the run: it does the re-judging, so the run keeps one writer.
        request: dict[str, Any] = {"passes": args.passes}
        if args.trials:
            request["trial_ids"] = args.trials
        if args.judge:
            request["judge"] = args.judge
        command_id = enqueue_operator_command(args.db, "rejudge", request)
        print(
            f"the run is held by proctor process {EngineLock.holder(args.db)}; queued the re-judge as "
            f"command #{command_id}: its passes will appear in the run (watch it with 'proctor watch')"
        )
        return ExitCode.OK
    try:
        results = asyncio.run(
            rejudge_db(args.db, passes=args.passes, judge_model=args.judge, trial_ids=args.trials)
        )
    finally:
        lock.release()
    errors = 0
    for r in results:
        if r.skipped:
            print(f"#{r.trial_id}: skipped ({r.skipped})")
            continue
        added = ", ".join(f"{judge} passes {list(p)}" for judge, p in r.new_passes.items()) or (
            f"no pass: {NOTHING_TO_JUDGE_ON}"
        )
        quality = "–" if r.llm_quality is None else f"{r.llm_quality:.3f}"
        passed = (
            "no answer" if r.no_answer else {True: "passed", False: "failed", None: "no verdict"}[r.passed]
        )
        note = f", {r.errors} judge error(s)" if r.errors else ""
        print(f"#{r.trial_id}: {added}; llm_quality {quality}; {passed}{note}")
        errors += r.errors
    done = sum(not r.skipped for r in results)
    print(f"re-judged {done} trial(s); {errors} judge error(s)")
    return ExitCode.FAILED if errors else ExitCode.OK
