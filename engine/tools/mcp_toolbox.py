"""MCP servers as a trial's toolbox, and the pool that shares server processes across trials."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from proctor.engine.tools.mcp_connection import McpConnection
from proctor.engine.tools.mcp_launch import ServerStartError
from proctor.engine.tools.supervise import DEFAULT_LOG_BYTES
from proctor.engine.tools.toolbox import ToolCallOutcome, ToolSpec
from proctor.scenarios.schema import ServerConfig
from proctor.scenarios.workspace import TRIAL_DIR_MARK
from proctor.store.events import ServerConnected

MAX_START_FAILURES = 2


class ServerPool:
    """Starts each ``shared`` server once (on first use) and hands out fresh ``per_trial`` ones."""

    def __init__(self, log_dir: Path, log_bytes: int = DEFAULT_LOG_BYTES) -> None:
        self._log_dir = log_dir
        self._log_bytes = log_bytes
        self._shared: dict[str, McpConnection] = {}
        self._starting: dict[str, asyncio.Lock] = {}
        self._per_trial: set[McpConnection] = set()
        self._failures: dict[str, list[str]] = {}

    def shared_started(self) -> set[str]:
        """Names of the shared servers up and listed so far (progress displays count them)."""
        return {key.split("\x00", 1)[0] for key in self._shared}

    async def acquire(self, name: str, config: ServerConfig) -> McpConnection:
        dumped = config.model_dump_json()
        key = f"{name}\x00{dumped}"
        self._check_breaker(key)
        if config.lifecycle == "per_trial":
            scratch = None
            if TRIAL_DIR_MARK in dumped:
                scratch = Path(tempfile.mkdtemp(prefix=f"proctor-trial-{name}-"))
                filled = dumped.replace(TRIAL_DIR_MARK, json.dumps(str(scratch))[1:-1])
                config = type(config).model_validate_json(filled)
            conn = McpConnection(name, config, self._log_dir, self._log_bytes)
            conn.scratch = scratch
            self._per_trial.add(conn)
            try:
                await self._started(key, conn)
            except BaseException:
                await self.release(conn)
                raise
            return conn
        lock = self._starting.setdefault(key, asyncio.Lock())
        async with lock:
            self._check_breaker(key)
            shared = self._shared.get(key)
            if shared is None:
                shared = McpConnection(name, config, self._log_dir, self._log_bytes)
                await self._started(key, shared)
                self._shared[key] = shared
            return shared

    def _check_breaker(self, key: str) -> None:
        failures = self._failures.get(key, [])
        if len(failures) >= MAX_START_FAILURES:
            raise ServerStartError(
                f"{failures[0]} (failed to start {len(failures)} times; not tried again in this run: "
                "fix the server and resume)"
            )

    async def _started(self, key: str, conn: McpConnection) -> None:
        """Start ``conn``; count failures so a server that never comes up stops costing every trial."""
        try:
            await conn.start()
        except ServerStartError as exc:
            self._failures.setdefault(key, []).append(str(exc))
            raise
        self._failures.pop(key, None)

    async def release(self, conn: McpConnection) -> None:
        """Close a per-trial connection; shared ones stay up until ``aclose``."""
        if conn in self._per_trial:
            self._per_trial.discard(conn)
            await conn.aclose()
            if conn.scratch is not None:  # the trial's state goes with it
                shutil.rmtree(conn.scratch, ignore_errors=True)

    async def aclose(self) -> None:
        conns = [*self._shared.values(), *self._per_trial]
        self._shared.clear()
        self._per_trial.clear()
        await asyncio.gather(*(c.aclose() for c in conns), return_exceptions=True)
        for c in conns:
            if c.scratch is not None:
                shutil.rmtree(c.scratch, ignore_errors=True)


class McpToolbox:
    """The tools of an arm's servers. Names collide across servers? Then they become ``server__tool``."""

    def __init__(
        self, pool: ServerPool, connections: list[McpConnection], timeout_override: float | None
    ) -> None:
        self._pool = pool
        self._conns = connections
        self._timeout_override = timeout_override
        self._routes: dict[str, tuple[McpConnection, str]] = {}
        self._specs: list[ToolSpec] = []
        counts: dict[str, int] = {}
        listed = [(c, c.specs()) for c in connections]
        for _, specs in listed:
            for spec in specs:
                counts[spec.name] = counts.get(spec.name, 0) + 1
        for c, specs in listed:
            for spec in specs:
                if counts[spec.name] == 1:  # the server's own spec, shared: it is immutable
                    self._routes[spec.name] = (c, spec.name)
                    self._specs.append(spec)
                    continue
                exposed = f"{c.name}__{spec.name}"
                self._routes[exposed] = (c, spec.name)
                self._specs.append(dataclasses.replace(spec, name=exposed))

    @classmethod
    async def open(
        cls, pool: ServerPool, servers: dict[str, ServerConfig], timeout_override: float | None
    ) -> McpToolbox:
        conns: list[McpConnection] = []
        try:
            for name, cfg in servers.items():
                conns.append(await pool.acquire(name, cfg))
        except BaseException:
            for c in conns:
                await pool.release(c)
            raise
        return cls(pool, conns, timeout_override)

    def specs(self) -> list[ToolSpec]:
        return list(self._specs)

    def connected(self) -> list[ServerConnected]:
        return [c.connected for c in self._conns if c.connected is not None]

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolCallOutcome:
        route = self._routes.get(name)
        if route is None:
            known = ", ".join(sorted(self._routes)) or "none"
            return ToolCallOutcome(
                "", name, f"unknown tool {name!r}; available: {known}", True, 0.0, "unknown_tool"
            )
        conn, tool = route
        timeout = self._timeout_override or conn.config.timeout_s
        return await conn.call(tool, arguments, timeout)

    async def aclose(self) -> None:
        for c in self._conns:
            await self._pool.release(c)


__all__ = ["McpToolbox", "ServerPool", "ServerStartError"]
