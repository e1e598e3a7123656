"""A trial digest: a trial's events split into what the agent *said* and what its tools did.

Only assistant prose is scored (DESIGN §5): a tool call ``grep("TopicCreator")`` must never
count as the answer mentioning ``TopicCreator``. Tool inputs and outputs go to ``audit_text``,
which key-point checks and diagnostics may read but keyword, claim and citation scoring never do.

Rules, in order:

* Only the last attempt counts: events before the last ``TrialStarted`` belong to an abandoned
  attempt and are skipped.
* ``answer_text`` is the text of every ``AssistantMessage`` and the ``FinalAnswer``. A final
  answer identical to the last assistant message is not added twice (so a citation is not
  counted twice). If the trial has no ``AssistantMessage`` at all, ``ModelResponse.text`` is
  used instead, and ``TrialFinished.final_answer`` stands in for a missing ``FinalAnswer``.
* A tool call's *step* is the model turn that requested it (calls requested in one model
  response are parallel); calls with no known turn each form their own step.
* A call is built-in (``ToolCallRecord.builtin``) as its event's marker says
  (``store.tool_origin.is_builtin``); ``mcp_call_steps`` leaves built-in calls out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from proctor.store.events import (
    AssistantMessage,
    ErrorEvent,
    Event,
    FinalAnswer,
    ModelResponse,
    ToolCall,
    ToolResult,
    TrialFinished,
    TrialStarted,
)
from proctor.store.tool_origin import is_builtin


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call with its result (``has_result`` is False if no result was recorded).
    ``builtin``: the agent's own tool or proctor's, not an MCP server's (``store.tool_origin``)."""

    call_id: str
    server: str
    tool: str
    arguments: Mapping[str, Any]
    step: int
    has_result: bool = False
    is_error: bool = False
    error_type: str = ""
    result: str = ""
    structured: Mapping[str, Any] | None = None
    builtin: bool = False

    @property
    def succeeded(self) -> bool:
        return self.has_result and not self.is_error


@dataclass(frozen=True)
class TrialDigest:
    """What scoring sees of a trial: its events, partitioned.

    ``tokens`` and ``wall_s`` are None when not recorded.
    """

    answer_text: str
    audit_text: str
    final_answer: str
    tool_calls: tuple[ToolCallRecord, ...] = ()
    errors: tuple[str, ...] = ()
    stop: str = ""
    tokens: int | None = None
    tokens_estimated: bool = False
    wall_s: float | None = None
    answer_segments: tuple[str, ...] = field(default=(), repr=False)

    def call_steps(self) -> list[list[ToolCallRecord]]:
        """Tool calls grouped into steps, in step order (calls in a step are parallel)."""
        steps: dict[int, list[ToolCallRecord]] = {}
        for call in self.tool_calls:
            steps.setdefault(call.step, []).append(call)
        return [steps[k] for k in sorted(steps)]

    def mcp_call_steps(self) -> list[list[ToolCallRecord]]:
        """``call_steps`` of the MCP calls only: what gold calls (always MCP calls) are matched
        against, so an agent's own Read or grep is never an unexpected call."""
        return [mcp for step in self.call_steps() if (mcp := [c for c in step if not c.builtin])]


def render_call(tool: str, arguments: Mapping[str, Any]) -> str:
    """How a call appears in ``audit_text``: ``tool({json arguments})``."""
    try:
        args = json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        args = repr(dict(arguments))
    return f"{tool}({args})"


def _last_attempt(events: Iterable[Event]) -> list[Event]:
    out: list[Event] = []
    for ev in events:
        if isinstance(ev, TrialStarted):
            out = []
        out.append(ev)
    return out


def partition(events: Iterable[Event]) -> TrialDigest:
    """Partition one trial's events (in recorded order) into answer, audit and tool calls."""
    evs = _last_attempt(events)
    has_assistant_messages = any(isinstance(e, AssistantMessage) for e in evs)
    segments: list[str] = []
    audit: list[str] = []
    errors: list[str] = []
    final: str | None = None
    finished: TrialFinished | None = None
    response_tokens = 0
    response_estimated = False
    saw_response = False

    turn_of_call: dict[str, int] = {}
    current_step = -1
    order: list[str] = []
    calls: dict[str, dict[str, Any]] = {}
    anonymous = 0

    for ev in evs:
        if isinstance(ev, AssistantMessage):
            if ev.text.strip():
                segments.append(ev.text)
        elif isinstance(ev, ModelResponse):
            saw_response = True
            response_tokens += ev.usage.input_tokens + ev.usage.output_tokens
            response_estimated = response_estimated or ev.usage.estimated
            current_step += 1
            for req in ev.tool_calls:
                turn_of_call.setdefault(req.call_id, current_step)
            if not has_assistant_messages and ev.text.strip():
                segments.append(ev.text)
        elif isinstance(ev, FinalAnswer):
            final = ev.text
        elif isinstance(ev, ToolCall):
            key = ev.call_id
            if not key or key in calls:
                anonymous += 1
                key = f"{ev.call_id}\x00{anonymous}"
            step = turn_of_call.get(ev.call_id)
            calls[key] = {
                "call_id": ev.call_id,
                "server": ev.server,
                "tool": ev.tool,
                "arguments": dict(ev.arguments),
                "step": step,
                "builtin": is_builtin(ev),
            }
            order.append(key)
            audit.append(f"[tool call] {ev.server}/{render_call(ev.tool, ev.arguments)}")
        elif isinstance(ev, ToolResult):
            for key in reversed(order):
                rec = calls[key]
                if rec["call_id"] == ev.call_id and "has_result" not in rec:
                    rec |= {
                        "has_result": True,
                        "is_error": ev.is_error,
                        "error_type": ev.error_type,
                        "result": ev.content,
                        "structured": ev.structured,
                    }
                    break
            label = "tool error" if ev.is_error else "tool result"
            audit.append(f"[{label}] {ev.server}/{ev.tool}: {ev.content}")
        elif isinstance(ev, ErrorEvent):
            errors.append(f"{ev.where}: {ev.error_type}: {ev.message}")
            audit.append(f"[error] {ev.where}: {ev.error_type}: {ev.message}")
        elif isinstance(ev, TrialFinished):
            finished = ev

    if final is None and finished is not None and finished.final_answer:
        final = finished.final_answer
    if final is not None and final.strip() and (not segments or segments[-1].strip() != final.strip()):
        segments.append(final)

    records = _number_steps([calls[k] for k in order])
    tokens: int | None = None
    estimated = False
    if finished is not None:
        tokens = finished.usage.input_tokens + finished.usage.output_tokens
        estimated = finished.usage.estimated
    elif saw_response:
        tokens, estimated = response_tokens, response_estimated

    return TrialDigest(
        answer_text="\n\n".join(segments),
        audit_text="\n".join(audit),
        final_answer=final or "",
        tool_calls=tuple(records),
        errors=tuple(errors),
        stop=finished.stop if finished is not None else "",
        tokens=tokens,
        tokens_estimated=estimated,
        wall_s=finished.wall_s if finished is not None else None,
        answer_segments=tuple(segments),
    )


def _number_steps(raw: list[dict[str, Any]]) -> list[ToolCallRecord]:
    """Renumber steps 0..n-1 in first-seen order; calls without a known turn get their own step."""
    renumber: dict[tuple[str, int], int] = {}
    out: list[ToolCallRecord] = []
    for i, rec in enumerate(raw):
        turn = rec.pop("step")
        key = ("turn", turn) if turn is not None else ("solo", i)
        step = renumber.setdefault(key, len(renumber))
        out.append(ToolCallRecord(step=step, **rec))
    return out
