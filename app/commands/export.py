"""``proctor export DB``: every event and score of a run in one documented schema (JSONL or CSV)."""

from __future__ import annotations

import argparse
import os
import sys

from proctor.app.exit_codes import ExitCode
from proctor.engine.reports.export import export_run, export_to_file


def export_command(args: argparse.Namespace) -> int:
    if args.out is None:
        try:
            export_run(args.db, args.format, sys.stdout)
            sys.stdout.flush()
        except BrokenPipeError:  # the reader (``| head``) has all it wants
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - replaces stdout until exit
        return ExitCode.OK
    n = export_to_file(args.db, args.format, args.out)
    print(f"wrote {args.out}: {n} {'traces' if args.format == 'otel' else 'rows'}", file=sys.stderr)
    return ExitCode.OK
