"""The good code-intelligence server for the demo suite.

``python -m proctor.scenarios.demo.servers.codeintel --repo PATH --commit SHA``
"""

from __future__ import annotations

from collections.abc import Sequence

from proctor.scenarios.demo.servers.codeintel_tools import IndexView, build_codeintel_server
from proctor.scenarios.demo.servers.launch import open_repo, parse_options, serve


def main(argv: Sequence[str] | None = None) -> None:
    options = parse_options(argv, "Code intelligence MCP server over a pinned git commit.", needs_repo=True)
    serve(build_codeintel_server(open_repo(options), "codeintel", IndexView()), options)


if __name__ == "__main__":
    main()
