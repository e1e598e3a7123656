"""A live transcript: entries laid out lazily, tool I/O collapsible, tail mode, search.

Tail mode follows new entries while the view is scrolled to the bottom; scrolling up stops
following and counts the events that arrived since, until the operator returns to the bottom
(End / G). Layout is cached per entry, so a flush re-wraps only entries that changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.message import Message

from proctor.widgets.lines_view import LinesView
from proctor.widgets.transcript_model import CitationBadge, TranscriptEntry, layout_entry

_CacheKey = tuple[int, int, int, bool, str, int]


class TranscriptView(LinesView):
    """Shows ``TranscriptEntry`` items; the cursor is an entry (its header line is highlighted).

    The scrollbar's gutter is always kept: otherwise the first load lays every entry out at
    the full width, the scrollbar then appears, and everything is laid out again, narrower."""

    DEFAULT_CSS = """
    TranscriptView { scrollbar-gutter: stable; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "entry(-1)", "Prev entry", show=False),
        Binding("down,j", "entry(1)", "Next entry", show=False),
        Binding("enter,space", "toggle_entry", "Expand/collapse", show=True),
        Binding("e", "toggle_all", "Expand all tool I/O", show=True),
    ]

    class TailChanged(Message):
        def __init__(self, following: bool, unseen: int) -> None:
            super().__init__()
            self.following = following
            self.unseen = unseen

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(cursor=True, id=id)
        self.entries: Sequence[TranscriptEntry] = ()
        self.expanded: set[int] = set()
        self.citations: tuple[CitationBadge, ...] = ()
        self.search_query = ""
        self.following = True
        self.unseen = 0
        self.cursor_entry = 0
        self._starts: list[int] = []
        self._entry_layouts: dict[int, tuple[_CacheKey, list[Text]]] = {}
        self._layout_width = 0
        self._citations_version = 0

    # -- data -----------------------------------------------------------------------------

    def set_entries(self, entries: Sequence[TranscriptEntry], *, new_events: int = 0) -> None:
        """Show ``entries`` (the full list); ``new_events`` counts toward "new since you scrolled".

        The list is copied: the caller's keeps growing as events arrive, and the view's entries
        must match its layout until the next call (a key between the two would index past it)."""
        self.entries = list(entries)
        self._relayout()
        if self.following:
            self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)
        elif new_events:
            self.unseen += new_events
            self.post_message(self.TailChanged(self.following, self.unseen))

    def set_citations(self, citations: Sequence[CitationBadge]) -> None:
        if tuple(citations) != self.citations:
            self.citations = tuple(citations)
            self._citations_version += 1
            self._relayout()

    def set_query(self, query: str) -> list[int]:
        """Highlight ``query``; expand tool entries that contain it; return matching entry indexes."""
        self.search_query = query
        q = query.lower()
        hits = [
            i
            for i, e in enumerate(self.entries)
            if q and (q in e.clean_body().lower() or q in e.title.lower())
        ]
        for i in hits:
            if self.entries[i].is_tool:
                self.expanded.add(self.entries[i].uid)
        self._relayout()
        return hits

    def _relayout(self) -> None:
        width = self.content_width
        if width != self._layout_width:
            self._entry_layouts.clear()
            self._layout_width = width
        lines: list[Text] = []
        starts: list[int] = []
        for entry in self.entries:
            starts.append(len(lines))
            lines.extend(self._entry_lines(entry, width))
        self._starts = starts
        self.cursor_entry = max(0, min(self.cursor_entry, len(self.entries) - 1))
        self.cursor_line = starts[self.cursor_entry] if starts else 0
        self.set_lines(lines)

    def _entry_lines(self, entry: TranscriptEntry, width: int) -> list[Text]:
        expanded = entry.uid in self.expanded
        key = (entry.version, width, self._citations_version, expanded, self.search_query, int(entry.failing))
        cached = self._entry_layouts.get(entry.uid)
        if cached is not None and cached[0] == key:
            return cached[1]
        lines = layout_entry(
            entry,
            self.app.console,
            width,
            expanded=expanded,
            citations=self.citations,
            query=self.search_query,
        )
        self._entry_layouts[entry.uid] = (key, lines)
        return lines

    def on_resize(self) -> None:
        if self.entries:
            self._relayout()

    # -- tail mode ------------------------------------------------------------------------

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        at_bottom = new_value >= self.max_scroll_y
        if at_bottom != self.following:
            self.following = at_bottom
            if at_bottom:
                self.unseen = 0
            self.post_message(self.TailChanged(self.following, self.unseen))

    def follow(self) -> None:
        self.following = True
        self.unseen = 0
        self.cursor_entry = max(0, len(self.entries) - 1)
        self.cursor_line = self._starts[self.cursor_entry] if self._starts else 0
        self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)
        self.refresh()
        self.post_message(self.TailChanged(True, 0))

    def action_last(self) -> None:
        self.follow()

    # -- entry cursor ---------------------------------------------------------------------

    def select_entry(self, index: int) -> None:
        if not self.entries:
            return
        self.cursor_entry = max(0, min(len(self.entries) - 1, index))
        start = self._starts[self.cursor_entry]
        end = (
            self._starts[self.cursor_entry + 1]
            if self.cursor_entry + 1 < len(self._starts)
            else len(self.lines)
        )
        height = max(1, self.scrollable_content_region.height)
        self.cursor_line = start
        if start < self.scroll_y:
            self.scroll_to(y=start, animate=False, immediate=True, force=True)
        elif end > self.scroll_y + height:
            self.scroll_to(y=min(start, end - height), animate=False, immediate=True, force=True)
        self.refresh()

    def selected(self) -> TranscriptEntry | None:
        return self.entries[self.cursor_entry] if self.entries else None

    def action_entry(self, delta: int) -> None:
        self.select_entry(self.cursor_entry + delta)

    def action_page_up(self) -> None:
        self.scroll_to(
            y=self.scroll_y - max(1, self.scrollable_content_region.height - 1), animate=False, force=True
        )

    def action_page_down(self) -> None:
        self.scroll_to(
            y=self.scroll_y + max(1, self.scrollable_content_region.height - 1), animate=False, force=True
        )

    def action_first(self) -> None:
        self.select_entry(0)
        self.scroll_to(y=0, animate=False, immediate=True, force=True)

    def action_toggle_entry(self) -> None:
        entry = self.selected()
        if entry is None or not entry.is_tool:
            return
        self.expanded.symmetric_difference_update({entry.uid})
        self._relayout()
        self.select_entry(self.cursor_entry)

    def action_toggle_all(self) -> None:
        tools = {e.uid for e in self.entries if e.is_tool}
        if tools <= self.expanded:
            self.expanded -= tools
        else:
            self.expanded |= tools
        self._relayout()
        self.select_entry(self.cursor_entry)

    def entry_index_of_call(self, call_id: str) -> int | None:
        for i, e in enumerate(self.entries):
            if e.call_id == call_id:
                return i
        return None


__all__ = ["TranscriptView"]
