"""Transcript entries and how one entry is laid out as lines of ``Text`` at a given width.

Pure functions (a rich ``Console`` is only used to measure and wrap), so layout is tested
without an app. Entry bodies are sanitized when they get here, except a ``raw`` one (a body
too large to clean on the event loop): only the lines it shows are cleaned. Everything is built
as ``Text`` pieces, never markup. Tool output is capped: a collapsed entry shows a few lines, an
expanded one at most ``EXPANDED_LINES``; the rest is reached through the pager.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from rich.cells import cell_len
from rich.console import Console
from rich.style import Style
from rich.text import Text

from proctor.widgets.sanitize import sanitize

EntryKind = Literal[
    "meta", "context", "prose", "final", "tool_call", "tool_result", "error", "log", "reasoning"
]
# Entries that open collapsed and expand with enter: tool I/O, what the agent was given, and
# what the model reasoned (never part of its answer).
TOOL_KINDS: frozenset[str] = frozenset({"tool_call", "tool_result", "context", "reasoning"})
PREVIEW_LINES = 3
EXPANDED_LINES = 200
LINE_CHARS = 1000

BADGE = {"grounded": ("✓", Style(color="black", bgcolor="green")),
         "unresolved": ("?", Style(color="black", bgcolor="yellow")),
         "hallucinated": ("✗", Style(color="white", bgcolor="red"))}  # fmt: skip
_GUTTER = {
    "tool_call": Style(color="magenta"),
    "tool_result": Style(color="blue"),
    "context": Style(color="yellow"),
    "reasoning": Style(color="bright_black"),
}
_HEADER = {
    "meta": Style(dim=True),
    "context": Style(color="yellow", bold=True),
    "prose": Style(color="cyan", bold=True),
    "final": Style(color="green", bold=True),
    "tool_call": Style(color="magenta", bold=True),
    "tool_result": Style(color="blue", bold=True),
    "error": Style(color="red", bold=True),
    "log": Style(dim=True, italic=True),
    "reasoning": Style(color="bright_black", italic=True),
}
FAILING = Style(color="white", bgcolor="dark_red", bold=True)
MATCH = Style(color="black", bgcolor="yellow")


@dataclass(frozen=True)
class CitationBadge:
    raw: str
    status: str


@dataclass
class TranscriptEntry:
    """One displayed item. ``title`` is sanitized, and ``body`` too unless ``raw``: a body too
    large to clean at once (a 30 MB tool result) is kept as stored, and whatever shows it cleans
    the part it shows (``head``) or asks for ``clean_body``. ``version`` bumps on change; ``uid``
    is unique within a transcript (one event can make several entries)."""

    kind: EntryKind
    event_id: int
    title: str
    body: str = ""
    call_id: str = ""
    is_error: bool = False
    failing: bool = False
    version: int = 0
    uid: int = 0
    raw: bool = False
    line_count: int = field(default=-1, compare=False)  # counted once: bodies do not change
    _clean: str | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.line_count < 0:
            self.line_count = self.body.count("\n") + 1 if self.body else 0

    @property
    def is_tool(self) -> bool:
        return self.kind in TOOL_KINDS

    def clean_body(self) -> str:
        """The whole body, safe for a terminal (cleaned once, on first use, for a raw body)."""
        if not self.raw:
            return self.body
        if self._clean is None:
            self._clean = sanitize(self.body)
        return self._clean

    def head(self, limit: int) -> list[str]:
        """The first ``limit`` lines, each cut at ``LINE_CHARS`` and safe for a terminal, without
        touching the rest of a large body."""
        out: list[str] = []
        pos = 0
        body = self.body
        while len(out) < limit and pos <= len(body):
            end = body.find("\n", pos)
            end = len(body) if end < 0 else end
            line = body[pos : min(end, pos + 4 * LINE_CHARS)] if self.raw else body[pos:end]
            out.append(_cut(sanitize(line), end - pos) if self.raw else _cut(line))
            pos = end + 1
        return out


def pretty_arguments(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def badge_citations(body: str, citations: Sequence[CitationBadge], style: Style | None = None) -> Text:
    """``body`` with each cited span coloured by its grounding status and followed by a badge."""
    text = Text(style=style or Style())
    if not citations:
        text.append(body)
        return text
    by_raw = {c.raw: c.status for c in citations if c.raw}
    pattern = re.compile("|".join(re.escape(raw) for raw in sorted(by_raw, key=len, reverse=True)))
    pos = 0
    for match in pattern.finditer(body):
        text.append(body[pos : match.start()])
        glyph, badge_style = BADGE.get(by_raw[match.group(0)], ("?", Style(reverse=True)))
        text.append(match.group(0), Style(underline=True) + badge_style)
        text.append(f" {glyph}{by_raw[match.group(0)][:1].upper()}", badge_style + Style(bold=True))
        pos = match.end()
    text.append(body[pos:])
    return text


def _cut(line: str, length: int | None = None) -> str:
    """``line`` cut at ``LINE_CHARS``, saying how much was left (``length``: its full length)."""
    full = len(line) if length is None else length
    return line if full <= LINE_CHARS else line[:LINE_CHARS] + f" …(+{full - LINE_CHARS} chars)"


def _header(entry: TranscriptEntry, expanded: bool) -> Text:
    marker = ("▾ " if expanded else "▸ ") if entry.is_tool else ""
    style = FAILING if entry.failing else _HEADER[entry.kind]
    if entry.kind == "tool_result" and entry.is_error and not entry.failing:
        style = Style(color="red", bold=True)
    header = Text(marker + entry.title, style=style, end="")
    if entry.failing:
        header.append("  ◀ first failing call", FAILING)
    return header


def _body_lines(entry: TranscriptEntry, expanded: bool) -> tuple[list[str], int]:
    """The body lines to show and how many were left out."""
    if not entry.body:
        return [], 0
    if entry.kind == "tool_call" and not expanded:
        flat = " ".join(entry.body[: 4 * LINE_CHARS].split())[:LINE_CHARS]
        return [sanitize(flat) if entry.raw else flat], 0
    if not entry.is_tool:
        return [entry.clean_body()], 0
    shown = entry.head(EXPANDED_LINES if expanded else PREVIEW_LINES)
    return shown, entry.line_count - len(shown)


RED = Style(color="red")


def _plain_lines(
    chunk: str, gutter: str, gutter_style: Style, style: Style | None, console: Console, width: int
) -> list[Text]:
    """``chunk``'s lines behind the gutter, folded at ``width``. Lines that fit (nearly all of a
    transcript) are built directly: rich's ``Text.wrap`` copies every line it looks at, and
    laying out a few hundred entries that way stalled the console for tens of milliseconds."""
    if "\t" not in chunk:
        parts = chunk.split("\n")
        # rich trims trailing spaces past ``width`` characters (zero-width ones count): same test
        if all(len(p) <= width and cell_len(p) <= width for p in parts):
            out = []
            for part in parts:
                line = Text(gutter, style=gutter_style, end="")
                line.append(part, style)
                out.append(line)
            return out
    body = Text(chunk, style=style or Style())
    return [
        Text(gutter, style=gutter_style, end="") + line for line in body.wrap(console, width, overflow="fold")
    ]


def layout_entry(
    entry: TranscriptEntry,
    console: Console,
    width: int,
    *,
    expanded: bool,
    citations: Sequence[CitationBadge] = (),
    query: str = "",
) -> list[Text]:
    """The lines ``entry`` occupies at ``width`` cells: a header, then the (capped) body."""
    header = _header(entry, expanded)
    room = max(10, width)
    if "\n" not in header.plain and len(header.plain) <= room and header.cell_len <= room:
        out = [header]
    else:
        out = list(header.wrap(console, room, overflow="fold"))
    gutter_style = _GUTTER.get(entry.kind)
    gutter = "│ " if gutter_style is not None else "  "
    inner = max(10, width - len(gutter))
    shown, hidden = _body_lines(entry, expanded)
    prefix_style = gutter_style or Style()
    for chunk in shown:
        if entry.kind in ("prose", "final"):
            wrapped = badge_citations(chunk, citations).wrap(console, inner, overflow="fold", no_wrap=False)
            out.extend(Text(gutter, style=prefix_style, end="") + line for line in wrapped)
        else:
            out.extend(
                _plain_lines(chunk, gutter, prefix_style, RED if entry.is_error else None, console, inner)
            )
    if hidden > 0:
        more = f"… {hidden:,} more lines ({'p' if expanded else 'enter'}: {'page' if expanded else 'expand'})"
        out.append(
            Text(gutter, style=gutter_style or Style()) + Text(more, style=Style(dim=True, italic=True))
        )
    if query:
        pattern = re.compile(re.escape(query), re.IGNORECASE)
        for line in out:
            line.highlight_regex(pattern, MATCH)
    for line in out:
        line.end = ""
        line.no_wrap = True
    return out


__all__ = [
    "BADGE",
    "EXPANDED_LINES",
    "PREVIEW_LINES",
    "CitationBadge",
    "EntryKind",
    "TranscriptEntry",
    "badge_citations",
    "layout_entry",
    "pretty_arguments",
]
