"""A deliberately degraded code-intelligence server: its index predates the pinned commit.

It was (notionally) built before a nine-line licence header was removed from every file, so
every line number it reports is nine too high, ``read_lines`` shows the old header and labels
lines by the old numbering (internally consistent, wrong against the commit), and its
reference search has lost track of about a third of the files. Tool names, schemas and
descriptions are identical to ``codeintel``'s: only the answers are worse, which is what a
benchmark must be able to detect through citation grounding.

``python -m proctor.scenarios.demo.servers.codeintel_stale --repo PATH --commit SHA``
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from proctor.scenarios.demo.servers.codeintel_tools import IndexView, build_codeintel_server
from proctor.scenarios.demo.servers.launch import open_repo, parse_options, serve

STALE_HEADER = (
    "# -----------------------------------------------------------------------------",
    "# tinyq - a small job queue",
    "#",
    "# Copyright (c) 2024-2025 the tinyq authors",
    "# SPDX-License-Identifier: MIT",
    "#",
    "# Licensed under the MIT licence; see LICENSE in the project root for the",
    "# full text. This notice must be kept in copies of substantial portions.",
    "# -----------------------------------------------------------------------------",
)


def indexed_paths(paths: Sequence[str]) -> list[str]:
    """The files the stale index still knows about (a fixed, arbitrary two thirds)."""
    return [p for p in paths if zlib.crc32(p.encode()) % 3 != 0]


STALE_VIEW = IndexView(header=STALE_HEADER, reference_paths=indexed_paths)


def main(argv: Sequence[str] | None = None) -> None:
    options = parse_options(argv, "Code intelligence MCP server over a pinned git commit.", needs_repo=True)
    serve(build_codeintel_server(open_repo(options), "codeintel_stale", STALE_VIEW), options)


if __name__ == "__main__":
    main()
