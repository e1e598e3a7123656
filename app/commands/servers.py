"""``proctor servers check|call``: start configured MCP servers, list their tools, call one by hand."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from proctor.app.exit_codes import ExitCode
from proctor.app.views.call_view import result_lines, server_line
from proctor.engine.suites import load_suite
from proctor.engine.tools.mcp_toolbox import McpToolbox, ServerPool, ServerStartError
from proctor.engine.tools.tool_filter import hidden_note
from proctor.engine.tools.toolbox import ToolCallOutcome
from proctor.scenarios.loader import SuiteError, expand_server, load_servers_file
from proctor.scenarios.schema import HttpServer, ServerConfig
from proctor.scenarios.workspace import Workspace
from proctor.store.events import McpNotice, ServerConnected, ToolResult
from proctor.store.redaction import redact
from proctor.widgets.sanitize import sanitize


def _servers(config: Path, only: str | None = None) -> tuple[dict[str, ServerConfig], dict[str, str]]:
    """The servers as a run would start them (``only``: that one), and why others are not started:
    disabled in the config, or a variable (a VS Code input) not exported. What the reader ignored
    is said on stderr."""
    skipped: dict[str, str] = {}
    if config.is_dir() or config.name == "suite.yaml":
        loaded = load_suite(config, need_scenarios=False)  # servers are checked before scenarios exist
        workspace = Workspace.prepare(loaded)
        notes = list(loaded.notes)
        servers = workspace.servers_for([n for n in loaded.servers if only in (None, n)], None)
    else:
        notes = []
        servers = {}
        for name, cfg in load_servers_file(config, notes).items():
            if only not in (None, name):
                continue
            try:  # one server's missing input must not keep the others from being checked
                servers[name] = expand_server(name, cfg, dict(os.environ))
            except SuiteError as exc:
                skipped[name] = f"needs input: {str(exc).removeprefix(f'mcpServers.{name}.')}"
    for name, cfg in list(servers.items()):
        if cfg.disabled and only is None:
            skipped[name] = (
                "disabled in the config (disabled: true, or its client's enabled: false); not started"
            )
            del servers[name]
    for note in notes:
        print(f"note: {sanitize(note)}", file=sys.stderr)
    return servers, skipped


def servers_defined(config: Path) -> list[str]:
    """The names of the servers ``config`` defines, none of them expanded or started."""
    if config.is_dir() or config.name == "suite.yaml":
        return list(load_suite(config, need_scenarios=False).servers)
    return list(load_servers_file(config))


def transport_of(cfg: ServerConfig) -> str:
    """stdio, http (streamable HTTP) or sse (the legacy HTTP+SSE transport)."""
    if isinstance(cfg, HttpServer):
        return "sse" if cfg.type == "sse" else "http"
    return "stdio"


async def check_servers(config: Path, out: Console) -> bool:
    servers, skipped = _servers(config)
    table = Table(title=f"MCP servers in {config}", title_justify="left")
    for col in ("server", "transport", "status", "start s"):
        table.add_column(col)
    table.add_column("tools", overflow="fold")  # a long path in an error stays whole
    ok = not any(why.startswith("needs input") for why in skipped.values())
    for name, why in skipped.items():
        status = (
            Text("needs input", style="yellow") if why.startswith("needs") else Text("skipped", style="dim")
        )
        table.add_row(Text(name), "-", status, "-", Text(why))
    with tempfile.TemporaryDirectory(prefix="proctor-check-") as logs:
        pool = ServerPool(Path(logs))
        try:
            for name, cfg in servers.items():
                transport = transport_of(cfg)
                start = time.perf_counter()
                try:
                    conn = await pool.acquire(name, cfg)
                except ServerStartError as exc:
                    ok = False
                    table.add_row(Text(name), transport, Text("failed", style="red"), "-", Text(str(exc)))
                    continue
                offered = sorted(s.name for s in conn.specs())  # what the model is offered
                listed = len(conn.tools)
                count = f"{len(offered)}" if len(offered) == listed else f"{len(offered)} of {listed} offered"
                table.add_row(
                    Text(name),
                    transport,
                    Text("ok", style="green"),
                    f"{time.perf_counter() - start:.2f}",
                    Text(f"{count}: {', '.join(offered)}{hidden_note(cfg, (t.name for t in conn.tools))}"),
                )
        finally:
            await pool.aclose()
    out.print(table)
    return ok


def check_command(args: argparse.Namespace) -> int:
    ok = asyncio.run(check_servers(args.config, Console(highlight=False)))
    return ExitCode.OK if ok else ExitCode.FAILED


class CallInputError(ValueError):
    """``servers call`` was given an unknown server or arguments that are not a JSON object."""


@dataclasses.dataclass(frozen=True)
class CallRecord:
    """One hand-made call as the run database would hold it: who answered, what it said, the result."""

    server: dict[str, Any]
    notices: list[dict[str, Any]]
    result: dict[str, Any]
    blobs: list[dict[str, Any]]


async def call_tool(config: Path, server: str, tool: str, arguments: dict[str, Any]) -> CallRecord:
    """Start ``server`` as a run would, call ``tool`` once, and return what a trial would record."""
    servers, skipped = _servers(config, server)
    if server in skipped:
        raise CallInputError(f"{config}: server {server!r} {skipped[server]}")
    if server not in servers:
        defined = sorted(servers_defined(config))
        raise CallInputError(f"{config}: no server {server!r} (defined: {', '.join(defined) or 'none'})")
    with tempfile.TemporaryDirectory(prefix="proctor-call-") as logs:
        pool = ServerPool(Path(logs))
        try:
            box = await McpToolbox.open(pool, {server: servers[server]}, None)
            try:
                names = sorted(t.name for t in box.specs())
                if tool not in names:
                    raise CallInputError(
                        f"server {server!r} has no tool {tool!r}; its tools: {', '.join(names) or 'none'}"
                    )
                outcome = await box.call(tool, arguments)
                connected = box.connected()
            finally:
                await box.aclose()
        finally:
            await pool.aclose()
    return _recorded(outcome, connected[0] if connected else None)


def _recorded(outcome: ToolCallOutcome, connected: ServerConnected | None) -> CallRecord:
    result = outcome.as_result("manual")
    raw = json.dumps(
        {
            "server": connected.model_dump(mode="json") if connected else {},
            "notices": [n.model_dump(mode="json") for n in outcome.notices],
            "result": result.model_dump(mode="json"),
            "blobs": [
                {"sha256": b.sha256, "mime_type": b.mime_type, "size": len(b.data)} for b in outcome.blobs
            ],
        }
    )
    return CallRecord(**json.loads(redact(raw)))  # redacted as the run database would hold it


def call_command(args: argparse.Namespace) -> int:
    try:
        arguments = json.loads(args.args)
    except json.JSONDecodeError as exc:
        raise CallInputError(f"--args: not JSON ({exc.msg} at character {exc.pos}); give an object") from exc
    if not isinstance(arguments, dict):
        raise CallInputError('--args: give a JSON object, e.g. \'{"query": "retry"}\'')
    record = asyncio.run(call_tool(args.config, args.server, args.tool, arguments))
    result = ToolResult.model_validate(record.result)
    if args.json:
        print(json.dumps(dataclasses.asdict(record), indent=2, ensure_ascii=False))
    else:
        _print_call(Console(highlight=False), record, result)
    return ExitCode.FAILED if result.is_error else ExitCode.OK


def _print_call(out: Console, record: CallRecord, result: ToolResult) -> None:
    if record.server:
        out.print(Text(sanitize(server_line(ServerConnected.model_validate(record.server))), style="dim"))
    notices = [McpNotice.model_validate(n).model_copy(update={"call_id": "manual"}) for n in record.notices]
    for line in result_lines(result, notices):
        out.print(line)
