"""Chat messages of a span in the GenAI conventions' form: ``gen_ai.input.messages``/
``output.messages`` (JSON text or structured), or OpenLLMetry's flattened ``gen_ai.prompt.N.*``."""

from __future__ import annotations

import json
from typing import Any

from proctor.scenarios.importers.common import content_text
from proctor.scenarios.importers.otlp import TraceSpan

Messages = list[dict[str, Any]]
IN, OUT = ("gen_ai.input.messages", "gen_ai.prompt."), ("gen_ai.output.messages", "gen_ai.completion.")


def messages_of(s: TraceSpan, which: tuple[str, str], unreadable: list[str]) -> Messages:
    key, legacy = which
    raw = s.attrs.get(key)
    if raw is None:
        return _flattened(s.attrs, legacy)
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            raw = None
    if not isinstance(raw, list):
        unreadable.append(f"{s.where}, attribute '{key}'")
        return []
    return [m for m in raw if isinstance(m, dict)]


def _flattened(attrs: dict[str, Any], prefix: str) -> Messages:
    """OpenLLMetry's ``gen_ai.prompt.0.role``/``.content``/``.tool_calls.0.name`` as messages."""
    fields: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        index, _, name = key.removeprefix(prefix).partition(".")
        if key.startswith(prefix) and index.isdigit() and name:
            fields.setdefault(int(index), {})[name] = value
    out = []
    for _, m in sorted(fields.items()):
        role, content = m.get("role", "assistant"), m.get("content")
        response = {"type": "tool_call_response", "id": m.get("tool_call_id"), "response": content}
        parts = [response if role == "tool" else {"type": "text", "content": content}] if content else []
        calls = next(j for j in range(len(m) + 1) if f"tool_calls.{j}.name" not in m)
        for j in range(calls):
            parts.append(
                {"type": "tool_call"} | {k: m.get(f"tool_calls.{j}.{k}") for k in ("id", "name", "arguments")}
            )
        out.append({"role": role, "parts": parts})
    return out


def parts_of(message: dict[str, Any], kind: str) -> Messages:
    parts = message.get("parts")
    if not isinstance(parts, list):
        content = message.get("content")
        parts = [{"type": "text", "content": content}] if isinstance(content, str) else []
    return [p for p in parts if isinstance(p, dict) and p.get("type") == kind]


def text_of(messages: Messages, role: str, *, first: bool = False) -> str:
    texts: list[str] = []
    for m in messages:
        if m.get("role") == role:
            texts += [content_text(p.get("content", p.get("text"))).strip() for p in parts_of(m, "text")]
            if first and any(texts):
                break
    return "\n\n".join(t for t in texts if t)


def as_json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def arguments_of(value: Any) -> dict[str, Any]:
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return {"_unparsed": value}  # a model's malformed call is a fact of the trace
    return value if isinstance(value, dict) else {"_unparsed": as_json(value)}


__all__ = ["IN", "OUT", "Messages", "arguments_of", "as_json", "messages_of", "parts_of", "text_of"]
