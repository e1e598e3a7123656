"""``proctor report DB``: the run report as JSON, Markdown, CSV or JUnit XML."""

from __future__ import annotations

import argparse
import json
import sys

from proctor.app.commands._checks import need_db
from proctor.app.exit_codes import ExitCode
from proctor.engine.reports.junit import report_junit
from proctor.engine.reports.report import build_report
from proctor.engine.reports.report_csv import render_csv
from proctor.engine.reports.report_markdown import render_markdown


def report_command(args: argparse.Namespace) -> int:
    need_db(args.db)
    data = build_report(args.db)
    if args.format == "md":
        text = render_markdown(data)
    elif args.format == "csv":
        text = render_csv(data)
    elif args.format == "junit":
        text = report_junit(data)
    else:
        text = json.dumps(data, indent=2, sort_keys=False) + "\n"
    if args.output is not None:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return ExitCode.OK
