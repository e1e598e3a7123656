"""``proctor anchors lock|verify``: freeze held-out scenarios by hash, and check them."""

from __future__ import annotations

import argparse
import asyncio

from proctor.app.commands._checks import need_db
from proctor.app.exit_codes import ExitCode
from proctor.engine.grading.anchors import lock_anchors, verify_anchors
from proctor.engine.stats.anchors_gate import DEFAULT_THRESHOLD


def anchors_lock_command(args: argparse.Namespace) -> int:
    need_db(args.db)
    threshold = DEFAULT_THRESHOLD if args.threshold is None else args.threshold
    result = lock_anchors(args.suite, args.db, lock_path=args.output, threshold=threshold)
    suite = (
        f"suite.yaml got the line {result.suite_line}"
        if result.suite_line
        else "suite.yaml is unchanged (the suite finds the lock where it is)"
    )
    print(
        f"locked {len(result.anchors)} anchor transcript(s) of {', '.join(result.scenarios)} "
        f"({len(result.files)} files) into {result.lock_path}; {suite}"
    )
    return ExitCode.OK


def anchors_verify_command(args: argparse.Namespace) -> int:
    verified = asyncio.run(verify_anchors(args.suite, lock_path=args.lock, threshold=args.threshold))
    print(verified.message())
    return ExitCode.OK if verified.passed else ExitCode.FAILED
