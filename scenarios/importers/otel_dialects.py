"""Other instrumentations' attribute sets, rewritten as the GenAI conventions ``otel.py`` reads.

- opentelemetry-instrumentation-openai-v2 (2.3b0) writes message content as log records
  (``gen_ai.user.message``, ``gen_ai.assistant.message``, ``gen_ai.tool.message``,
  ``gen_ai.choice``), not span attributes: they become ``gen_ai.input.messages``/``output.messages``.
- OpenInference: ``openinference.span.kind`` (LLM, TOOL, AGENT), ``llm.model_name``,
  ``llm.provider``, ``llm.token_count.*``, ``llm.input_messages.N.message.*``,
  ``llm.output_messages.N.message.*``, ``llm.tools.N.tool.json_schema``, ``llm.cost.total``,
  ``tool.name``, ``input.value``/``output.value``.
- OpenLLMetry: ``traceloop.span.kind`` (tool, agent, workflow), ``traceloop.entity.name``,
  ``traceloop.entity.input``/``output``; its chat spans already use ``gen_ai.prompt.N.*``.

Each rewrite only fills keys the span does not have, so a span in the conventions is unchanged.
"""

from __future__ import annotations

import json
from typing import Any

from proctor.scenarios.importers.otlp import TraceSpan

_OI_KINDS = {"LLM": "chat", "TOOL": "execute_tool", "AGENT": "invoke_agent"}
_TRACELOOP_KINDS = {"tool": "execute_tool", "agent": "invoke_agent"}


def normalize(s: TraceSpan) -> None:
    """Fill the GenAI keys of ``s.attrs`` from the dialect it is written in (see the module doc)."""
    if s.logs:
        _from_log_events(s)
    if "openinference.span.kind" in s.attrs:
        _from_openinference(s.attrs)
    elif "traceloop.span.kind" in s.attrs:
        _from_traceloop(s)


def _fill(attrs: dict[str, Any], key: str, value: Any) -> None:
    if value not in (None, "", []) and key not in attrs:
        attrs[key] = value


# -- openai-v2's log records --------------------------------------------------------------


def _calls(raw: Any) -> list[dict[str, Any]]:
    parts = []
    for c in raw if isinstance(raw, list) else []:
        fn = c.get("function") if isinstance(c, dict) else None
        if isinstance(fn, dict):
            parts.append({"type": "tool_call", "id": c.get("id"), "name": fn.get("name"),
                          "arguments": fn.get("arguments")})  # fmt: skip
    return parts


def _message(role: str, body: dict[str, Any]) -> dict[str, Any]:
    content = body.get("content")
    if role == "tool":
        parts = [{"type": "tool_call_response", "id": body.get("id"), "response": content}]
    else:
        parts = [{"type": "text", "content": content}] if content else []
        parts += _calls(body.get("tool_calls"))
    return {"role": role, "parts": parts}


def _from_log_events(s: TraceSpan) -> None:
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for name, body in s.logs:
        if not isinstance(body, dict):
            continue
        role = name.removeprefix("gen_ai.").removesuffix(".message")
        if name == "gen_ai.choice" and isinstance(body.get("message"), dict):
            outputs.append(_message("assistant", body["message"]))
        elif name.endswith(".message") and role in ("system", "user", "assistant", "tool"):
            inputs.append(_message(role, body))
    _fill(s.attrs, "gen_ai.input.messages", inputs)
    _fill(s.attrs, "gen_ai.output.messages", outputs)


# -- OpenInference ------------------------------------------------------------------------


def _indexed(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``prefix.0.message.role`` ... as [{"message.role": ...}, ...], in index order."""
    rows: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        index, _, rest = key.removeprefix(prefix + ".").partition(".")
        if key.startswith(prefix + ".") and index.isdigit() and rest:
            rows.setdefault(int(index), {})[rest] = value
    return [row for _, row in sorted(rows.items())]


def _oi_messages(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    out = []
    for row in _indexed(attrs, prefix):
        role = str(row.get("message.role") or "assistant")
        calls = [
            {"type": "tool_call", "id": c.get("tool_call.id"), "name": c.get("tool_call.function.name"),
             "arguments": c.get("tool_call.function.arguments")}
            for c in _indexed(row, "message.tool_calls")
        ]  # fmt: skip
        content = row.get("message.content")
        if role == "tool":
            parts = [
                {"type": "tool_call_response", "id": row.get("message.tool_call_id"), "response": content}
            ]
        else:
            parts = ([{"type": "text", "content": content}] if content else []) + calls
        out.append({"role": role, "parts": parts})
    return out


def _from_openinference(a: dict[str, Any]) -> None:
    kind = str(a["openinference.span.kind"]).upper()
    _fill(a, "gen_ai.operation.name", _OI_KINDS.get(kind))
    if kind == "LLM":
        _fill(a, "gen_ai.request.model", a.get("llm.model_name"))
        _fill(a, "gen_ai.provider.name", a.get("llm.provider") or a.get("llm.system"))
        _fill(a, "gen_ai.usage.input_tokens", a.get("llm.token_count.prompt"))
        _fill(a, "gen_ai.usage.output_tokens", a.get("llm.token_count.completion"))
        _fill(a, "gen_ai.input.messages", _oi_messages(a, "llm.input_messages"))
        _fill(a, "gen_ai.output.messages", _oi_messages(a, "llm.output_messages"))
        tools = [_json(row.get("tool.json_schema")) for row in _indexed(a, "llm.tools")]
        _fill(a, "gen_ai.tool.definitions", [t for t in tools if t is not None])
        _fill(a, "gen_ai.usage.cost", a.get("llm.cost.total"))
    elif kind == "TOOL":
        _fill(a, "gen_ai.tool.name", a.get("tool.name"))
        _fill(a, "gen_ai.tool.call.id", a.get("tool_call.id") or a.get("tool.id"))
        _fill(a, "gen_ai.tool.call.arguments", a.get("tool.parameters") or a.get("input.value"))
        _fill(a, "gen_ai.tool.call.result", a.get("output.value"))
    elif kind == "AGENT":
        _fill(a, "gen_ai.agent.name", a.get("agent.name"))
        _fill(a, "gen_ai.input.messages", _io_messages("user", a.get("input.value")))
        _fill(a, "gen_ai.output.messages", _io_messages("assistant", a.get("output.value")))


def _json(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return None
    return raw


def _io_messages(role: str, value: Any) -> list[dict[str, Any]]:
    """``input.value``/``output.value`` (plain text, or JSON whose messages we do not guess)."""
    if isinstance(value, str) and value.strip() and not value.lstrip().startswith(("{", "[")):
        return [{"role": role, "parts": [{"type": "text", "content": value}]}]
    return []


# -- OpenLLMetry (traceloop) ---------------------------------------------------------------


def _from_traceloop(s: TraceSpan) -> None:
    a = s.attrs
    kind = str(a["traceloop.span.kind"])
    _fill(a, "gen_ai.operation.name", _TRACELOOP_KINDS.get(kind))
    entity_in, entity_out = _json(a.get("traceloop.entity.input")), _json(a.get("traceloop.entity.output"))
    if kind == "tool":
        name = a.get("traceloop.entity.name") or s.span.name.removesuffix(".tool")
        if isinstance(entity_in, dict):  # the mcp instrumentation: {tool_name, arguments}
            name = entity_in.get("tool_name") or name
            entity_in = entity_in.get("arguments", entity_in)
        if isinstance(entity_out, dict) and "result" in entity_out:  # {result, is_error}
            _fill(a, "error.type", "tool_error" if entity_out.get("is_error") is True else None)
            entity_out = entity_out["result"]
        _fill(a, "gen_ai.tool.name", name)
        _fill(a, "gen_ai.tool.call.arguments", entity_in)
        _fill(a, "gen_ai.tool.call.result", entity_out)
    elif kind == "agent":
        _fill(a, "gen_ai.agent.name", a.get("traceloop.entity.name"))


__all__ = ["normalize"]
