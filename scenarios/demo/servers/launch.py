"""Command-line options and transport selection shared by every demo MCP server.

All demo servers take the same flags, so a suite can start any of them the same way:
``--repo PATH --commit SHA [--transport stdio|streamable-http --port N]``. HTTP servers
bind 127.0.0.1 only and serve the MCP endpoint at ``/mcp``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from mcp.server.mcpserver import MCPServer

from proctor.scenarios.repo import PinnedRepo, RepoError

Transport = Literal["stdio", "streamable-http"]
HTTP_HOST = "127.0.0.1"
HTTP_PATH = "/mcp"


@dataclass(frozen=True)
class ServerOptions:
    repo: str | None
    commit: str | None
    transport: Transport
    port: int


def parse_options(argv: Sequence[str] | None, description: str, needs_repo: bool) -> ServerOptions:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--repo", required=needs_repo, help="path of the git repository to serve")
    parser.add_argument("--commit", required=needs_repo, help="commit to pin; files are read from it only")
    parser.add_argument("--transport", choices=["stdio", "streamable-http"], default="stdio")
    parser.add_argument("--port", type=int, default=0, help=f"port on {HTTP_HOST} for streamable-http")
    args = parser.parse_args(argv)
    if args.transport == "streamable-http" and not 0 < args.port < 65536:
        parser.error("--transport streamable-http needs --port N (1-65535)")
    return ServerOptions(repo=args.repo, commit=args.commit, transport=args.transport, port=args.port)


def open_repo(options: ServerOptions) -> PinnedRepo:
    """The pinned repository, or exit with a message on stderr (stdout belongs to the protocol)."""
    if options.repo is None or options.commit is None:
        sys.exit("error: --repo and --commit are required")
    try:
        return PinnedRepo(options.repo, options.commit)
    except RepoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


def serve(server: MCPServer[Any], options: ServerOptions) -> None:
    if options.transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=HTTP_HOST, port=options.port, streamable_http_path=HTTP_PATH)
