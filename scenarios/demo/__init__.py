"""The bundled demo suite: tinyq's source, its MCP servers and ten scenarios.

``proctor demo`` loads :data:`SUITE_DIR` with :func:`proctor.scenarios.loader.load_suite` and
materializes :data:`REPO_SOURCE_DIR` into a git repository whose commit is pinned in
``suite.yaml``.
"""

from __future__ import annotations

from pathlib import Path

SUITE_DIR = Path(__file__).resolve().parent
SUITE_FILE = SUITE_DIR / "suite.yaml"
REPO_SOURCE_DIR = SUITE_DIR / "repo"
SERVERS_PACKAGE = "proctor.scenarios.demo.servers"

__all__ = ["REPO_SOURCE_DIR", "SERVERS_PACKAGE", "SUITE_DIR", "SUITE_FILE"]
