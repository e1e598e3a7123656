"""One trial's transcript, folded from its stored events (initial load, then the live tail).

The initial load and the tail overlap in time: tail events that arrive while the load is in
flight are buffered and applied after it, and event ids make each event count once. A new
attempt (a re-run) starts the transcript over. Text is sanitized here, once per event.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import assert_never

from proctor.app.views.call_view import notice_title, server_line
from proctor.engine.scoring.result_checks import disguised_error
from proctor.store.events import (
    AgentBrief,
    AssistantMessage,
    ErrorEvent,
    Event,
    FinalAnswer,
    Judged,
    ListedTool,
    McpNotice,
    ModelReasoning,
    ModelRequest,
    ModelResponse,
    OperatorCommand,
    RunFinished,
    RunStarted,
    Scored,
    ServerConnected,
    ServerLog,
    ServersStarting,
    ToolCall,
    ToolRecall,
    ToolResult,
    ToolsListed,
    TrialFinished,
    TrialStarted,
)
from proctor.store.read.reader import StoredEvent
from proctor.store.tool_origin import is_builtin
from proctor.widgets.sanitize import one_line, sanitize
from proctor.widgets.transcript_model import EntryKind, TranscriptEntry, pretty_arguments

# Bodies above this are kept raw and cleaned only where shown: cleaning 30 MB takes ~0.1-0.3 s,
# which on the event loop would hold every key press behind it.
EAGER_SANITIZE_CHARS = 256 * 1024
DISGUISED_MARK = " · ⚠ reads like an error (isError false)"


@dataclass
class CallView:
    """A tool call and its result, for step alignment in the compare view."""

    call_id: str
    server: str
    tool: str
    arguments: str
    result: str | None = None
    is_error: bool = False
    result_server: str = ""  # who answered, and under the tool's own name (not the exposed one)
    result_tool: str = ""
    builtin: bool = False  # the call, then its result, was the agent's own or proctor's: not MCP
    result_builtin: bool = False


def _where(ev: ToolCall | ToolResult) -> str:
    """``server/tool`` of an MCP call; a built-in one says so (its server is only a label)."""
    return f"{ev.tool} (built-in)" if is_builtin(ev) else f"{ev.server}/{ev.tool}"


def _usd(value: float | None) -> str:
    return "cost n/a (unpriced)" if value is None else f"${value:.4f}"


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else (f"{n / 1024:.1f} KB" if n < 1024 * 1024 else f"{n / 1048576:.1f} MB")


class TranscriptState:
    def __init__(self, trial_id: int) -> None:
        self.trial_id = trial_id
        self.attempt: int | None = None
        self.entries: list[TranscriptEntry] = []
        self.calls: list[CallView] = []
        self.final_answer: str | None = None
        self.loaded = False
        self.last_id = 0
        self.version = 0
        self.failing_call_id = ""
        self._pending_new = 0
        self._buffer: list[StoredEvent] = []
        self._prose_turn: dict[int, int] = {}
        self._calls_by_id: dict[str, CallView] = {}
        self._uids = 0
        self.texts: dict[str, str] = {}  # stored texts by hash (the system prompt), read with the trial
        self.offered: dict[str, ListedTool] = {}  # the tools offered to the model, by name

    # -- input --------------------------------------------------------------------------------

    def load(self, events: Iterable[StoredEvent], texts: Mapping[str, str] | None = None) -> None:
        self.texts.update(texts or {})
        self.loaded = True
        self._apply(events)
        buffered, self._buffer = self._buffer, []
        self._apply(buffered)
        self._pending_new = 0

    def feed(self, events: Iterable[StoredEvent]) -> None:
        """Tail events of any trial; only this trial's are kept."""
        mine = [e for e in events if e.trial_id == self.trial_id]
        if not mine:
            return
        if self.loaded:
            self._apply(mine)
        else:
            self._buffer.extend(mine)

    def call(self, call_id: str) -> CallView | None:
        return self._calls_by_id.get(call_id)

    def take_new(self) -> int:
        n, self._pending_new = self._pending_new, 0
        return n

    def mark_failing(self, call_id: str) -> None:
        if call_id == self.failing_call_id:
            return
        self.failing_call_id = call_id
        for entry in self.entries:
            failing = bool(call_id) and entry.call_id == call_id
            if entry.failing != failing:
                entry.failing = failing
                entry.version += 1
        self.version += 1

    def _apply(self, events: Iterable[StoredEvent]) -> None:
        for stored in events:
            if stored.id <= self.last_id:
                continue
            if self.attempt is not None and stored.attempt < self.attempt:
                continue
            if (
                isinstance(stored.event, TrialStarted)
                and self.attempt is not None
                and stored.attempt > self.attempt
            ):
                self._reset()
            self.attempt = stored.attempt if self.attempt is None else max(self.attempt, stored.attempt)
            self.last_id = stored.id
            self._pending_new += 1
            self._fold(stored.id, stored.event)
            self.version += 1

    def _reset(self) -> None:
        self.entries = []
        self.calls = []
        self.final_answer = None
        self._prose_turn = {}
        self._calls_by_id = {}

    # -- folding ------------------------------------------------------------------------------

    def _add(
        self,
        kind: EntryKind,
        event_id: int,
        title: str,
        body: str = "",
        *,
        call_id: str = "",
        is_error: bool = False,
        line_count: int = -1,
    ) -> TranscriptEntry:
        """``line_count``: the body's lines when the caller has counted them (a large result)."""
        raw = len(body) > EAGER_SANITIZE_CHARS
        entry = TranscriptEntry(
            kind,
            event_id,
            one_line(title, 200),
            body if raw else sanitize(body),
            call_id,
            is_error,
            raw=raw,
            line_count=line_count,
        )
        self._uids += 1
        entry.uid = self._uids
        if entry.call_id and entry.call_id == self.failing_call_id:
            entry.failing = True
        self.entries.append(entry)
        return entry

    def _fold(self, event_id: int, ev: Event) -> None:
        match ev:
            case TrialStarted():
                self._add(
                    "meta",
                    event_id,
                    f"attempt {ev.attempt} · {ev.scenario} / {ev.arm} / {ev.model} · epoch {ev.epoch} · seed {ev.seed}",
                )
            case AgentBrief():
                self._brief(event_id, ev)
            case ToolsListed():
                self._offered(event_id, ev)
            case ModelRequest():
                self._add("meta", event_id, f"→ turn {ev.turn}: {ev.messages} messages, {ev.tools} tools")
            case ModelResponse():
                u = ev.usage
                est = " (estimated)" if u.estimated else ""
                retries = f" · {ev.retries} retries" if ev.retries else ""
                self._add(
                    "meta",
                    event_id,
                    f"← turn {ev.turn} {ev.model}: in {u.input_tokens:,} (tool_io {ev.tool_io_tokens:,}) "
                    f"out {u.output_tokens:,}{est} · {_usd(ev.cost_usd)} · {ev.latency_s:.2f}s · {ev.stop_reason}{retries}",
                )
                if ev.text.strip():
                    self._prose(event_id, ev.turn, ev.text)
            case ModelReasoning():
                tokens = f" · {ev.tokens:,} tokens" if ev.tokens is not None else ""
                what = "redacted by the API" if ev.redacted else f"{len(ev.text):,} chars"
                self._add(
                    "reasoning",
                    event_id,
                    f"reasoning · turn {ev.turn} · {ev.source} · {what}{tokens}",
                    ev.text,
                )
            case AssistantMessage():
                index = self._prose_turn.get(ev.turn)
                if index is None or self.entries[index].body != sanitize(ev.text):
                    self._prose(event_id, ev.turn, ev.text)
            case ToolCall():
                view = CallView(
                    ev.call_id,
                    ev.server,
                    ev.tool,
                    json.dumps(ev.arguments, sort_keys=True, default=str),
                    builtin=is_builtin(ev),
                )
                self._calls_by_id[ev.call_id] = view
                self.calls.append(view)
                self._add(
                    "tool_call",
                    event_id,
                    f"call {_where(ev)} #{ev.call_id}",
                    pretty_arguments(ev.arguments),
                    call_id=ev.call_id,
                )
            case ToolResult():
                self._result(event_id, ev)
            case FinalAnswer():
                self._final(event_id, ev.text)
            case ErrorEvent():
                fatal = " (fatal)" if ev.fatal else ""
                self._add(
                    "error",
                    event_id,
                    f"error in {ev.where}: {ev.error_type}{fatal}",
                    ev.message,
                    is_error=True,
                )
            case ServerLog():
                self._add("log", event_id, f"[{ev.server}] {ev.line}")
            case McpNotice():
                self._add("log", event_id, notice_title(ev), ev.message, call_id=ev.call_id)
            case ServerConnected():
                self._add("context", event_id, server_line(ev), ev.instructions)
            case TrialFinished():
                if self.final_answer is None and ev.final_answer:
                    self._final(event_id, ev.final_answer)
                u = ev.usage
                self._add(
                    "meta",
                    event_id,
                    f"trial {ev.status} · stop {ev.stop} · {ev.tool_calls} tool calls · in {u.input_tokens:,} "
                    f"out {u.output_tokens:,} · {_usd(ev.cost_usd)} · {ev.wall_s:.1f}s",
                )
                if ev.error:
                    self._add("error", event_id, "trial error", ev.error, is_error=True)
            case (
                RunStarted()
                | ServersStarting()
                | RunFinished()
                | OperatorCommand()
                | ToolRecall()
                | Scored()
                | Judged()
            ):
                pass  # run-level or scoring events: the trial screen shows them elsewhere
            case _:
                assert_never(ev)

    def _brief(self, event_id: int, ev: AgentBrief) -> None:
        params = ", ".join(
            f"{k} {'API default' if v is None else v}"
            for k, v in sorted(ev.parameters.items())
            if k != "adapted"
        )
        adapted = [str(a) for a in ev.parameters.get("adapted") or []]
        system = self.texts.get(ev.system_prompt_sha256)
        shown = system if system is not None else f"(stored in the run database as {ev.system_prompt_sha256})"
        asked = "\n\n".join(
            f"── user prompt {i} ──\n{p}" if len(ev.prompts) > 1 else f"── user prompt ──\n{p}"
            for i, p in enumerate(ev.prompts, 1)
        )
        self._add(
            "context",
            event_id,
            f"asked {ev.model} · {params or 'no parameters'} · system prompt {ev.system_prompt_chars:,} chars "
            f"· {len(ev.prompts)} prompt(s)",
            f"{asked}\n\n── system prompt ({ev.system_prompt_sha256[:12]}) ──\n{shown}",
        )
        if adapted:  # what was changed so the model's API would take the request
            self._add(
                "context", event_id, f"adapted for the API: {len(adapted)} change(s)", "\n".join(adapted)
            )

    def _offered(self, event_id: int, ev: ToolsListed) -> None:
        self.offered = {t.name: t for t in ev.tools}
        names = ", ".join(t.name for t in ev.tools) or "none"
        body = "\n\n".join(
            f"{t.name}  ({'built-in' if is_builtin(t) or not t.server else t.server})"
            + (f"  sent to the model as {t.sent_as}" if t.sent_as else "")
            + f"\n{t.description}\n"
            + json.dumps(t.input_schema, indent=2, sort_keys=True, default=str)
            for t in ev.tools
        )
        self._add("context", event_id, f"offered {len(ev.tools)} tools: {names}", body)

    def _prose(self, event_id: int, turn: int, text: str) -> None:
        self._prose_turn[turn] = len(self.entries)
        self._add("prose", event_id, f"assistant · turn {turn}", text)

    def _final(self, event_id: int, text: str) -> None:
        self.final_answer = text
        clean = sanitize(text)
        last_prose = next((e for e in reversed(self.entries) if e.kind in ("prose", "final")), None)
        if last_prose is not None and last_prose.body == clean:
            last_prose.kind = "final"
            last_prose.title = "final answer"
            last_prose.version += 1
            return
        self._add("final", event_id, "final answer", text)

    def _result(self, event_id: int, ev: ToolResult) -> None:
        lines = ev.content.count("\n") + 1 if ev.content else 0
        err = f" · ERROR {ev.error_type}".rstrip() if ev.is_error else ""
        if not ev.is_error and disguised_error(ev.content, ev.structured) is not None:
            err = DISGUISED_MARK
        kinds = Counter(b.type for b in ev.blocks if b.type != "text")
        blocks = "".join(f" · {n} {kind.replace('_', ' ')}" for kind, n in sorted(kinds.items()))
        body, body_lines = ev.content, lines
        if ev.structured is not None and any(b.type == "text" for b in ev.blocks):
            structured = json.dumps(ev.structured, indent=2, default=str)
            body += "\n── structuredContent ──\n" + structured
            body_lines = body.count("\n") + 1
        entry = self._add(
            "tool_result",
            event_id,
            f"result {_where(ev)} #{ev.call_id} · {lines:,} lines · {_size(len(ev.content))} · "
            f"{ev.latency_s * 1000:.0f} ms{blocks}{err}",
            body,
            call_id=ev.call_id,
            is_error=ev.is_error,
            line_count=body_lines,
        )
        view = self._calls_by_id.get(ev.call_id)
        if view is not None:
            view.result = entry.body  # raw when large: compare cleans the lines it shows
            view.is_error = ev.is_error
            view.result_server, view.result_tool = ev.server, ev.tool
            view.result_builtin = is_builtin(ev)


__all__ = ["CallView", "TranscriptState"]
