"""The ``proctor`` command line: the parser, the command table and the one error path.

This module imports only the standard library, so ``proctor --help`` and a mistyped flag answer
at once; each command's module (``proctor.app.commands.*``) is imported when that command runs.
Exit codes are ``proctor.app.exit_codes.ExitCode``.
"""

from __future__ import annotations

import argparse
import importlib
import math
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from proctor.app.exit_codes import ExitCode

DEMO_DB = Path("runs/demo.db")
RUN_DB_HELP = "the run database (default: runs/SUITE_NAME.db, SUITE_NAME from suite.yaml's name)"

# Errors that mean "the input is wrong", by module, so that this module need not import them:
# an exception can only be one of these if its module has been imported.
BAD_INPUT_ERRORS: tuple[tuple[str, str], ...] = (
    ("proctor.scenarios.loader", "SuiteError"),
    ("proctor.scenarios.repo", "RepoError"),
    ("proctor.store.schema", "SchemaError"),
    ("proctor.store.file_watch", "StoreFailed"),
    ("proctor.store.scores", "UnreadableScore"),
    ("proctor.engine.runs.options", "RunError"),
    ("proctor.engine.grading.anchor_files", "AnchorError"),
    ("proctor.engine.grading.rejudge", "RejudgeError"),
    ("proctor.engine.providers.registry", "ProviderConfigError"),
    ("proctor.engine.reports.gate", "GateInputError"),
    ("proctor.app.commands.servers", "CallInputError"),
    ("proctor.engine.replay.replayer", "ReplayError"),
    ("proctor.engine.drift.runs_diff", "DriftError"),
    ("proctor.app.commands.tools", "SurfaceInputError"),
    ("proctor.engine.tools.surface_lock", "ToolLockError"),
)

_SubParsers = Any  # argparse's _SubParsersAction is private; add_parser is all we use


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number; give 1 or more") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} is too small; give 1 or more")
    return n


def _ids(value: str) -> list[int]:
    try:
        return [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r}: give trial ids as numbers, e.g. 3,7,12") from None


def _finite(value: str) -> float:
    x = float(value)
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"{value!r} is not a finite number")
    return x


def _command(p: argparse.ArgumentParser, handler: str) -> None:
    """``handler`` is ``module:function`` under ``proctor.app.commands``, imported when it runs."""
    p.set_defaults(handler=handler)


def _add_run_flags(p: argparse.ArgumentParser, *, db_default: Path | None) -> None:
    p.add_argument("--models", type=_csv, help="comma-separated provider:model ids (default: the suite's)")
    p.add_argument("--arms", type=_csv, help="comma-separated arm names (default: all)")
    p.add_argument("--scenarios", type=_csv, help="comma-separated scenario ids (default: all)")
    p.add_argument("--epochs", type=_positive, help="repetitions of every trial, each with its own seed")
    p.add_argument("--concurrency", type=_positive, help="trials running at once (default: the suite's)")
    p.add_argument(
        "--seed", type=int, default=None, help="base seed from which each epoch's seed is derived (default 0)"
    )
    p.add_argument(
        "--db",
        type=Path,
        default=db_default,
        help=f"the run database (default: {db_default})" if db_default else RUN_DB_HELP,
    )
    p.add_argument(
        "--resume", action="store_true", help="continue the run in --db: unfinished trials run again"
    )
    p.add_argument("--headless", action="store_true", help="no console: a progress bar and a summary table")
    p.add_argument(
        "--keep-going",
        action="store_true",
        help="when a server's command, a key or an endpoint is missing, run the arms and models that can "
        "run (and say which were left out) instead of refusing the run",
    )
    p.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="where trials play: this process (default) or Ray workers (pip install 'proctor[ray]')",
    )
    p.add_argument(
        "--address",
        help="with --executor ray: the cluster (auto, HOST:PORT or ray://HOST:10001; default: a private local Ray)",
    )


def _add_runs(sub: _SubParsers) -> None:
    demo = sub.add_parser("demo", help="run the bundled demo suite offline (resumes runs/demo.db if present)")
    _add_run_flags(demo, db_default=DEMO_DB)
    _command(demo, "runs:run_command")
    run = sub.add_parser("run", help="run a suite")
    run.add_argument(
        "suite",
        type=Path,
        nargs="?",
        help="a suite folder (suite.yaml + scenarios/); with --resume --db DB, the run's own by default",
    )
    _add_run_flags(run, db_default=None)
    _command(run, "runs:run_command")
    watch = sub.add_parser("watch", help="open the console on a run database (live or finished)")
    watch.add_argument("db", type=Path)
    _command(watch, "watch:watch_command")
    # Internal: the engine the console starts in a process of its own (see commands/engine_process.py).
    # No help= at all: argparse would print "==SUPPRESS==" in the command list.
    child = sub.add_parser("engine-process")
    child.add_argument("suite", type=Path)
    child.add_argument("--options", required=True)
    _command(child, "engine_process:engine_process_command")
    servers = sub.add_parser("servers", help="MCP server utilities")
    servers_sub = servers.add_subparsers(dest="servers_command", required=True)
    check = servers_sub.add_parser("check", help="start each server, list its tools")
    check.add_argument("config", type=Path, help="a suite folder or an mcpServers JSON/YAML file")
    _command(check, "servers:check_command")
    call = servers_sub.add_parser("call", help="start one server, call one tool, print what proctor records")
    call.add_argument("config", type=Path, help="a suite folder or an mcpServers file")
    call.add_argument("server")
    call.add_argument("tool")
    call.add_argument(
        "--args", default="{}", help='the arguments as a JSON object, e.g. \'{"path": "README.md"}\''
    )
    call.add_argument("--json", action="store_true", help="print the recorded result as JSON")
    _command(call, "servers:call_command")
    replay = sub.add_parser(
        "replay",
        help="make a recorded run's tool calls again (no model) into a new run, and diff the results",
    )
    replay.add_argument("source", type=Path, metavar="DB", help="the recorded run database")
    replay.add_argument(
        "--db", type=Path, required=True, metavar="NEW", help="the new run database to write (a new file)"
    )
    replay.add_argument(
        "--suite", type=Path, help="the suite whose servers answer now (default: the one the run recorded)"
    )
    replay.add_argument("--arms", type=_csv, help="comma-separated arms to replay (default: all)")
    replay.add_argument(
        "--concurrency", type=_positive, help="trials replayed at once (default: the suite's)"
    )
    _command(replay, "replay:replay_command")
    _add_tools(sub)


def _add_tools(sub: _SubParsers) -> None:
    tools = sub.add_parser("tools", help="tool surfaces: diff two of them, lock a suite's by SHA-256")
    tools_sub = tools.add_subparsers(dest="tools_command", required=True)
    diff = tools_sub.add_parser(
        "diff",
        help="tools added, removed, renamed; schema changes (breaking or not); descriptions word by word "
        "(exit 0 same, 1 different)",
    )
    for side in ("old", "new"):
        diff.add_argument(
            side,
            type=Path,
            help="a run database, a suite folder (its servers listed now) or a tools.lock.json",
        )
    diff.add_argument("--format", choices=("text", "json"), default="text")
    _command(diff, "tools:diff_command")
    lock = tools_sub.add_parser(
        "lock", help="write SUITE/tools.lock.json: the SHA-256 of each server's tool definitions"
    )
    lock.add_argument("suite", type=Path, help="a suite folder")
    lock.add_argument(
        "--check",
        action="store_true",
        help="verify the servers against the lock without writing (exit 3 if they differ)",
    )
    _command(lock, "tools:lock_command")


def _add_judging(sub: _SubParsers) -> None:
    judge = sub.add_parser(
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
    _command(judge, "judge:judge_command")

    anchors = sub.add_parser("anchors", help="lock or verify the held-out anchor scenarios")
    anchors_sub = anchors.add_subparsers(dest="anchors_command", required=True)
    lock = anchors_sub.add_parser(
        "lock", help="freeze held-out scenarios from a run, hashed into a lock file"
    )
    lock.add_argument("--suite", type=Path, required=True, help="the suite folder")
    lock.add_argument(
        "--db", type=Path, required=True, help="the run whose transcripts and scores become gold"
    )
    lock.add_argument("-o", "--output", type=Path, help="lock file (default SUITE/anchors/held-out.lock)")
    lock.add_argument("--threshold", type=float, help="Spearman ρ to require (default: the gate's, 0.85)")
    _command(lock, "anchors:anchors_lock_command")
    verify = anchors_sub.add_parser(
        "verify", help="re-hash the locked files and re-judge them (Spearman gate)"
    )
    verify.add_argument("--suite", type=Path, required=True, help="the suite folder")
    verify.add_argument("--lock", type=Path, help="lock file (default: the suite's anchors_lock)")
    verify.add_argument("--threshold", type=float, help="Spearman ρ to require (default: the lock's)")
    _command(verify, "anchors:anchors_verify_command")

    report = sub.add_parser("report", help="print a run's report")
    report.add_argument("db", type=Path)
    report.add_argument(
        "--format",
        choices=["md", "json", "csv", "junit", "html"],
        default="json",
        help="json (default), md (for a pull request), csv, junit (XML for CI test reporters), "
        "or html (one self-contained page with charts; needs pip install 'proctor[html]')",
    )
    report.add_argument("-o", "--output", type=Path, help="write to this file instead of standard output")
    _command(report, "report:report_command")


def _output(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-o", "--out", type=Path, required=True, help="folder to write the suite to (must not exist)"
    )
    p.add_argument("--force", action="store_true", help="replace -o DIR if it holds an earlier import")


def _add_init(sub: _SubParsers) -> None:
    init = sub.add_parser(
        "init",
        help="draft a suite from a server's tools: one scenario per tool, gold calls from its schemas",
    )
    init.add_argument("out", type=Path, help="folder to write the suite to (must not exist)")
    init.add_argument("--name", default="server", help="the server's name in the suite (default: server)")
    init.add_argument("--url", help="a running streamable-HTTP MCP server instead of a command")
    init.add_argument("--force", action="store_true", help="replace OUT if it holds an earlier draft")
    init.add_argument(
        "--model",
        help="a real model (anthropic:NAME or openai:NAME) drafts each prompt, its arguments and claims "
        "(for review); without it the drafts come from the schemas alone, offline",
    )
    init.add_argument(
        "--server",
        nargs=argparse.REMAINDER,
        default=[],
        metavar="CMD ARGS",
        help="the stdio server's command and arguments (everything after --server)",
    )
    _command(init, "init:init_command")


def _add_interop(sub: _SubParsers) -> None:
    imp = sub.add_parser(
        "import",
        help="import a public MCP benchmark, an mcpServers config or OpenTelemetry traces as a suite",
    )
    formats = imp.add_subparsers(dest="import_format", required=True, metavar="FORMAT")
    atlas = formats.add_parser("mcp-atlas", help="MCP-Atlas tasks (CSV, JSON, JSONL or Parquet)")
    atlas.add_argument("path", type=Path, help="the dataset file")
    atlas.add_argument("--servers", type=Path, help="an mcpServers config for an 'mcp' arm")
    _output(atlas)
    live = formats.add_parser("livemcpbench", help="LiveMCPBench tasks, tools.json and labelled trajectories")
    live.add_argument(
        "path", type=Path, help="the LiveMCPBench repository checkout, or one of its JSON files"
    )
    live.add_argument("--tools", type=Path, help="the tools.json server catalogue")
    live.add_argument(
        "--trajectories", type=Path, action="append", default=[], help="a trajectory file (repeatable)"
    )
    live.add_argument(
        "--verdicts",
        type=Path,
        action="append",
        default=[],
        help="a judge's verdict file, evaluator/output/JUDGE/RUN.json (repeatable)",
    )
    live.add_argument("--model", help="model name of the trajectories (default: each run file's name)")
    live.add_argument(
        "--top-k", type=int, default=8, help="tools the retrieval arm offers per query (default 8)"
    )
    _output(live)
    agent = formats.add_parser(
        "mcpagentbench", help="MCPAgentBench tasks (its checkout or a task file) and published results"
    )
    agent.add_argument(
        "path", type=Path, help="the MCPAgentBench repository checkout, or a task file like data/tasks.json"
    )
    agent.add_argument(
        "--results",
        type=Path,
        action="append",
        default=[],
        help="a published results file (results/*/MODEL_general_test_runN_results.json), repeatable",
    )
    agent.add_argument(
        "--python",
        metavar="INTERPRETER",
        help="serve the checkout's servers/*.py with this Python (it needs upstream's mcp 1.x requirements)",
    )
    agent.add_argument(
        "--servers", type=Path, help="an mcpServers config serving the tools, for an 'mcp' arm"
    )
    agent.add_argument("--model", help="model name of the results (default: from each file's name)")
    _output(agent)
    servers = formats.add_parser(
        "mcpservers", help="a suite skeleton from Claude Desktop, Cursor or VS Code servers"
    )
    servers.add_argument(
        "path", type=Path, help="claude_desktop_config.json, .cursor/mcp.json, .vscode/mcp.json, ..."
    )
    _output(servers)
    otel = formats.add_parser(
        "otel", help="traces of an agent proctor did not run (OTLP/JSON, OpenTelemetry GenAI conventions)"
    )
    otel.add_argument(
        "path", type=Path, help="OTLP/JSON traces: one ExportTraceServiceRequest per line, or one document"
    )
    otel.add_argument(
        "--suite",
        type=Path,
        help="score the traces against this suite: its scenarios (matched by proctor.scenario or prompt) and checks",
    )
    otel.add_argument(
        "--logs",
        type=Path,
        help="OTLP/JSON log records of the same run (openai-v2 writes message content there)",
    )
    _output(otel)
    inspect = formats.add_parser("inspect", help="Inspect AI logs (.eval or .json): each sample a trial")
    inspect.add_argument("path", type=Path, help="an Inspect log (.eval or .json)")
    inspect.add_argument(
        "more_logs", type=Path, nargs="*", metavar="LOG", help="more logs (other models: other arms)"
    )
    inspect.add_argument(
        "--suite",
        type=Path,
        help="score the samples against this suite: its scenarios (matched by id or input)",
    )
    _output(inspect)
    _command(imp, "imports:import_command")

    export = sub.add_parser("export", help="export a run's events and scores (JSONL, CSV or OTLP traces)")
    export.add_argument("db", type=Path)
    export.add_argument(
        "--format",
        choices=["jsonl", "csv", "otel", "inspect"],
        default="jsonl",
        help="jsonl or csv (proctor-export/1), otel: OTLP/JSON traces, one trial per line, or inspect: "
        "an Inspect AI .eval log (needs -o FILE.eval)",
    )
    export.add_argument("-o", "--out", type=Path, help="write to FILE instead of stdout")
    export.add_argument(
        "--endpoint",
        metavar="URL",
        help="with --format otel: push the traces over OTLP/HTTP (protobuf) to this collector, "
        "e.g. http://127.0.0.1:6006/v1/traces (needs pip install 'proctor[otel]')",
    )
    export.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="with --endpoint: an HTTP header for the collector (repeatable), e.g. 'authorization=Bearer TOKEN'",
    )
    export.add_argument(
        "--timeout",
        type=_finite,
        default=10.0,
        metavar="SECONDS",
        help="with --endpoint: how long one batch may take, retries of 429/502/503/504 answers included (default 10)",
    )
    _command(export, "export:export_command")

    gate = sub.add_parser(
        "gate",
        help="CI gate: fail (exit 3) unless MCP arms beat the baseline's fairness, or when a replay drifted",
    )
    gate.add_argument("db", type=Path, help="the run database to gate (from proctor run --db)")
    gate.add_argument("--baseline", help="the baseline arm (with --min-delta)")
    gate.add_argument("--min-delta", type=_finite, help="required mean fairness gain (e.g. 0.05)")
    gate.add_argument(
        "--max-changed",
        type=int,
        metavar="N",
        help="a replay run (proctor replay): fail when more than N calls changed or newly erred",
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
    gate.add_argument(
        "--tools-lock",
        type=Path,
        metavar="LOCKFILE",
        help="the tool lock the run's tool definitions must match (default: tools.lock.json beside the "
        "run's suite, when there is one)",
    )
    gate.add_argument(
        "--partial",
        action="store_true",
        help="gate a run that is still in progress on the trials done so far (refused without it)",
    )
    gate.add_argument(
        "--junit",
        type=Path,
        metavar="FILE",
        help="also write the run (a case per scenario x arm) and the gate's verdict as JUnit XML",
    )
    _command(gate, "gate:gate_command")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="proctor", description="Live evaluation console for MCP servers.")
    # metavar: the default lists every choice, the internal engine-process command included.
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_runs(sub)
    _add_judging(sub)
    _add_interop(sub)
    _add_init(sub)
    return parser


def is_bad_input(exc: BaseException) -> bool:
    """Whether ``exc`` reports bad input (exit 2) rather than a bug."""
    if isinstance(exc, (FileNotFoundError, NotADirectoryError, IsADirectoryError, sqlite3.DatabaseError)):
        return True
    for module_name, class_name in BAD_INPUT_ERRORS:
        module = sys.modules.get(module_name)
        if module is not None and isinstance(exc, getattr(module, class_name)):
            return True
    return False


def _handler(spec: str) -> Callable[[argparse.Namespace], int]:
    module_name, function = spec.split(":")
    module = importlib.import_module(f"proctor.app.commands.{module_name}")
    handler: Callable[[argparse.Namespace], int] = getattr(module, function)
    return handler


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from proctor.app.log_guard import install_log_guard

    install_log_guard()  # every library's log records, redacted and capped, instead of raw stderr
    try:
        return int(_handler(args.handler)(args))
    except KeyboardInterrupt:
        print("proctor: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except Exception as exc:
        if not is_bad_input(exc):
            raise
        from proctor.store.redaction import redact

        message = redact(str(exc))  # a bad suite's message may quote a value from it
        db = getattr(args, "db", None)
        if isinstance(exc, sqlite3.DatabaseError) and db is not None and str(db) not in message:
            message = (
                f"{db}: damaged or not a proctor run database ({exc}); "
                "restore it from a copy, or write a new run with another --db"
            )
        from proctor.store.display_text import sanitize  # a message may quote a suite's names

        print(f"proctor {args.command}: {sanitize(message)}", file=sys.stderr)
        return ExitCode.BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
