"""``call_tool``: an operator calls a trial's tool by hand, on the same server at the same commit.

The console's workbench sends the command; the engine that owns the run's servers carries it
out exactly as a trial's call would go (the scenario's expanded server config, the shared pool,
the suite's tool timeout), keeps the raw JSON-RPC result, and records a run-level ``tool_recall``
event, which is never part of the trial's transcript or scores.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from proctor.engine.runs.runner import Run
from proctor.engine.tools.mcp_toolbox import ServerStartError
from proctor.store.events import ToolRecall
from proctor.store.read.reader import TrialRecord


class RecallError(Exception):
    """The call cannot be made as asked; the message names the field and the fix."""


async def call_tool(run: Run, args: Mapping[str, Any], record: TrialRecord) -> str:
    """Call the tool for ``record`` (the trial ``args["trial_id"]`` names, read by the caller)."""
    trial_id, request_id = record.id, args.get("request_id")
    server, tool, arguments = args.get("server"), args.get("tool"), args.get("arguments")
    if not isinstance(request_id, str):
        raise RecallError("call_tool: give request_id (text)")
    if not isinstance(server, str) or not isinstance(tool, str) or not isinstance(arguments, dict):
        raise RecallError("call_tool: give server and tool (text) and arguments (a JSON object)")
    arm = run.loaded.suite.arms.get(record.arm)
    allowed = [*arm.servers, *arm.distractors] if arm is not None else []
    if server not in allowed:
        raise RecallError(
            f"call_tool: trial #{trial_id}'s arm {record.arm!r} has no server {server!r} "
            f"(it has: {', '.join(allowed) or 'none'})"
        )
    config = run.workspace.servers_for([server], run.loaded.scenario(record.scenario))[server]
    try:
        conn = await run.pool.acquire(server, config)
    except ServerStartError as exc:
        raise RecallError(f"call_tool: {exc}") from exc
    try:
        timeout = run.loaded.suite.limits.tool_timeout_s or config.timeout_s
        outcome = await conn.call(tool, dict(arguments), timeout, keep_raw=True)
    finally:
        await run.pool.release(conn)
    for blob in outcome.blobs:
        run.writer.put_blob(blob.sha256, blob.mime_type, blob.data)
    event = ToolRecall(
        request_id=request_id,
        trial_id=trial_id,
        result=outcome.as_result(request_id),
        raw=outcome.raw,
        notices=list(outcome.notices),
    )
    run.writer.emit(run.run_id, event)
    status = f"error ({outcome.error_type})" if outcome.is_error else "ok"
    return f"{server}.{tool} for trial #{trial_id}: {status} in {outcome.latency_s:.2f}s"


__all__ = ["RecallError", "call_tool"]
