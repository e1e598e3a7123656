"""A Line-API view over a list of one-row ``Text`` lines.

Only the rows on screen are ever turned into segments, so a list of 100k lines costs what 40
cost. Every list-like pane of the console (judge verdicts, compare rows, pager, anchors) is one
of these; callers prepare already-wrapped lines and hand them over once per flush.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip


def wrap_texts(texts: Iterable[Text], console: Console, width: int) -> list[Text]:
    """Wrap each ``Text`` to ``width`` cells; the result has one visual row per item."""
    out: list[Text] = []
    for text in texts:
        for line in text.wrap(console, max(4, width), overflow="fold"):
            line.no_wrap, line.end = True, ""
            out.append(line)
    return out


class LinesView(ScrollView, can_focus=True):
    """Scrollable lines with an optional cursor row (``cursor_enabled``)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"linesview--cursor"}
    DEFAULT_CSS = """
    LinesView { height: 1fr; }
    LinesView > .linesview--cursor { background: $accent 40%; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("pageup,ctrl+u", "page_up", "Page up", show=False),
        Binding("pagedown,ctrl+d", "page_down", "Page down", show=False),
        Binding("home,g", "first", "Top", show=False),
        Binding("end,G", "last", "Bottom", show=False),
        Binding("left,h", "scroll_left", "Left", show=False),
        Binding("right,l", "scroll_right", "Right", show=False),
    ]

    class CursorMoved(Message):
        def __init__(self, view: LinesView, line: int) -> None:
            super().__init__()
            self.view = view
            self.line = line

    class Resized(Message):
        """The view's width for text changed: a caller that fits lines to it builds them again."""

        def __init__(self, view: LinesView, width: int) -> None:
            super().__init__()
            self.view = view
            self.width = width

    def __init__(self, *, cursor: bool = False, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.cursor_enabled = cursor
        self.cursor_line = 0
        self._lines: Sequence[Text] = ()
        self._cache: dict[int, Strip] = {}
        self._width_told = 0

    @property
    def lines(self) -> Sequence[Text]:
        return self._lines

    @property
    def content_width(self) -> int:
        """Width available for text (what callers should wrap to)."""
        return max(10, self.scrollable_content_region.width or self.size.width or 80)

    def set_lines(self, lines: Sequence[Text]) -> None:
        self._lines = lines
        self._cache.clear()
        width = max((line.cell_len for line in lines[:5000]), default=0)
        self.virtual_size = Size(width, len(lines))
        if self.cursor_line >= len(lines):
            self.cursor_line = max(0, len(lines) - 1)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.size.width
        base = self.rich_style
        if index >= len(self._lines):
            return Strip.blank(width, base)
        strip = self._cache.get(index)
        if strip is None:
            line = self._lines[index]
            segments = [
                Segment(s.text.replace("\n", " "), s.style, s.control)
                for s in line.render(self.app.console, end="")
            ]
            strip = Strip(segments, line.cell_len)
            if len(self._cache) > 2000:
                self._cache.clear()
            self._cache[index] = strip
        if self.cursor_enabled and index == self.cursor_line and self.has_focus:
            strip = strip.extend_cell_length(width).apply_style(self._cursor_style())
        elif self.cursor_enabled and index == self.cursor_line:
            strip = strip.apply_style(Style(underline=True))
        return strip.crop_extend(scroll_x, scroll_x + width, base).apply_style(base)

    def _cursor_style(self) -> Style:
        return self.get_component_rich_style("linesview--cursor", partial=True)

    def on_resize(self) -> None:
        width = self.content_width
        if width != self._width_told:
            self._width_told = width
            self.post_message(self.Resized(self, width))

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # -- navigation ---------------------------------------------------------------------

    def move_cursor(self, line: int) -> None:
        if not self._lines:
            return
        line = max(0, min(len(self._lines) - 1, line))
        self.cursor_line = line
        height = max(1, self.scrollable_content_region.height)
        if line < self.scroll_y:
            self.scroll_to(y=line, animate=False, immediate=True, force=True)
        elif line >= self.scroll_y + height:
            self.scroll_to(y=line - height + 1, animate=False, immediate=True, force=True)
        self.refresh()
        self.post_message(self.CursorMoved(self, line))

    def action_cursor_up(self) -> None:
        if self.cursor_enabled:
            self.move_cursor(self.cursor_line - 1)
        else:
            self.scroll_to(y=self.scroll_y - 1, animate=False, immediate=True, force=True)

    def action_cursor_down(self) -> None:
        if self.cursor_enabled:
            self.move_cursor(self.cursor_line + 1)
        else:
            self.scroll_to(y=self.scroll_y + 1, animate=False, immediate=True, force=True)

    def action_page_up(self) -> None:
        step = max(1, self.scrollable_content_region.height - 1)
        if self.cursor_enabled:
            self.move_cursor(self.cursor_line - step)
        else:
            self.scroll_to(y=self.scroll_y - step, animate=False, immediate=True, force=True)

    def action_page_down(self) -> None:
        step = max(1, self.scrollable_content_region.height - 1)
        if self.cursor_enabled:
            self.move_cursor(self.cursor_line + step)
        else:
            self.scroll_to(y=self.scroll_y + step, animate=False, immediate=True, force=True)

    def action_first(self) -> None:
        if self.cursor_enabled:
            self.move_cursor(0)
        else:
            self.scroll_to(y=0, animate=False, immediate=True, force=True)

    def action_last(self) -> None:
        if self.cursor_enabled:
            self.move_cursor(len(self._lines) - 1)
        self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)

    def action_scroll_left(self) -> None:
        self.scroll_to(x=self.scroll_x - 8, animate=False, immediate=True, force=True)

    def action_scroll_right(self) -> None:
        self.scroll_to(x=self.scroll_x + 8, animate=False, immediate=True, force=True)


__all__ = ["LinesView", "wrap_texts"]
