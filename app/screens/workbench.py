"""The tool workbench: call a trial's tool again by hand, with other arguments, and see everything.

Opened with ``w`` on a tool call in the trial view. The arguments start as the agent sent them;
they are checked as JSON and against the tool's input schema before anything is sent. The call
itself is an operator command: the engine serving the run makes it on the same server at the
same pinned commit and records a run-level ``tool_recall`` event (never part of the trial's
transcript or scores); this screen shows the result as proctor records it, the notices, and the
raw JSON-RPC result. ``ctrl+y`` copies the result (OSC 52, through the terminal).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Static, TextArea

from proctor.app.screens.base import ProctorScreen
from proctor.app.views.call_view import result_lines
from proctor.app.views.transcript_state import CallView
from proctor.scenarios.skeleton import schema_problems
from proctor.store.events import ListedTool, OperatorCommand, ToolRecall
from proctor.store.read.reader import StoredEvent
from proctor.widgets.key_bar import KeyBar
from proctor.widgets.lines_view import LinesView, wrap_texts
from proctor.widgets.sanitize import one_line, sanitize


@dataclass(frozen=True)
class ToolTarget:
    """What to call: the trial, the server that answered, the tool's own name, its schema."""

    trial_id: int
    server: str
    tool: str
    arguments: dict[str, Any]
    input_schema: dict[str, Any] | None


ROUTER = "proctor-router"


def tool_target(trial_id: int, call: CallView, offered: Mapping[str, ListedTool]) -> ToolTarget | None:
    """The MCP call behind a transcript call (unwrapping the retrieval router), or None for
    tools that are not MCP (the baseline's built-ins) or a call whose result never came."""
    try:
        arguments = json.loads(call.arguments)
    except json.JSONDecodeError:
        return None
    tool, server = call.result_tool or call.tool, call.result_server
    if call.server == ROUTER and call.tool == "execute" and isinstance(arguments, dict):
        tool, arguments = str(arguments.get("tool", "")), arguments.get("arguments", {})
    if not server or call.result_builtin or not isinstance(arguments, dict):
        return None
    listed = offered.get(call.tool if call.server != ROUTER else tool) or offered.get(tool)
    return ToolTarget(trial_id, server, tool, arguments, dict(listed.input_schema) if listed else None)


def parse_arguments(text: str, schema: dict[str, Any] | None) -> tuple[dict[str, Any] | None, list[str]]:
    """The arguments, or why they cannot be sent (not JSON, not an object, rejected by the schema)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, [f"arguments: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"]
    if not isinstance(value, dict):
        return None, ['arguments: give a JSON object, e.g. {"path": "README.md"}']
    problems = schema_problems(value, schema) if schema is not None else []
    return (None, [f"schema: {p}" for p in problems]) if problems else (value, [])


def recall_lines(event: ToolRecall) -> list[Text]:
    """The recorded result, the notices, then the raw JSON-RPC result; all sanitized text."""
    out = result_lines(event.result, event.notices)
    out.append(Text("── raw JSON-RPC result ──", style="bold"))
    raw = json.dumps(event.raw, indent=2, ensure_ascii=False) if event.raw is not None else "(not kept)"
    out += [Text(x) for x in sanitize(raw).split("\n")]
    return out


class WorkbenchScreen(ProctorScreen):
    DEFAULT_CSS = """
    #workbench-args { height: 9; }
    #workbench-result { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "call", "Call the tool"),
        Binding("ctrl+y", "copy", "Copy result"),
        Binding("ctrl+r", "reset", "Reset arguments"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, target: ToolTarget) -> None:
        super().__init__()
        self.target = target
        self.request_id = ""
        self.recall: ToolRecall | None = None
        self.failure = ""

    def compose(self) -> ComposeResult:
        t = self.target
        title = Text(
            f"call {one_line(t.server, 30)}.{one_line(t.tool, 40)} · trial #{t.trial_id}", style="bold"
        )
        title.append(" · same server, same commit · an operator event, never scored", style="dim")
        yield Static(title, classes="title")
        with Vertical():
            yield TextArea(json.dumps(t.arguments, indent=2, ensure_ascii=False), id="workbench-args")
            yield Static(id="workbench-status")
            yield LinesView(id="workbench-result")
        yield KeyBar()

    def on_mount(self) -> None:
        self._status(
            Text("edit the arguments, then ctrl+s to call (the schema is checked first)", style="dim")
        )
        self.query_one(TextArea).focus()

    def _status(self, text: Text) -> None:
        self.query_one("#workbench-status", Static).update(text)

    def action_call(self) -> None:
        arguments, problems = parse_arguments(self.query_one(TextArea).text, self.target.input_schema)
        if arguments is None:
            self._status(Text(sanitize("; ".join(problems)), style="bold red"))
            return
        self.request_id = uuid.uuid4().hex[:12]
        self.recall, self.failure = None, ""
        t = self.target
        args = {"request_id": self.request_id, "trial_id": t.trial_id, "server": t.server, "tool": t.tool,
                "arguments": arguments}  # fmt: skip
        self.host.enqueue("call_tool", args, note=f"calling {t.server}.{t.tool}…")
        self._status(Text(f"calling… (request {self.request_id}; the engine serving the run makes the call)"))

    def consume(self, events: list[StoredEvent]) -> None:
        for stored in events:
            ev = stored.event
            if isinstance(ev, ToolRecall) and ev.request_id == self.request_id and self.request_id:
                self.recall = ev
            elif (
                isinstance(ev, OperatorCommand)
                and ev.command == "call_tool"
                and ev.status == "failed"
                and ev.args.get("request_id") == self.request_id
            ):
                self.failure = ev.message

    def flush(self) -> None:
        view = self.query_one("#workbench-result", LinesView)
        if self.recall is not None and self.recall.request_id == self.request_id:
            width = max(20, view.size.width - 2)
            view.set_lines(wrap_texts(recall_lines(self.recall), self.app.console, width))
            self._status(Text(f"done (request {self.request_id}) · ctrl+y copies the result", style="green"))
            self.request_id = ""
        elif self.failure:
            self._status(Text(sanitize(f"the call failed: {self.failure}"), style="bold red"))
            self.failure, self.request_id = "", ""

    def action_copy(self) -> None:
        if self.recall is None:
            self.notify("nothing to copy yet: ctrl+s calls the tool", markup=False)
            return
        self.app.copy_to_clipboard(self.recall.result.content)
        self.notify(f"copied {len(self.recall.result.content):,} characters (OSC 52)", markup=False)

    def action_reset(self) -> None:
        self.query_one(TextArea).text = json.dumps(self.target.arguments, indent=2, ensure_ascii=False)

    def action_back(self) -> None:
        self.app.pop_screen()


__all__ = ["ToolTarget", "WorkbenchScreen", "parse_arguments", "recall_lines", "tool_target"]
