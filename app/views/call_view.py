"""One tool call as the operator reads it: who answered, what the server said, the result.

Shared by ``proctor servers call`` and the console (transcript and tool workbench), so a call
reads the same wherever it is shown. Everything is sanitized ``Text``, never markup.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from rich.text import Text

from proctor.store.events import McpNotice, ServerConnected, ToolResult
from proctor.widgets.sanitize import sanitize


def server_line(ev: ServerConnected) -> str:
    who = " ".join(x for x in (ev.name, ev.version) if x) or "unnamed"
    caps = ", ".join(sorted(ev.capabilities)) or "none"
    return f"server {ev.server}: {who} · protocol {ev.protocol_version or '?'} · capabilities {caps}"


def notice_title(ev: McpNotice) -> str:
    """One line for a server notice: what it was, and for requests what proctor answered."""
    shared = " (connection shared by calls in flight)" if ev.shared else ""
    if ev.method == "notifications/progress":
        of = f"/{ev.total:g}" if ev.total is not None else ""
        return f"[{ev.server}] progress {ev.progress or 0:g}{of} #{ev.call_id}{shared}"
    if ev.method == "notifications/message":
        return f"[{ev.server}] log {ev.level or 'info'}{shared}: {ev.message}"
    answer = f" → {ev.answer}" if ev.answer else ""
    return f"[{ev.server}] {ev.method}{answer}{shared}"


def result_lines(result: ToolResult, notices: Sequence[McpNotice]) -> list[Text]:
    """The status, the notices (with their messages), the blocks' kinds, the text, the structure."""
    status = f"error ({result.error_type})" if result.is_error else "ok"
    style = "bold red" if result.is_error else "bold"
    out = [Text(sanitize(f"{result.server}.{result.tool}: {status} in {result.latency_s:.2f}s"), style=style)]
    for n in notices:
        message = f": {n.message}" if n.method != "notifications/message" and n.message else ""
        out.append(Text(sanitize(notice_title(n) + message), style="dim"))
    if result.blocks:
        kinds = ", ".join(b.type.replace("_", " ") for b in result.blocks)
        out.append(Text(sanitize(f"{len(result.blocks)} content blocks: {kinds}"), style="dim"))
    out += [Text(line) for line in sanitize(result.content).split("\n")]
    if result.structured is not None:
        out.append(Text("── structuredContent ──", style="bold"))
        pretty = json.dumps(result.structured, indent=2, ensure_ascii=False)
        out += [Text(x) for x in sanitize(pretty).split("\n")]
    return out


__all__ = ["notice_title", "result_lines", "server_line"]
