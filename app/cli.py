"""The ``proctor`` command line.

Exit codes (stable, for CI): 0 the command did what it was asked (a run completed, even with
failed answers); 2 bad input (suite, config, database, flags); 3 a run completed but some
trials ended in error, or a check failed; 130 interrupted (the run stays resumable).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from proctor.app import cli_interop, cli_judging
from proctor.engine.grading.anchors import AnchorError, verify_before_run
from proctor.engine.providers.registry import ProviderConfigError
from proctor.engine.runs.runner import RunError, RunOptions
from proctor.engine.runs.session import run_suite, serve_run
from proctor.scenarios.demo import SUITE_DIR as DEMO_SUITE_DIR
from proctor.scenarios.loader import LoadedSuite, SuiteError, load_suite
from proctor.scenarios.repo import RepoError
from proctor.store.lock import EngineLock
from proctor.store.reader import StoreReader
from proctor.store.schema import SchemaError, init_db

EXIT_OK, EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED = 0, 2, 3, 130
DEMO_DB = Path("runs/demo.db")


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _add_run_flags(p: argparse.ArgumentParser, *, db_default: Path | None) -> None:
    p.add_argument("--models", type=_csv, help="comma-separated provider:model ids (default: the suite's)")
    p.add_argument("--arms", type=_csv, help="comma-separated arm names (default: all)")
    p.add_argument("--scenarios", type=_csv, help="comma-separated scenario ids (default: all)")
    p.add_argument("--epochs", type=int, help="repetitions of every trial, each with its own seed")
    p.add_argument("--concurrency", type=int, help="trials running at once (default: the suite's)")
    p.add_argument("--seed", type=int, default=0, help="base seed from which each epoch's seed is derived")
    p.add_argument(
        "--db", type=Path, default=db_default, required=db_default is None, help="the run database"
    )
    p.add_argument(
        "--resume", action="store_true", help="continue the run in --db: unfinished trials run again"
    )
    p.add_argument("--headless", action="store_true", help="no console: a progress bar and a summary table")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="proctor", description="Live evaluation console for MCP servers.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the bundled demo suite offline (resumes runs/demo.db if present)")
    _add_run_flags(demo, db_default=DEMO_DB)
    run = sub.add_parser("run", help="run a suite")
    run.add_argument("suite", type=Path, help="a suite folder (suite.yaml + scenarios/)")
    _add_run_flags(run, db_default=None)
    watch = sub.add_parser("watch", help="open the console on a run database (live or finished)")
    watch.add_argument("db", type=Path)
    servers = sub.add_parser("servers", help="MCP server utilities")
    servers_sub = servers.add_subparsers(dest="servers_command", required=True)
    check = servers_sub.add_parser("check", help="start each server, list its tools")
    check.add_argument("config", type=Path, help="a suite folder or an mcpServers JSON/YAML file")
    cli_judging.register(sub)
    cli_interop.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    err = Console(stderr=True, highlight=False)
    code = cli_judging.dispatch(args)
    if code is None:
        code = cli_interop.dispatch(args)
    if code is not None:
        return code
    try:
        if args.command in ("demo", "run"):
            return _run(args, err)
        if args.command == "watch":
            from proctor.app.tui import run_console

            _check_db(args.db)
            return run_console(args.db, engine=lambda: serve_run(args.db))
        if args.command == "servers":
            from proctor.app.servers_check import check_servers

            ok = asyncio.run(check_servers(args.config, Console(highlight=False)))
            return EXIT_OK if ok else EXIT_FAILED
    except (
        SuiteError,
        RunError,
        AnchorError,
        ProviderConfigError,
        SchemaError,
        RepoError,
        FileNotFoundError,
    ) as exc:
        err.print(f"proctor: {exc}", markup=False)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        err.print("proctor: interrupted", markup=False)
        return EXIT_INTERRUPTED
    return EXIT_BAD_INPUT


def _check_db(db: Path) -> None:
    with StoreReader(db):
        pass


def _preflight(loaded: LoadedSuite, db: Path) -> None:
    """Refuse before anything starts: locked anchors that fail, or a run another process holds."""
    verify_before_run(loaded)
    lock = EngineLock.try_acquire(db) if db.exists() else None
    if db.exists() and lock is None:
        raise RunError(f"{db} is being run by another proctor process (pid {EngineLock.holder(db)})")
    if lock is not None:
        lock.release()


def _run(args: argparse.Namespace, err: Console) -> int:
    suite_dir = DEMO_SUITE_DIR if args.command == "demo" else args.suite
    loaded = load_suite(suite_dir)
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
    )
    _preflight(loaded, args.db)
    if not args.headless:
        from proctor.app.tui import run_console

        init_db(args.db)  # the console opens the database before the engine's first write
        return run_console(
            args.db, engine=lambda: run_suite(loaded, options, check_anchors=False, serve_after=True)
        )
    from proctor.app.headless import HeadlessProgress, summary_table

    out = Console(
        highlight=False, width=None if sys.stdout.isatty() else 160
    )  # pipes and CI logs: no squashed columns
    progress = HeadlessProgress(err)
    try:
        status = asyncio.run(
            run_suite(
                loaded, options, check_anchors=False, on_start=progress.start, on_progress=progress.advance
            )
        )
    except KeyboardInterrupt:
        progress.stop()
        err.print(f"proctor: interrupted; resume with --resume --db {args.db}", markup=False)
        return EXIT_INTERRUPTED
    progress.stop()
    out.print(summary_table(args.db))
    with StoreReader(args.db) as reader:
        errors = sum(t.status == "error" for t in reader.trials())
    if status != "finished":
        return EXIT_FAILED
    return EXIT_FAILED if errors else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
