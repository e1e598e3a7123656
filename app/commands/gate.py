"""``proctor gate DB``: the CI gate, non-zero unless the MCP arms beat the baseline by the margin."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proctor.app.exit_codes import ExitCode
from proctor.engine.reports.drift_gate import DriftGateResult, decide_drift, format_drift
from proctor.engine.reports.gate import (
    FairnessGateResult,
    GateInputError,
    decide,
    error_causes,
    errored_trials,
    format_table,
    load_fairness,
    unjudged_trials,
)
from proctor.engine.reports.junit import gate_markdown, report_junit
from proctor.engine.reports.run_progress import progress_lines, read_progress
from proctor.scenarios.loader import SuiteError
from proctor.store.display_text import sanitize
from proctor.store.read.reader import StoreReader

if TYPE_CHECKING:
    from proctor.engine.reports.tool_surface import LockCheck


def gate_command(args: argparse.Namespace) -> int:
    fairness_gate = args.baseline is not None or args.min_delta is not None
    if fairness_gate and (args.baseline is None or args.min_delta is None):
        raise GateInputError(
            "give both --baseline ARM and --min-delta X (e.g. --baseline baseline --min-delta 0.05)"
        )
    if not fairness_gate and args.max_changed is None and args.tools_lock is None:
        raise GateInputError(
            "give --baseline ARM and --min-delta X (arms against the baseline), "
            "or --max-changed N (a replay run's drift), or --tools-lock LOCKFILE"
        )
    _refuse_in_progress(args)
    result = None
    if fairness_gate:
        result = decide(
            load_fairness(args.db),
            baseline=args.baseline,
            min_delta=args.min_delta,
            arms=args.arm or None,
            models=args.model or None,
            errored=errored_trials(args.db, args.model or None),
            causes=error_causes(args.db, args.model or None),
            unjudged=unjudged_trials(args.db, args.model or None),
        )
        print(format_table(result))
    drift = None
    if args.max_changed is not None:
        drift = decide_drift(args.db, args.max_changed)
        print(format_drift(drift))
    lock = _tool_lock(args)
    _write_ci_files(args, result, drift, lock)
    anchors_ok = True if args.require_anchors is None else _anchors_hold(args)
    passed = (result is None or result.passed) and (drift is None or drift.passed)
    tools_ok = _tool_lock_holds(lock)
    if passed and not tools_ok:
        print("gate: FAILED (the tool lock does not hold)")
    return ExitCode.OK if passed and anchors_ok and tools_ok else ExitCode.FAILED


def _refuse_in_progress(args: argparse.Namespace) -> None:
    """A run still being written is refused unless ``--partial``; a run where not everything ran
    (or with arms left out) is said to be so before the verdict."""
    progress, status = read_progress(args.db)
    if progress["in_progress"] and not args.partial:
        raise GateInputError(
            f"{args.db}: the run is still in progress ({progress['done']} of {progress['trials']} trials "
            "done); gate it once it has finished, or pass --partial to gate the trials done so far"
        )
    for line in progress_lines(progress, status, args.db):
        print(f"gate: {sanitize(line)}")


def _tool_lock(args: argparse.Namespace) -> LockCheck | None:
    """The run's tool definitions against the suite's tool lock (or ``--tools-lock``); None when
    there is no lock."""
    from proctor.engine.reports.tool_surface import gate_tool_lock

    return gate_tool_lock(args.db, args.tools_lock)


def _tool_lock_holds(check: LockCheck | None) -> bool:
    """Print the lock check; silent when there is no lock, so a gate without one prints what it
    always printed."""
    if check is None:
        return True
    if check.holds:
        print(f"tool lock: holds ({sanitize(check.path)})")
        return True
    print(f"tool lock: FAILED, the run's tools differ from {sanitize(check.path)}:")
    for line in check.summary_lines():
        print(f"  {line}")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        from proctor.engine.reports.md_format import cell

        with open(summary, "a", encoding="utf-8") as f:
            f.write(f"**Tool lock failed**: the run's tools differ from `{cell(check.path)}`\n\n")
            f.writelines(f"- {cell(line)}\n" for line in check.summary_lines())
    return False


def _write_ci_files(
    args: argparse.Namespace,
    result: FairnessGateResult | None,
    drift: DriftGateResult | None,
    lock: LockCheck | None,
) -> None:
    """JUnit XML when asked; a Markdown summary when GitHub Actions offers a step summary file."""
    if args.junit is not None:
        from proctor.engine.reports.report import build_report

        text = report_junit(build_report(args.db), result, drift, lock)
        args.junit.write_text(text, encoding="utf-8")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as f:
            if result is not None:
                f.write(gate_markdown(result) + "\n")
            if drift is not None:
                f.write(
                    f"### proctor gate: drift {'passed' if drift.passed else 'failed'}\n\n{drift.reason}\n"
                )


def _anchors_hold(args: argparse.Namespace) -> bool:
    """Verify the anchors lock (``proctor.engine.grading.anchors``); print the outcome; True when it holds."""
    anchors: Any = importlib.import_module(
        "proctor.engine.grading.anchors"
    )  # looked up late: tests replace it
    if not args.require_anchors.is_file():
        raise SuiteError(f"{args.require_anchors}: no such anchors lock file")
    suite_dir = args.suite
    if suite_dir is None:
        with StoreReader(args.db) as reader:
            run = reader.run()
        suite_dir = Path(run.config["suite_dir"]) if run and run.config.get("suite_dir") else None
    if suite_dir is None:
        raise SuiteError(f"{args.db}: the run does not record its suite folder; pass --suite DIR")
    try:
        verdict = asyncio.run(anchors.verify_anchors(suite_dir, lock_path=args.require_anchors))
    except anchors.AnchorError as exc:
        raise SuiteError(f"--require-anchors: {exc}") from exc
    print(verdict.message())
    return bool(verdict.passed)
