"""``proctor demo`` and ``proctor run``: running a suite, in the console or headless."""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from proctor.app.exit_codes import ExitCode
from proctor.app.signals import until_stop_signal
from proctor.engine.grading.anchors import verify_before_run
from proctor.engine.runs.executors import check_executor
from proctor.engine.runs.matrix import check_planned_size
from proctor.engine.runs.options import (
    RunError,
    RunOptions,
    check_resumable,
    recorded_suite_dir,
    resumed_options,
)
from proctor.engine.runs.preflight import (
    PreflightError,
    check_listed_tools_now,
    find_problems,
    models_source,
    plan_of,
    runnable,
)
from proctor.engine.runs.session import run_suite
from proctor.engine.suites import load_suite
from proctor.scenarios.demo import SUITE_DIR as DEMO_SUITE_DIR
from proctor.scenarios.loader import LoadedSuite
from proctor.store.display_text import sanitize
from proctor.store.lock import EngineLock, resume_command
from proctor.store.read.reader import StoreReader
from proctor.store.schema import init_db


def default_db(loaded: LoadedSuite) -> Path:
    """``runs/SUITE_NAME.db``, the way ``proctor demo`` uses ``runs/demo.db``: a first run needs no flag."""
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in loaded.suite.name).strip(".") or "run"
    return Path("runs") / f"{name}.db"


def _preflight(loaded: LoadedSuite, options: RunOptions, keep_going: bool) -> RunOptions:
    """Refuse before anything starts: locked anchors that fail, another suite's run, a held run,
    a missing command, key or endpoint (engine/runs/preflight.py), or gold calls to tools no arm
    offers. With ``keep_going`` the arms and models a problem stops are left out instead, and
    the options returned play the rest."""
    db = options.db
    verify_before_run(loaded)
    existing = check_resumable(db, loaded, resume=options.resume)
    planned = resumed_options(options, existing[1]) if existing is not None else options
    source = models_source(loaded, options, existing[1] if existing is not None else None)
    options, left_out = _keep_going(loaded, options, planned, keep_going, source)
    skipped = check_listed_tools_now(loaded, left_out=left_out)
    if skipped:
        print(f"note: {sanitize(skipped)}", file=sys.stderr)
    lock = EngineLock.try_acquire(db) if db.exists() else None
    if db.exists() and lock is None:
        raise RunError(
            f"{EngineLock.held_message(db)}; watch it with 'proctor watch', or stop that process first"
        )
    if lock is not None:
        lock.release()
    return options


def _keep_going(
    loaded: LoadedSuite, options: RunOptions, planned: RunOptions, keep_going: bool, models_from: str
) -> tuple[RunOptions, list[str]]:
    """``options`` less what the problems stop (with ``keep_going``), and the arms left out."""
    problems = find_problems(loaded, planned, models_from)
    if not problems:
        return options, []
    plan = plan_of(loaded, planned, models_from)
    can = runnable(plan, problems)
    if not keep_going or not can.arms or not can.models:
        raise PreflightError(problems, plan)
    arms = [a for a in plan.arms if a not in can.arms]
    models = [m for m in plan.models if m not in can.models]
    left = [f"arm(s) {', '.join(arms)}"] * bool(arms) + [f"model(s) {', '.join(models)}"] * bool(models)
    print(
        sanitize(
            f"proctor: --keep-going: left out {' and '.join(left)}, for:\n  "
            + "\n  ".join(p.line() for p in problems)
            + f"\nrunning arms {', '.join(can.arms)} with models {', '.join(can.models)}"
        ),
        file=sys.stderr,
    )
    left_out = [{"arm": a, "why": "; ".join(p.line() for p in problems if a in p.arms)} for a in arms] + [
        {"model": m, "why": "; ".join(p.line() for p in problems if m in p.models)} for m in models
    ]
    return replace(
        options,
        arms=list(can.arms) if arms else options.arms,
        models=list(can.models) if models else options.models,
        left_out=tuple(left_out),
    ), arms


def _suite_dir(args: argparse.Namespace) -> Path:
    """The demo's suite, the one given, or (``run --resume --db DB`` alone) the one the run recorded."""
    if args.command == "demo":
        return DEMO_SUITE_DIR
    if args.suite is not None:
        return Path(args.suite)
    if not args.resume or args.db is None:
        raise RunError(
            "give the suite folder (proctor run SUITE), or continue a recorded run with "
            "proctor run --resume --db DB"
        )
    return recorded_suite_dir(args.db)


def run_command(args: argparse.Namespace) -> int:
    loaded = load_suite(_suite_dir(args))
    if args.db is None:
        args.db = default_db(loaded)
        print(f"proctor: no --db given; recording the run in {args.db}", file=sys.stderr)
    resume = args.resume or (args.command == "demo" and args.db.exists())
    options = RunOptions(
        db=args.db,
        models=args.models,
        arms=args.arms,
        scenarios=args.scenarios,
        epochs=args.epochs,
        concurrency=args.concurrency,
        resume=resume,
        base_seed=args.seed,
        executor=args.executor,
        address=args.address,
    )
    check_executor(options)
    check_planned_size(
        loaded, models=options.models, arms=options.arms, scenarios=options.scenarios, epochs=options.epochs
    )
    options = _preflight(loaded, options, args.keep_going)
    for warning in loaded.warnings:
        print(f"warning: {sanitize(warning)}", file=sys.stderr)
    if not args.headless:
        from proctor.app.commands.engine_process import run_engine_process
        from proctor.app.tui import run_console

        init_db(args.db)  # the console opens the database before the engine's first write
        return run_console(args.db, engine=lambda: run_engine_process(loaded.root, options), live=True)
    return _run_headless(args, loaded, options)


def _run_headless(args: argparse.Namespace, loaded: LoadedSuite, options: RunOptions) -> int:
    from proctor.app.headless import HeadlessProgress, error_summary, summary_table, verdict_summary

    err = Console(stderr=True, highlight=False)
    out = Console(highlight=False, width=None if sys.stdout.isatty() else 160)  # CI logs: no squashed columns
    progress = HeadlessProgress(err)
    terminated: list[int] = []

    async def run_until_signalled() -> str:
        """SIGTERM and SIGHUP stop the run the way Ctrl-C does: flushed, marked interrupted, resumable.

        A signal the process inherited as ignored (SIGHUP under nohup) stays ignored.
        """
        return await until_stop_signal(
            run_suite(
                loaded, options, check_anchors=False, on_start=progress.start, on_progress=progress.advance
            ),
            terminated,
        )

    try:
        status = asyncio.run(run_until_signalled())
    except (KeyboardInterrupt, asyncio.CancelledError):
        progress.stop()
        err.print(
            f"proctor: interrupted; resume with {resume_command(args.db)}", markup=False, soft_wrap=True
        )
        return ExitCode.TERMINATED if terminated else ExitCode.INTERRUPTED
    except BaseException:
        progress.stop()  # the error (a full disk, a deleted database) is printed on a clean line
        raise
    progress.stop()
    out.print(summary_table(args.db))
    verdicts_text = verdict_summary(args.db)
    if verdicts_text is not None:
        out.print(verdicts_text)
    errors_text = error_summary(args.db)
    if errors_text is not None:
        out.print(errors_text)
    with StoreReader(args.db) as reader:
        errors = sum(t.status == "error" for t in reader.trials())
    if status != "finished" or errors:
        return ExitCode.FAILED
    return ExitCode.OK
