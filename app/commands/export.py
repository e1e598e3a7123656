"""``proctor export DB``: every event and score of a run in one documented schema (JSONL or CSV),
or its OpenTelemetry traces (to a file, stdout, or pushed to a collector with ``--endpoint``)."""

from __future__ import annotations

import argparse
import os
import sys

from proctor.app.exit_codes import ExitCode
from proctor.engine.reports.export import export_run, export_to_file


def export_command(args: argparse.Namespace) -> int:
    if args.endpoint is not None or args.header:
        return _push(args)
    if args.format == "inspect":
        return _export_inspect(args)
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


def _push(args: argparse.Namespace) -> int:
    """``--endpoint``: the traces pushed over OTLP/HTTP; with ``-o`` also written to the file first."""
    from proctor.engine.reports.otel_push import PushError, parse_headers, push_traces, traces_url

    try:
        if args.format != "otel" or args.endpoint is None:
            raise PushError("--endpoint and --header go with --format otel: add --format otel --endpoint URL")
        headers = parse_headers(args.header)
        traces_url(args.endpoint)  # a malformed URL fails before the database is read
        if args.timeout <= 0:
            raise PushError(f"--timeout {args.timeout}: give a number of seconds above 0")
        if args.out is not None:
            n = export_to_file(args.db, "otel", args.out)
            print(f"wrote {args.out}: {n} traces", file=sys.stderr)
        from proctor.engine.reports.otel_export import trace_requests
        from proctor.store.read.reader import StoreReader

        with StoreReader(args.db) as reader:
            result = push_traces(trace_requests(reader), args.endpoint, headers, timeout_s=args.timeout)
    except PushError as exc:
        print(f"proctor export: {exc}", file=sys.stderr)
        return ExitCode.BAD_INPUT
    print(
        f"pushed {result.traces} traces ({result.spans} spans) to {result.url} "
        f"in {result.requests} request(s)",
        file=sys.stderr,
    )
    return ExitCode.OK


def _export_inspect(args: argparse.Namespace) -> int:
    """An Inspect log is a zip: it goes to a file (``-o RUN.eval``), never to a terminal."""
    from proctor.engine.reports.inspect_export import export_inspect
    from proctor.scenarios.loader import SuiteError

    if args.out is None or args.out.suffix != ".eval":
        raise SuiteError("--format inspect writes a .eval zip: give the file with -o RUN.eval")
    n = export_inspect(args.db, args.out)
    print(
        f"wrote {args.out}: {n} samples (open it with: inspect view --log-dir {args.out.parent})",
        file=sys.stderr,
    )
    return ExitCode.OK
