"""``proctor judge``, ``proctor anchors lock|verify`` and ``proctor report --format md|json|csv``.

``register`` adds the subcommands to the main parser; ``dispatch`` runs one of them and returns
its exit code, or None when the command is not one of these. Exit codes follow app/cli.py:
0 done, 2 bad input, 3 a check failed (anchors verification, or judge errors while re-judging).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from proctor.engine.grading.anchor_files import AnchorError
from proctor.engine.grading.anchors import lock_anchors, verify_anchors
from proctor.engine.grading.rejudge import RejudgeError, rejudge_db
from proctor.engine.providers.registry import ProviderConfigError
from proctor.engine.reports.report import build_report
from proctor.engine.reports.report_csv import render_csv
from proctor.engine.reports.report_markdown import render_markdown
from proctor.engine.stats.anchors_gate import DEFAULT_THRESHOLD
from proctor.scenarios.loader import SuiteError
from proctor.scenarios.repo import RepoError
from proctor.store.commands import enqueue_command
from proctor.store.lock import EngineLock
from proctor.store.schema import SchemaError

EXIT_OK, EXIT_BAD_INPUT, EXIT_FAILED = 0, 2, 3
COMMANDS = ("judge", "anchors", "report")


def _ids(value: str) -> list[int]:
    try:
        return [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r}: give trial ids as numbers, e.g. 3,7,12") from None


def register(subparsers: Any) -> None:
    """Add ``judge``, ``anchors`` and ``report`` to ``parser.add_subparsers()``'s result."""
    judge = subparsers.add_parser(
        "judge", help="re-judge finished trials: add judge passes without re-running agents"
    )
    judge.add_argument("db", type=Path, help="the run database")
    judge.add_argument("--passes", type=int, default=1, help="passes to add per trial and judge (default 1)")
    judge.add_argument(
        "--judge", help="judge model (default: the suite's judge or panel), e.g. anthropic:NAME"
    )
    judge.add_argument(
        "--trials", type=_ids, help="comma-separated trial ids (default: every finished trial)"
    )

    anchors = subparsers.add_parser("anchors", help="lock or verify the held-out anchor scenarios")
    anchors_sub = anchors.add_subparsers(dest="anchors_command", required=True)
    lock = anchors_sub.add_parser(
        "lock", help="freeze held-out scenarios from a run, hashed into a lock file"
    )
    lock.add_argument("--suite", type=Path, required=True, help="the suite folder")
    lock.add_argument(
        "--db", type=Path, required=True, help="the run whose transcripts and scores become gold"
    )
    lock.add_argument("-o", "--output", type=Path, help="lock file (default SUITE/anchors/held-out.lock)")
    lock.add_argument(
        "--threshold", type=float, default=DEFAULT_THRESHOLD, help="Spearman ρ to require (0.85)"
    )
    verify = anchors_sub.add_parser(
        "verify", help="re-hash the locked files and re-judge them (Spearman gate)"
    )
    verify.add_argument("--suite", type=Path, required=True, help="the suite folder")
    verify.add_argument("--lock", type=Path, help="lock file (default: the suite's anchors_lock)")
    verify.add_argument("--threshold", type=float, help="Spearman ρ to require (default: the lock's)")

    report = subparsers.add_parser("report", help="print a run's report")
    report.add_argument("db", type=Path)
    report.add_argument("--format", choices=["md", "json", "csv"], default="json")
    report.add_argument("-o", "--output", type=Path, help="write to this file instead of standard output")


def _need_db(db: Path) -> None:
    if not db.is_file():
        raise FileNotFoundError(f"{db}: no such run database")


def _judge(args: argparse.Namespace) -> int:
    _need_db(args.db)
    lock = EngineLock.try_acquire(args.db)
    if lock is None:
        # A live engine owns the run: it does the re-judging, so the run keeps one writer.
        request: dict[str, Any] = {"passes": args.passes}
        if args.trials:
            request["trial_ids"] = args.trials
        if args.judge:
            request["judge"] = args.judge
        command_id = enqueue_command(args.db, "rejudge", request)
        print(
            f"the run is held by proctor process {EngineLock.holder(args.db)}; queued the re-judge as "
            f"command #{command_id}: its passes will appear in the run (watch it with 'proctor watch')"
        )
        return EXIT_OK
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
        added = ", ".join(f"{judge} passes {list(p)}" for judge, p in r.new_passes.items())
        quality = "–" if r.llm_quality is None else f"{r.llm_quality:.3f}"
        passed = {True: "passed", False: "failed", None: "no verdict"}[r.passed]
        note = f", {r.errors} judge error(s)" if r.errors else ""
        print(f"#{r.trial_id}: {added}; llm_quality {quality}; {passed}{note}")
        errors += r.errors
    done = sum(not r.skipped for r in results)
    print(f"re-judged {done} trial(s); {errors} judge error(s)")
    return EXIT_FAILED if errors else EXIT_OK


def _anchors(args: argparse.Namespace) -> int:
    if args.anchors_command == "lock":
        _need_db(args.db)
        result = lock_anchors(args.suite, args.db, lock_path=args.output, threshold=args.threshold)
        print(
            f"locked {len(result.anchors)} anchor transcript(s) of {', '.join(result.scenarios)} "
            f"({len(result.files)} files) into {result.lock_path}; suite.yaml anchors_lock points at it"
        )
        return EXIT_OK
    verified = asyncio.run(verify_anchors(args.suite, lock_path=args.lock, threshold=args.threshold))
    print(verified.message())
    return EXIT_OK if verified.passed else EXIT_FAILED


def _report(args: argparse.Namespace) -> int:
    _need_db(args.db)
    data = build_report(args.db)
    if args.format == "md":
        text = render_markdown(data)
    elif args.format == "csv":
        text = render_csv(data)
    else:
        text = json.dumps(data, indent=2, sort_keys=False) + "\n"
    if args.output is not None:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def dispatch(args: argparse.Namespace) -> int | None:
    """Run ``args.command`` if it is one of these; None otherwise."""
    handlers = {"judge": _judge, "anchors": _anchors, "report": _report}
    handler = handlers.get(args.command)
    if handler is None:
        return None
    try:
        return handler(args)
    except (
        RejudgeError,
        AnchorError,
        SuiteError,
        SchemaError,
        RepoError,
        ProviderConfigError,
        FileNotFoundError,
    ) as exc:
        print(f"proctor: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


__all__ = ["COMMANDS", "dispatch", "register"]
