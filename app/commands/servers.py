"""``proctor servers check``: start each configured MCP server and list its tools."""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from proctor.app.exit_codes import ExitCode
from proctor.engine.tools.mcp_toolbox import ServerPool, ServerStartError
from proctor.scenarios.loader import expand_server, load_servers_file, load_suite
from proctor.scenarios.schema import HttpServer, ServerConfig
from proctor.scenarios.workspace import Workspace


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
