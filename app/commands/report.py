"""``proctor report DB``: the run report as JSON, Markdown, CSV or JUnit XML."""

from __future__ import annotations

import argparse
import sys

from proctor.app.commands._checks import need_db
from proctor.app.exit_codes import ExitCode
from proctor.engine.reports.collector import collector_paused
from proctor.engine.reports.report import build_report, report_json
from proctor.engine.reports.run_progress import progress_lines
from proctor.store.display_text import sanitize


def report_command(args: argparse.Namespace) -> int:
    need_db(args.db)
    with collector_paused():  # until the report is written too (engine/reports/collector.py)
        return _report(args)


def _report(args: argparse.Namespace) -> int:
    data = build_report(args.db)
    if data["progress"]["in_progress"]:  # the report says it too; this reaches a CI log at once
        status = data["run"]["status"] if data["run"] is not None else None
        for line in progress_lines(data["progress"], status, args.db):
            print(f"proctor report: {sanitize(line)}", file=sys.stderr)
    if args.format == "json":
        encoded = report_json(data)
        if args.output is not None:
            args.output.write_bytes(encoded)
        elif hasattr(sys.stdout, "buffer"):
            sys.stdout.flush()
            sys.stdout.buffer.write(encoded)
            sys.stdout.buffer.flush()
        else:  # a text-only stream (tests, embedding)
            sys.stdout.write(encoded.decode())
        return ExitCode.OK
    if args.format == "md":
        from proctor.engine.reports.report_markdown import render_markdown

        text = render_markdown(data)
    elif args.format == "html":
        from proctor.engine.reports.html_charts import ChartsUnavailable
        from proctor.engine.reports.report_html import failed_trial_events, render_html

        try:
            text = render_html(data, failed_trial_events(args.db, data))
        except ChartsUnavailable as exc:
            print(f"proctor report: {exc}", file=sys.stderr)
            return ExitCode.BAD_INPUT
    elif args.format == "csv":
        from proctor.engine.reports.report_csv import render_csv

        text = render_csv(data)
    else:
        from proctor.engine.reports.junit import report_junit

        text = report_junit(data)
    if args.output is not None:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return ExitCode.OK
