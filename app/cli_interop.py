"""``proctor import``, ``proctor export`` and ``proctor gate``: proctor and the outside world.

``register`` adds the commands to the main parser; ``dispatch`` runs one of them and returns
its exit code (None when the command is not one of these). Exit codes: 0 ok, 2 bad input,
3 the gate failed. Data goes to stdout (an export without ``-o``, the gate's table); notes and
errors go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import math
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

from proctor.engine.reports.export import export_run, export_to_file
from proctor.engine.reports.gate import GateInputError, decide, format_table, load_fairness
from proctor.engine.runs.imported_runs import save_import
from proctor.scenarios.import_common import ImportedSuite
from proctor.scenarios.import_livemcpbench import read_livemcpbench
from proctor.scenarios.import_mcp_atlas import read_mcp_atlas
from proctor.scenarios.import_mcpagentbench import read_mcpagentbench
from proctor.scenarios.import_mcpservers import read_mcpservers
from proctor.scenarios.loader import SuiteError
from proctor.store.reader import StoreReader
from proctor.store.schema import SchemaError

EXIT_OK, EXIT_BAD_INPUT, EXIT_GATE_FAILED = 0, 2, 3
COMMANDS = ("import", "export", "gate")

_SubParsers = Any  # argparse's _SubParsersAction is private; its add_parser is all we use


def _finite(value: str) -> float:
    x = float(value)
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"{value!r} is not a finite number")
    return x


def _output(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-o", "--out", type=Path, required=True, help="folder to write the suite to (must not exist)"
    )
    p.add_argument("--force", action="store_true", help="replace -o DIR if it holds an earlier import")


def register(subparsers: _SubParsers) -> None:
    """Add ``import``, ``export`` and ``gate`` to ``subparsers`` (the main parser's)."""
    imp = subparsers.add_parser(
        "import", help="import a public MCP benchmark or an mcpServers config as a suite"
    )
    formats = imp.add_subparsers(dest="import_format", required=True, metavar="FORMAT")
    atlas = formats.add_parser("mcp-atlas", help="MCP-Atlas tasks (CSV, JSON, JSONL or Parquet)")
    atlas.add_argument("path", type=Path, help="the dataset file")
    atlas.add_argument("--servers", type=Path, help="an mcpServers config for an 'mcp' arm")
    _output(atlas)
    live = formats.add_parser("livemcpbench", help="LiveMCPBench tasks, tools.json and labelled trajectories")
    live.add_argument("path", type=Path, help="the tasks JSON, or a folder of LiveMCPBench JSON files")
    live.add_argument("--tools", type=Path, help="the tools.json server catalogue")
    live.add_argument(
        "--trajectories", type=Path, action="append", default=[], help="a trajectory file (repeatable)"
    )
    live.add_argument("--model", help="model name of the trajectories (default: each file's name)")
    live.add_argument(
        "--top-k", type=int, default=8, help="tools the retrieval arm offers per query (default 8)"
    )
    _output(live)
    agent = formats.add_parser(
        "mcpagentbench", help="MCPAgentBench-style tasks with step-structured gold calls"
    )
    agent.add_argument("path", type=Path, help="a .json/.jsonl task file or a folder of them")
    agent.add_argument(
        "--servers", type=Path, help="an mcpServers config serving the tools, for an 'mcp' arm"
    )
    _output(agent)
    servers = formats.add_parser(
        "mcpservers", help="a suite skeleton from Claude Desktop, Cursor or VS Code servers"
    )
    servers.add_argument(
        "path", type=Path, help="claude_desktop_config.json, .cursor/mcp.json, .vscode/mcp.json, ..."
    )
    _output(servers)

    export = subparsers.add_parser("export", help="export a run's events and scores (JSONL or CSV)")
    export.add_argument("db", type=Path)
    export.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
    export.add_argument("-o", "--out", type=Path, help="write to FILE instead of stdout")

    gate = subparsers.add_parser(
        "gate", help="CI gate: fail (exit 3) unless MCP arms beat the baseline's fairness"
    )
    gate.add_argument("db", type=Path)
    gate.add_argument("--baseline", required=True, help="the baseline arm")
    gate.add_argument(
        "--min-delta", type=_finite, required=True, help="required mean fairness gain (e.g. 0.05)"
    )
    gate.add_argument(
        "--arm", action="append", default=[], help="an MCP arm to check (repeatable; default: all)"
    )
    gate.add_argument("--model", action="append", default=[], help="only trials of this model (repeatable)")
    gate.add_argument(
        "--require-anchors",
        type=Path,
        metavar="LOCKFILE",
        help="also verify the suite's anchors against LOCKFILE (hashes and Spearman gate); fail if they do not hold",
    )
    gate.add_argument(
        "--suite", type=Path, help="the suite folder for --require-anchors (default: the run's)"
    )


def _read(args: argparse.Namespace) -> ImportedSuite:
    fmt = args.import_format
    if fmt == "mcp-atlas":
        return read_mcp_atlas(args.path, servers_file=args.servers)
    if fmt == "livemcpbench":
        if args.top_k < 1:
            raise SuiteError("--top-k must be at least 1")
        return read_livemcpbench(
            args.path, tools=args.tools, trajectories=args.trajectories, model=args.model, top_k=args.top_k
        )
    if fmt == "mcpagentbench":
        return read_mcpagentbench(args.path, servers_file=args.servers)
    return read_mcpservers(args.path)


def _import(args: argparse.Namespace) -> int:
    for p in [
        args.path,
        getattr(args, "servers", None),
        getattr(args, "tools", None),
        *getattr(args, "trajectories", []),
    ]:
        if p is not None and not p.exists():
            raise SuiteError(f"{p}: no such file or folder")
    imported = _read(args)
    saved = save_import(imported, args.out, force=args.force)
    for note in imported.notes:
        print(f"note: {note}", file=sys.stderr)
    print(f"wrote {saved.out_dir}: {saved.scenarios} scenarios, arms {', '.join(saved.arms)}")
    if saved.db is not None:
        print(f"wrote {saved.db}: {saved.trials} imported trials, {saved.judgments} judgments")
    return EXIT_OK


def _export(args: argparse.Namespace) -> int:
    if args.out is None:
        try:
            export_run(args.db, args.format, sys.stdout)
            sys.stdout.flush()
        except BrokenPipeError:  # the reader (``| head``) has all it wants
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - replaces stdout until exit
        return EXIT_OK
    n = export_to_file(args.db, args.format, args.out)
    print(f"wrote {args.out}: {n} rows", file=sys.stderr)
    return EXIT_OK


def _gate(args: argparse.Namespace) -> int:
    result = decide(
        load_fairness(args.db),
        baseline=args.baseline,
        min_delta=args.min_delta,
        arms=args.arm or None,
        models=args.model or None,
    )
    print(format_table(result))
    anchors_ok = True if args.require_anchors is None else _anchors_hold(args)
    return EXIT_OK if result.passed and anchors_ok else EXIT_GATE_FAILED


def _anchors_hold(args: argparse.Namespace) -> bool:
    """Verify the anchors lock (``proctor.engine.grading.anchors``); print the outcome; True when it holds."""
    try:
        anchors: Any = importlib.import_module("proctor.engine.grading.anchors")
    except ImportError:
        raise SuiteError(
            "--require-anchors: this proctor has no anchors support (proctor.engine.grading.anchors)"
        ) from None
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


def dispatch(args: argparse.Namespace) -> int | None:
    """Run ``args.command`` if it is one of ours and return its exit code; otherwise None."""
    command = getattr(args, "command", None)
    if command not in COMMANDS:
        return None
    try:
        if command == "import":
            return _import(args)
        if command == "export":
            return _export(args)
        return _gate(args)
    except (SuiteError, GateInputError, SchemaError, FileNotFoundError, sqlite3.DatabaseError) as exc:
        print(f"proctor {command}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


__all__ = ["COMMANDS", "EXIT_BAD_INPUT", "EXIT_GATE_FAILED", "EXIT_OK", "dispatch", "register"]
