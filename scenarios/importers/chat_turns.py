"""Chat messages as an imported trajectory's turns: OpenAI-style messages, tool calls, results."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from proctor.scenarios.importers.common import (
    ImportedCall,
    ImportedResult,
    ImportedTrajectory,
    ImportedTurn,
    ImportFormatError,
    content_text,
    json_object,
)

CallMapper = Callable[[str, dict[str, Any]], tuple[str, str, dict[str, Any]]]


def openai_messages_to_turns(messages: Any, where: str, map_call: CallMapper) -> tuple[ImportedTurn, ...]:
    """OpenAI chat ``messages`` as turns: each assistant message with the results of its calls.

    ``map_call(name, arguments)`` gives (server, tool, arguments) for one requested call, so a
    source's naming (``server_tool``, a router's ``execute-tool``) becomes proctor's. Arguments
    that are not valid JSON are kept as ``{"_unparsed": text}``: a model's malformed call is a
    fact of the trajectory, not an import error.
    """
    if not isinstance(messages, list):
        raise ImportFormatError(
            f"{where}: expected a list of chat messages, got {type(messages).__name__}; "
            "write it as a JSON list of {role, content, tool_calls} objects"
        )
    turns: list[tuple[str, list[ImportedCall], list[ImportedResult]]] = []
    by_id: dict[str, ImportedCall] = {}
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise ImportFormatError(f"{where}[{i}]: expected a message object, got {type(msg).__name__}")
        role = msg.get("role")
        if role == "assistant":
            calls = []
            for j, raw in enumerate(msg.get("tool_calls") or []):
                call = _call(raw, f"{where}[{i}].tool_calls[{j}]", map_call, fallback_id=f"call-{i}-{j}")
                by_id[call.call_id] = call
                calls.append(call)
            turns.append((content_text(msg.get("content")).strip(), calls, []))
        elif role == "tool":
            call_id = str(msg.get("tool_call_id") or "")
            known = by_id.get(call_id)
            content = content_text(msg.get("content"))
            result = ImportedResult(
                call_id=call_id,
                server=known.server if known else "",
                tool=known.tool if known else str(msg.get("name") or ""),
                content=content,
                is_error=bool(msg.get("is_error")) or content.rstrip().endswith("isError=True"),
            )
            if not turns:
                turns.append(("", [], []))
            turns[-1][2].append(result)
        elif role not in ("system", "user", "developer"):
            raise ImportFormatError(
                f"{where}[{i}], field 'role': {role!r} is not a chat role (valid: system, user, assistant, tool)"
            )
    return tuple(ImportedTurn(text, tuple(calls), tuple(results)) for text, calls, results in turns)


def _call(raw: Any, where: str, map_call: CallMapper, fallback_id: str) -> ImportedCall:
    fn = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
        raise ImportFormatError(f"{where}: expected {{id, function: {{name, arguments}}}}")
    args_raw = fn.get("arguments")
    try:
        args = json_object(args_raw, where)
    except ImportFormatError:
        args = {"_unparsed": str(args_raw)}
    server, tool, args = map_call(fn["name"], args)
    return ImportedCall(call_id=str(raw.get("id") or fallback_id), server=server, tool=tool, arguments=args)


def last_assistant_text(turns: Sequence[ImportedTurn]) -> str:
    for turn in reversed(turns):
        if turn.text and not turn.calls:
            return turn.text
    return ""


def number_epochs(trajectories: Sequence[ImportedTrajectory]) -> tuple[ImportedTrajectory, ...]:
    """Give repeated (scenario, arm, model) trajectories epochs 0, 1, ... in source order."""
    seen: dict[tuple[str, str, str], int] = {}
    out = []
    for t in trajectories:
        key = (t.scenario, t.arm, t.model)
        epoch = seen.get(key, 0)
        seen[key] = epoch + 1
        out.append(replace(t, epoch=epoch))
    return tuple(out)


__all__ = ["CallMapper", "last_assistant_text", "number_epochs", "openai_messages_to_turns"]
