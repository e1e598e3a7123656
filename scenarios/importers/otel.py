"""Import agent traces in the OpenTelemetry GenAI semantic conventions as trials proctor scores.

Files are OTLP/JSON (``otlp.py``). Each trace becomes one trial of an agent proctor did not run,
read from these spans (GenAI conventions, open-telemetry/semantic-conventions-genai docs/gen-ai:
gen-ai-spans, gen-ai-agent-spans, execute-tool, mcp):

- the agent: the outermost ``invoke_agent`` span, else the trace's root. ``gen_ai.agent.name``
  is the arm; ``gen_ai.provider.name`` and ``gen_ai.request.model`` the model
  (``provider:name``); ``gen_ai.input.messages`` the prompt; ``gen_ai.output.messages`` the
  answer; status ERROR a trial error; its duration the wall time.
- ``chat`` / ``text_completion`` / ``generate_content``: one model turn. ``gen_ai.output.messages``
  gives its text and requested calls (``tool_call`` parts); ``gen_ai.input.messages`` the prompt
  when the agent has none, and results (``tool_call_response`` parts) of calls no tool span
  recorded; ``gen_ai.usage.input_tokens``/``output_tokens`` its recorded usage.
- ``execute_tool``, MCP ``tools/call``, or a span with ``gen_ai.tool.name``: one call.
  ``gen_ai.tool.name`` (else the span name's tool: ``execute_tool NAME``, ``tools/call NAME``, the
  mcp SDK's ``MCP send tools/call NAME``), ``gen_ai.tool.call.id`` (else
  ``jsonrpc.request.id``), ``gen_ai.tool.call.arguments``/``result`` (JSON text or structured; an
  MCP CallToolResult's text), ``error.type`` or status ERROR; the server from ``mcp.server.name``
  or a ``mcp__SERVER__TOOL`` name. A call is an MCP call only on evidence, else the agent's own
  (built-in): ``otel_servers``. Spans inside a tool span (the MCP server's side of the call,
  a sub-agent run as a tool) belong to that call.

Before that, other instrumentations' attributes (OpenInference, OpenLLMetry's ``traceloop.*``,
openai-v2's log records) are rewritten in the conventions (``otel_dialects``), traces without an
agent span are joined into the conversations they belong to (``otel_group``), and calls are
marked MCP or built-in and those that name no server attributed (``otel_servers``). ``gen_ai.tool.definitions`` gives the offered tools;
``operation.cost``/``gen_ai.usage.cost``/``llm.cost.total`` a chat's recorded cost.

Also read: deprecated ``gen_ai.system``, ``gen_ai.usage.prompt_tokens``/``completion_tokens``,
``llm.request.type``, OpenLLMetry's ``gen_ai.prompt.N.*``/``gen_ai.completion.N.*``; and
``proctor.*`` (scenario, arm, model, epoch, final_answer, mcp.server, tool.builtin,
tokens_estimated) from
proctor's own export. The scenario is ``proctor.scenario``, else the user prompt (traces with one
prompt are epochs of one scenario); a trace of MCP calls and no prompt (the mcp SDK's spans alone)
is a trial without one (``otel_calls``). With ``suite``, scenarios and checks come from that suite,
matched by id or prompt, so the trials are scored as a run of it would be.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from proctor.scenarios.importers.chat_turns import number_epochs
from proctor.scenarios.importers.common import (
    ImportedCall,
    ImportedResult,
    ImportedSuite,
    ImportedTool,
    ImportedTrajectory,
    ImportedTurn,
    ImportFormatError,
    content_text,
    scenario_id,
    title_of,
)
from proctor.scenarios.importers.otel_calls import (
    calls_only,
    calls_only_note,
    calls_scenario,
    calls_scenario_id,
    only_server_arm,
    without_unrecorded_results,
)
from proctor.scenarios.importers.otel_dialects import normalize
from proctor.scenarios.importers.otel_group import group_conversations
from proctor.scenarios.importers.otel_messages import (
    IN,
    OUT,
    Messages,
    arguments_of,
    as_json,
    messages_of,
    parts_of,
    text_of,
)
from proctor.scenarios.importers.otel_servers import (
    arm_tools_of,
    attribute_servers,
    offer_locked_tools,
    offered_tools,
    span_attribution,
)
from proctor.scenarios.importers.otel_suite import (
    bare_suite,
    from_suite,
    import_notes,
    no_prompt_hint,
    prompt_id,
)
from proctor.scenarios.importers.otlp import TraceSpan, read_traces
from proctor.scenarios.importers.suite_files import validated
from proctor.scenarios.importers.tool_attribution import attribute_tool_call
from proctor.scenarios.loader import load_suite

Scrub = Callable[[str], str]
CHAT_OPS = frozenset({"chat", "text_completion", "generate_content", "completion"})  # last: llm.request.type
UNKNOWN_SERVER = "(server unknown)"  # an MCP call whose server the trace does not say
COST_KEYS = ("gen_ai.usage.cost", "operation.cost", "llm.cost.total", "gen_ai.usage.cost_usd")


def kind_of(s: TraceSpan) -> str | None:
    """``tool``, ``chat``, ``agent``, or None for a span the import does not read."""
    op = s.attrs.get("gen_ai.operation.name") or s.attrs.get("llm.request.type")
    if op == "execute_tool" or s.attrs.get("mcp.method.name") == "tools/call":
        return "tool"
    if op is None and "gen_ai.tool.name" in s.attrs:
        return "tool"
    return "chat" if op in CHAT_OPS else "agent" if op == "invoke_agent" else None


@dataclass
class _Turn:
    text: str = ""
    calls: dict[str, ImportedCall] = field(default_factory=dict)
    results: dict[str, ImportedResult] = field(default_factory=dict)
    tokens: tuple[int | None, int | None, bool] = (None, None, False)
    latency_s: float = 0.0
    ended: dict[str, int] = field(default_factory=dict)  # call id -> its span's end: results in that order
    cost_usd: float | None = None

    def frozen(self) -> ImportedTurn:
        results = sorted(self.results.values(), key=lambda r: self.ended.get(r.call_id, 1 << 64))
        return ImportedTurn(
            self.text, tuple(self.calls.values()), tuple(results), *self.tokens, self.latency_s, self.cost_usd
        )


def _mcp_calls_inside(spans: list[TraceSpan], by_id: dict[bytes, TraceSpan]) -> set[bytes]:
    """The tool spans with an MCP ``tools/call`` span somewhere below them."""
    out: set[bytes] = set()
    for s in spans:
        if s.attrs.get("mcp.method.name") != "tools/call":
            continue
        seen, parent = set(), s.span.parent_span_id
        while parent in by_id and parent not in seen:
            seen.add(parent)
            if kind_of(by_id[parent]) == "tool":
                out.add(parent)
            parent = by_id[parent].span.parent_span_id
    return out


# -- one trace, one trial ------------------------------------------------------------------


def _tokens(s: TraceSpan, *keys: str) -> int | None:
    key = next((k for k in keys if s.attrs.get(k) is not None), keys[0])
    v = s.attrs.get(key)
    if v is not None and (isinstance(v, bool) or not isinstance(v, int | float) or v < 0):
        raise ImportFormatError(f"{s.where}, attribute '{key}': expected a whole number of tokens, got {v!r}")
    return None if v is None else int(v)


def _tool(s: TraceSpan, mcp_inside: bool) -> tuple[ImportedCall, ImportedResult, bool]:
    """The call, its result, and whether the span recorded the arguments."""
    a = s.attrs
    name = str(a.get("gen_ai.tool.name") or a.get("mcp.tool.name") or _named_tool(s.span.name))
    if not name:
        raise ImportFormatError(
            f"{s.where}: a tool call (gen_ai.operation.name execute_tool, or mcp.method.name tools/call) "
            "without attribute 'gen_ai.tool.name' nor the tool in its name ('tools/call NAME'); set "
            "gen_ai.tool.name to the name of the tool called"
        )
    who = span_attribution(s, name, mcp_inside)
    server, name = who.server, who.tool
    call_id = str(a.get("gen_ai.tool.call.id") or a.get("jsonrpc.request.id") or s.span.span_id.hex())
    raw = a.get("gen_ai.tool.call.result")
    is_error = s.failed or (isinstance(raw, dict) and raw.get("isError") is True)
    raw = _blocks(raw)
    content = as_json(raw) if raw is not None else (s.span.status.message if is_error else "")
    args = a.get("gen_ai.tool.call.arguments")
    call = ImportedCall(call_id, server, name, arguments_of(args), who.builtin)
    result = ImportedResult(call_id, server, name, content, is_error, s.seconds, who.builtin)
    return call, result, args is not None


def _blocks(raw: Any) -> Any:
    """An MCP CallToolResult or its content blocks (JSON text or structured) as their text."""
    if isinstance(raw, str) and raw.lstrip().startswith(("{", "[")):
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            return raw
        return raw if _blocks(parsed) is parsed else _blocks(parsed)
    if isinstance(raw, dict) and isinstance(raw.get("content"), list):
        return content_text(raw["content"])
    if isinstance(raw, dict) and raw.get("type") == "text" and isinstance(raw.get("text"), str):
        return raw["text"]  # one block, as openai-agents records it
    if isinstance(raw, list) and raw and all(isinstance(b, dict) and b.get("type") == "text" for b in raw):
        return content_text(raw)
    return raw


def _named_tool(span_name: str) -> str:
    """The tool of ``execute_tool NAME``, ``tools/call NAME`` or the mcp SDK's ``MCP send tools/call NAME``."""
    words = span_name.split()
    for marker in ("tools/call", "execute_tool"):
        if marker in words[:-1]:
            return " ".join(words[words.index(marker) + 1 :])
    return ""


def _inside_tool(s: TraceSpan, by_id: dict[bytes, TraceSpan]) -> bool:
    seen, parent = set(), s.span.parent_span_id
    while parent in by_id and parent not in seen:
        seen.add(parent)
        if kind_of(by_id[parent]) == "tool":
            return True
        parent = by_id[parent].span.parent_span_id
    return False


def _model(a: dict[str, Any]) -> str:
    name = a.get("gen_ai.request.model") or a.get("gen_ai.response.model")
    return f"{a.get('gen_ai.provider.name') or a.get('gen_ai.system') or 'imported'}:{name}" if name else ""


def _cost(s: TraceSpan) -> float | None:
    value: object = next((s.attrs[k] for k in COST_KEYS if k in s.attrs), None)
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def _chat_turn(s: TraceSpan, outputs: Messages) -> _Turn:
    tokens = (
        _tokens(s, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"),
        _tokens(s, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"),
        s.attrs.get("proctor.tokens_estimated") is True,
    )
    turn = _Turn(text_of(outputs, "assistant"), tokens=tokens, latency_s=s.seconds, cost_usd=_cost(s))
    asked = [p for m in outputs if m.get("role") == "assistant" for p in parts_of(m, "tool_call")]
    for i, p in enumerate(asked):
        call_id = str(p.get("id") or f"{s.span.span_id.hex()}-{i}")
        who = attribute_tool_call(str(p.get("name") or ""))
        turn.calls[call_id] = ImportedCall(
            call_id, who.server, who.tool, arguments_of(p.get("arguments")), who.builtin
        )
    return turn


def _turns(steps: list[TraceSpan], unreadable: list[str], mcp_inside: set[bytes]) -> tuple[list[_Turn], str]:
    """The model turns, each with its calls and results, and the first user prompt seen."""
    turns: list[_Turn] = []
    requested: dict[str, _Turn] = {}
    responses: dict[str, str] = {}
    prompt = ""
    for s in steps:
        if kind_of(s) == "chat":
            inputs = messages_of(s, IN, unreadable)
            prompt = prompt or text_of(inputs, "user", first=True)
            for p in (p for m in inputs for p in parts_of(m, "tool_call_response")):
                responses[str(p.get("id"))] = as_json(p.get("response", p.get("result", "")))
            turns.append(_chat_turn(s, messages_of(s, OUT, unreadable)))
            requested |= dict.fromkeys(turns[-1].calls, turns[-1])
            continue
        call, result, recorded = _tool(s, s.span.span_id in mcp_inside)
        if not turns:
            turns.append(_Turn())
        owner = requested.get(call.call_id, turns[-1])
        # A span without the model's call id (an MCP client span has the JSON-RPC id): the turn's
        # first unanswered call of that tool.
        pending = (c for c in owner.calls.values() if c.tool == call.tool and c.call_id not in owner.results)
        asked = owner.calls.get(call.call_id) or next(pending, None)
        if asked is not None:
            call, result = replace(call, call_id=asked.call_id), replace(result, call_id=asked.call_id)
        owner.calls[call.call_id] = (
            call if recorded or not asked else replace(call, arguments=asked.arguments)
        )
        owner.results[call.call_id], owner.ended[call.call_id] = result, s.span.end_time_unix_nano
    for turn in turns:
        for call_id, c in turn.calls.items():
            known = turn.results.get(call_id)
            if call_id in responses and (known is None or not known.content):  # an MCP span has no result
                kept = known or ImportedResult(call_id, c.server, c.tool, "", builtin=c.builtin)
                turn.results[call_id] = replace(kept, content=responses[call_id])
    return turns, prompt


def _trial(
    spans: list[TraceSpan], scrub: Scrub, unreadable: list[str]
) -> tuple[ImportedTrajectory, str] | None:
    """The trace as a trajectory (scenario: ``proctor.scenario`` or "") and its user prompt."""
    spans.sort(key=lambda s: (s.span.start_time_unix_nano, -s.span.end_time_unix_nano))
    by_id = {s.span.span_id: s for s in spans}  # grouped traces: each chat a root, the first the agent
    steps = [s for s in spans if kind_of(s) in ("chat", "tool") and not _inside_tool(s, by_id)]
    agents = [s for s in spans if kind_of(s) == "agent"]
    if not steps and not agents:
        return None
    agent = agents[0] if agents else next((s for s in spans if s.span.parent_span_id not in by_id), spans[0])
    a = agent.attrs
    turns, prompt = _turns(steps, unreadable, _mcp_calls_inside(spans, by_id))

    def said(which: tuple[str, str]) -> Messages:  # a chat standing in for the agent says no answer
        return messages_of(agent, which, unreadable) if agents else []

    prompt = text_of(said(IN), "user", first=True) or prompt
    answered = [t.text for t in turns if t.text and not t.calls]
    final = str(a.get("proctor.final_answer") or text_of(said(OUT), "assistant"))
    final = final or (answered[-1] if answered else "")
    if final and turns and not turns[-1].calls and not turns[-1].text:
        turns[-1].text = final  # the answering turn's text (proctor's export records only the answer)
    servers = sorted(
        {c.server for t in turns for c in t.calls.values() if c.server and c.builtin is not True}
    )
    chat = next((s.attrs for s in steps if kind_of(s) == "chat"), {})
    wall = (max(s.span.end_time_unix_nano for s in spans) - spans[0].span.start_time_unix_nano) / 1e9
    error = (agent.span.status.message or str(a.get("error.type") or "") or "error") if agent.failed else ""
    epoch = a.get("proctor.epoch")
    trajectory = ImportedTrajectory(
        scenario=scrub(str(a.get("proctor.scenario") or "")),
        arm=scrub(str(a.get("proctor.arm") or a.get("gen_ai.agent.name") or "+".join(servers) or "otel")),
        model=scrub(str(a.get("proctor.model") or _model(a) or _model(chat) or "imported:unknown")),
        epoch=epoch if isinstance(epoch, int) and epoch >= 0 else -1,  # -1: numbered in trace order
        turns=tuple(t.frozen() for t in turns),
        final_answer=final,
        origin=agent.where.rpartition(", span")[0],
        wall_s=agent.seconds if agents else max(0.0, wall),
        error=error,
        tools=offered_tools(spans),
    )
    return trajectory, scrub(prompt)


# -- the file ------------------------------------------------------------------------------


def _grouped(path: Path, logs: Path | None) -> tuple[list[list[TraceSpan]], list[str]]:
    """The file's traces, in the conventions (``otel_dialects``), conversations joined (``otel_group``)."""
    traces = list(read_traces(path, logs))
    for s in (s for t in traces for s in t):
        normalize(s)
    grouped = group_conversations(traces, kind_of, lambda s, d: messages_of(s, IN if d == "in" else OUT, []))
    notes = []
    joined = [n for g in grouped.traces if (n := len({s.span.trace_id for s in g})) > 1]
    if joined:
        notes.append(
            f"{sum(joined)} traces without an agent span were joined into {len(joined)} conversation(s) "
            "by their conversation or session ids, span links and the tool-call ids one chat answers"
        )
    if grouped.guessed:
        notes.append(
            f"guessed: {grouped.guessed} trace(s) holding only a tool call were put in the conversation whose "
            "latest chat before them asked for that tool (nothing in them names their conversation); record an "
            "agent span around each run (invoke_agent) to make this certain"
        )
    return grouped.traces, notes


def read_otel(
    path: Path,
    *,
    scrub: Scrub,
    suite: Path | None = None,
    logs: Path | None = None,
    server_tools: Mapping[str, Sequence[ImportedTool]] | None = None,
) -> ImportedSuite:
    """Every GenAI trace (or conversation of traces) in ``path`` as a trial, log records of ``path``
    or ``logs`` read with their spans; ``scrub`` redacts the text bound for suite files.
    ``server_tools``: the tools each of the suite's servers lists (its tools lock): a call of one
    of them is an MCP call, and a trace that records no tool list offered its arm's."""
    unreadable: list[str] = []
    traces, group_notes = _grouped(path, logs)
    logged = any(s.logs for t in traces for s in t)
    read = [_trial(spans, scrub, unreadable) for spans in traces]
    trials = sorted((t for t in read if t is not None), key=lambda t: t[0].epoch)  # stable: trace order
    if not trials:
        raise ImportFormatError(
            f"{path}: no GenAI traces (no span has gen_ai.operation.name invoke_agent, chat or execute_tool, "
            "nor mcp.method.name tools/call); record the agent with an OpenTelemetry GenAI instrumentation"
        )
    loaded = load_suite(suite) if suite is not None else None
    known = {sc.id for sc in loaded.scenarios} if loaded else set()
    by_prompt = {" ".join(sc.prompt.split()): sc.id for sc in loaded.scenarios if sc.prompt} if loaded else {}
    scenarios: dict[str, tuple[str, dict[str, Any]]] = {}
    trajectories: list[ImportedTrajectory] = []
    counts = {"skipped": read.count(None), "no_prompt": 0, "unmatched": 0, "calls_only": 0}
    for t, prompt in trials:
        sid = t.scenario if t.scenario in known else by_prompt.get(" ".join(prompt.split()), "")
        if loaded is not None and sid:
            scenarios.setdefault(sid, (t.origin, from_suite(loaded, sid, path)))
        elif not prompt and not t.scenario and not calls_only(t):
            raise ImportFormatError(no_prompt_hint(t.origin, logged))
        elif not prompt and not t.scenario:  # MCP client spans alone: a recording of calls, no prompt
            sid = calls_scenario_id(t)
            counts["calls_only"] += 1
            scenarios.setdefault(sid, (t.origin, calls_scenario(sid, t)))
            t = without_unrecorded_results(t)
            if loaded is not None and t.arm not in loaded.suite.arms:
                t = replace(t, arm=only_server_arm(loaded, t.arm))
        else:
            sid = scenario_id(t.scenario) if t.scenario else prompt_id(prompt)
            counts["no_prompt"] += sid not in scenarios and not prompt
            counts["unmatched"] += loaded is not None
            text = prompt or f"(the traces record no prompt; proctor scenario {sid})"
            scenario = {"id": sid, "title": title_of(prompt or sid), "prompt": text}
            scenarios.setdefault(sid, (t.origin, scenario))
        trajectories.append(replace(t, scenario=sid))
    suite_data = from_suite(loaded, None, path) if loaded is not None else bare_suite(path)
    arm_servers = {name: arm.servers for name, arm in loaded.suite.arms.items()} if loaded else {}
    arm_tools = arm_tools_of(loaded, server_tools or {}) if loaded else {}
    lock_notes: list[str] = []
    if loaded is not None and server_tools:
        trajectories, lock_notes = offer_locked_tools(trajectories, loaded, server_tools)
    trajectories, server_notes = attribute_servers(trajectories, arm_servers, arm_tools)
    sources = [path, *([logs] if logs is not None else []), *([suite] if suite is not None else [])]
    calls = counts.pop("calls_only")
    notes = [*import_notes(path, suite, counts, unreadable), *group_notes, *lock_notes, *server_notes]
    notes += [calls_only_note(calls)] if calls else []
    found = list(scenarios.values())
    return validated(
        "otel", sources, suite_data, found, trajectories=number_epochs(trajectories), notes=notes
    )


__all__ = ["kind_of", "read_otel"]
