"""``proctor servers check``: start each configured MCP server and list its tools."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from proctor.app.exit_codes import ExitCode
from proctor.engine.tools.mcp_toolbox import McpToolbox, ServerPool, ServerStartError
from proctor.engine.tools.toolbox import ToolCallOutcome
from proctor.scenarios.loader import expand_server, load_servers_file, load_suite
from proctor.scenarios.schema import HttpServer, ServerConfig
from proctor.scenarios.workspace import Workspace
from proctor.store.redaction import redact
from proctor.widgets.sanitize import sanitize


def _servers(config: Path) -> dict[str, ServerConfig]:
    if config.is_dir() or config.name == "suite.yaml":
        loaded = load_suite(config)
        workspace = Workspace.prepare(loaded)
        return workspace.servers_for(list(loaded.servers), loaded.scenarios[0])
    return {n: expand_server(n, c, dict(os.environ)) for n, c in load_servers_file(config).items()}


async def check_servers(config: Path, out: Console) -> bool:
    servers = _servers(config)
    table = Table(title=f"MCP servers in {config}", title_justify="left")
    for col in ("server", "transport", "status", "start s", "tools"):
        table.add_column(col)
    ok = True
    with tempfile.TemporaryDirectory(prefix="proctor-check-") as logs:
        pool = ServerPool(Path(logs))
        try:
            for name, cfg in servers.items():
                transport = "http" if isinstance(cfg, HttpServer) else "stdio"
                start = time.perf_counter()
                try:
                    conn = await pool.acquire(name, cfg)
                except ServerStartError as exc:
                    ok = False
                    table.add_row(Text(name), transport, Text("failed", style="red"), "-", Text(str(exc)))
                    continue
                names = ", ".join(sorted(t.name for t in conn.tools))
                table.add_row(
                    Text(name),
                    transport,
                    Text("ok", style="green"),
                    f"{time.perf_counter() - start:.2f}",
                    Text(f"{len(conn.tools)}: {names}"),
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


async def call_tool(config: Path, server: str, tool: str, arguments: dict[str, Any]) -> ToolCallOutcome:
    """Start ``server`` as a run would, call ``tool`` once, and return the outcome a trial would record."""
    servers = _servers(config)
    if server not in servers:
        raise CallInputError(
            f"{config}: no server {server!r} (defined: {', '.join(sorted(servers)) or 'none'})"
        )
    with tempfile.TemporaryDirectory(prefix="proctor-call-") as logs:
        pool = ServerPool(Path(logs))
        try:
            box = await McpToolbox.open(pool, {server: servers[server]}, None)
            try:
                return await box.call(tool, arguments)
            finally:
                await box.aclose()
        finally:
            await pool.aclose()


def call_command(args: argparse.Namespace) -> int:
    try:
        arguments = json.loads(args.args)
    except json.JSONDecodeError as exc:
        raise CallInputError(f"--args: not JSON ({exc.msg} at character {exc.pos}); give an object") from exc
    if not isinstance(arguments, dict):
        raise CallInputError('--args: give a JSON object, e.g. \'{"query": "retry"}\'')
    called = asyncio.run(call_tool(args.config, args.server, args.tool, arguments))
    recorded = json.loads(redact(json.dumps(dataclasses.asdict(called))))  # as the run database would hold it
    outcome = ToolCallOutcome(**recorded)
    out = Console(highlight=False)
    if args.json:
        print(json.dumps(recorded, indent=2, ensure_ascii=False))
    else:
        status = f"error ({outcome.error_type})" if outcome.is_error else "ok"
        out.print(
            Text(f"{outcome.server}.{outcome.tool}: {status} in {outcome.latency_s:.2f}s", style="bold")
        )
        out.print(Text(sanitize(outcome.content)))
        if outcome.structured is not None:
            out.print(Text("structuredContent:", style="bold"))
            out.print(Text(sanitize(json.dumps(outcome.structured, indent=2, ensure_ascii=False))))
    return ExitCode.FAILED if outcome.is_error else ExitCode.OK
