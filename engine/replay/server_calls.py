"""Where a replayed call goes: the suite's server of the recorded call, started as a run starts it.

A recorded call names its server and the tool as the model saw it (``server__tool`` when two
servers of the arm had the same tool; the router's ``execute`` wrapping the tool it ran); its
result names the server and the tool's own name that answered. The replay calls that server's
tool with the recorded arguments, through the run's server pool (the scenario's expanded
config, its lifecycle, the suite's tool timeout) and records the result as the agent loop
records one (capped, notices filed under the call, binary blocks as blobs). A server that does
not start, or that the suite no longer has, answers every call with an error result, which the
drift then shows as a new error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proctor.engine.drift.runs_diff import RecordedCall
from proctor.engine.tools.caps import cap_block, cap_stored, cap_structured
from proctor.engine.tools.mcp_connection import McpConnection
from proctor.engine.tools.mcp_toolbox import ServerPool, ServerStartError
from proctor.engine.tools.retrieval import EXECUTE
from proctor.scenarios.loader import LoadedSuite
from proctor.scenarios.schema import Scenario
from proctor.scenarios.workspace import Workspace
from proctor.store.events import Event, ToolResult, ToolsListed
from proctor.store.read.reader import TrialRecord
from proctor.store.redaction import redact
from proctor.store.tool_origin import is_builtin
from proctor.store.write.writer import StoreWriter

Emit = Callable[[Event], None]


@dataclass(frozen=True)
class Target:
    """The server, tool and arguments a recorded call is made with again."""

    server: str
    tool: str
    arguments: dict[str, Any]


def target_of(call: RecordedCall) -> Target | None:
    """Where ``call`` goes; None for a call proctor answered itself (built-in tools, ``route``)."""
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    if call.server == EXECUTE.server and call.tool == EXECUTE.name:
        inner, inner_args = arguments.get("tool"), arguments.get("arguments")
        if not call.result_server or not isinstance(inner, str) or not isinstance(inner_args, dict):
            return None  # which server ran it is only known from its result
        return Target(call.result_server, call.result_tool or inner, inner_args)
    server = call.server or call.result_server
    if not server or is_builtin(call):  # the marker, never the name: a server may be called "builtin"
        return None
    tool = call.result_tool or call.tool.removeprefix(f"{server}__")
    return Target(server, tool, arguments)


class ReplayServers:
    """The replay's server pool: shared servers start once, ``per_trial`` ones for each trial."""

    def __init__(self, loaded: LoadedSuite, workspace: Workspace, log_dir: Path) -> None:
        self.loaded = loaded
        self.workspace = workspace
        self.pool = ServerPool(log_dir, loaded.suite.limits.server_log_bytes)

    def _scenario(self, scenario_id: str) -> Scenario | None:
        try:
            return self.loaded.scenario(scenario_id)
        except KeyError:
            return None  # the suite no longer has it: its servers run without its repository

    async def open_trial(self, record: TrialRecord, calls: Sequence[RecordedCall], emit: Emit) -> ReplayTrial:
        """Start (or reuse) the servers of the trial's arm and of its calls; list their tools."""
        arm = self.loaded.suite.arms.get(record.arm)
        names = [*arm.servers, *arm.distractors] if arm is not None else []
        for call in calls:
            t = target_of(call)
            if t is not None and t.server in self.loaded.servers and t.server not in names:
                names.append(t.server)
        conns: dict[str, McpConnection] = {}
        failures: dict[str, str] = {}
        configs = self.workspace.servers_for(names, self._scenario(record.scenario))
        for name, config in configs.items():
            try:
                conns[name] = await self.pool.acquire(name, config)
            except ServerStartError as exc:
                failures[name] = redact(str(exc))
        listed = [s.listed() for c in conns.values() for s in c.specs()]
        emit(ToolsListed(tools=listed))
        for c in conns.values():
            if c.connected is not None:
                emit(c.connected)
        return ReplayTrial(self, conns, failures)

    async def aclose(self) -> None:
        await self.pool.aclose()


class ReplayTrial:
    """One trial's open servers; ``call`` makes a recorded call again and records its result."""

    def __init__(
        self, servers: ReplayServers, conns: dict[str, McpConnection], failures: dict[str, str]
    ) -> None:
        self._servers = servers
        self._conns = conns
        self._failures = failures
        self._limits = servers.loaded.suite.limits

    def replayable(self, call: RecordedCall) -> bool:
        return target_of(call) is not None

    async def call(self, call: RecordedCall, emit: Emit, writer: StoreWriter) -> None:
        target = target_of(call)
        assert target is not None  # ``replayable`` said so
        conn = self._conns.get(target.server)
        if conn is None:
            emit(self._unreachable(call, target))
            return
        timeout = self._limits.tool_timeout_s or conn.config.timeout_s
        outcome = await conn.call(target.tool, target.arguments, timeout)
        for notice in outcome.notices:
            emit(notice.model_copy(update={"call_id": call.call_id}))
        for blob in outcome.blobs:
            writer.put_blob(blob.sha256, blob.mime_type, blob.data)
        chars = self._limits.tool_result_store_chars
        emit(
            ToolResult(
                call_id=call.call_id,
                server=outcome.server,
                tool=outcome.tool,
                content=cap_stored(outcome.content, chars),
                is_error=outcome.is_error,
                error_type=outcome.error_type,
                latency_s=outcome.latency_s,
                structured=cap_structured(outcome.structured, chars),
                blocks=[cap_block(b, chars) for b in outcome.blocks],
                builtin=outcome.builtin,
            )
        )

    def _unreachable(self, call: RecordedCall, target: Target) -> ToolResult:
        failure = self._failures.get(target.server)
        if failure is not None:
            message, kind = f"server {target.server!r} did not start: {failure}", "server_start"
        else:
            known = ", ".join(sorted(self._servers.loaded.servers)) or "none"
            message = f"the suite has no server {target.server!r} (its servers: {known})"
            kind = "unknown_server"
        return ToolResult(
            call_id=call.call_id,
            server=target.server,
            tool=target.tool,
            content=message,
            is_error=True,
            error_type=kind,
            latency_s=0.0,
            builtin=False,
        )

    async def aclose(self) -> None:
        for conn in self._conns.values():
            await self._servers.pool.release(conn)


__all__ = ["ReplayServers", "ReplayTrial", "Target", "target_of"]
