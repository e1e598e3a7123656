"""``proctor import FORMAT PATH -o DIR``: a public benchmark, an mcpServers file or agent traces become a suite."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from proctor.app.exit_codes import ExitCode
from proctor.engine.runs.imported_runs import save_import
from proctor.engine.tools.surface_lock import ToolLockError, lock_path, read_lock
from proctor.scenarios.importers.common import ImportedSuite, ImportedTool
from proctor.scenarios.importers.livemcpbench import read_livemcpbench
from proctor.scenarios.importers.mcp_atlas import read_mcp_atlas
from proctor.scenarios.importers.mcpagentbench import read_mcpagentbench
from proctor.scenarios.importers.mcpservers import read_mcpservers
from proctor.scenarios.importers.otel import read_otel
from proctor.scenarios.loader import SuiteError
from proctor.store.display_text import sanitize
from proctor.store.redaction import redact


def _locked_tools(suite: Path | None) -> dict[str, list[ImportedTool]] | None:
    """The tools each server of ``suite`` lists, from its tools lock (``proctor tools lock``):
    ``import otel`` takes a call of one of them for an MCP call. None without a lock."""
    if suite is None or not (path := lock_path(suite)).is_file():
        return None
    try:
        surface = read_lock(path)
    except ToolLockError as exc:
        raise SuiteError(str(exc)) from exc  # it names the file, the field and the fix
    return {
        server: [
            ImportedTool(
                d.name, server, d.description, d.input_schema, builtin=False, annotations=d.annotations
            )
            for d in tools.values()
        ]
        for server, tools in surface.items()
    }


def _read(args: argparse.Namespace) -> ImportedSuite:
    fmt = args.import_format
    if fmt == "mcp-atlas":
        return read_mcp_atlas(args.path, servers_file=args.servers)
    if fmt == "livemcpbench":
        if args.top_k < 1:
            raise SuiteError("--top-k must be at least 1")
        return read_livemcpbench(
            args.path,
            tools=args.tools,
            trajectories=args.trajectories,
            verdicts=args.verdicts,
            model=args.model,
            top_k=args.top_k,
        )
    if fmt == "mcpagentbench":
        return read_mcpagentbench(
            args.path, results=args.results, servers_file=args.servers, python=args.python, model=args.model
        )
    if fmt == "otel":
        return read_otel(
            args.path, scrub=redact, suite=args.suite, logs=args.logs, server_tools=_locked_tools(args.suite)
        )
    if fmt == "inspect":
        from proctor.scenarios.importers.inspect import read_inspect

        return read_inspect([args.path, *args.more_logs], scrub=redact, suite=args.suite)
    return read_mcpservers(args.path)


def import_command(args: argparse.Namespace) -> int:
    for p in [
        args.path,
        getattr(args, "servers", None),
        getattr(args, "suite", None),
        getattr(args, "logs", None),
        getattr(args, "tools", None),
        *getattr(args, "trajectories", []),
        *getattr(args, "verdicts", []),
        *getattr(args, "results", []),
        *getattr(args, "more_logs", []),
    ]:
        if p is not None and not p.exists():
            raise SuiteError(f"{p}: no such file or folder")
    imported = _read(args)
    saved = save_import(imported, args.out, force=args.force)
    for note in imported.notes:  # notes and arm names quote the imported files
        print(f"note: {sanitize(note)}", file=sys.stderr)
    print(f"wrote {saved.out_dir}: {saved.scenarios} scenarios, arms {sanitize(', '.join(saved.arms))}")
    if saved.db is not None:
        print(f"wrote {saved.db}: {saved.trials} imported trials, {saved.judgments} judgments")
        if args.import_format in ("otel", "inspect"):
            print(f"score them (deterministic checks and the suite's judges): proctor judge {saved.db}")
    return ExitCode.OK
