"""The secrets a server's configuration holds, computed in one place for every redactor.

A suite hands credentials to a server in its ``env:`` (stdio, or a launched command's) and its
``headers:`` (HTTP). The run's own redactor learns them when the suite enters a run; a process
that redacts on its own (a launched server's log supervisor) is given the same set, from here.
"""

from __future__ import annotations

from proctor.scenarios.schema import HttpServer, ServerConfig, StdioServer
from proctor.store.redaction import header_secrets, secret_values


def server_secrets(config: ServerConfig) -> dict[str, str]:
    """value -> name for every secret in ``config``: secret-looking ``env`` values, every
    ``headers:`` value but standard ones, and the ``env`` of a ``launch:`` command."""
    if isinstance(config, StdioServer):
        return secret_values(config.env)
    found = header_secrets(config.headers)
    if isinstance(config, HttpServer) and config.launch is not None:
        found |= secret_values(config.launch.env)
    return found


__all__ = ["server_secrets"]
