"""The pager: a whole tool output or check list, a page at a time, searchable.

Outputs can be tens of megabytes, so lines are folded once and only one page (``PAGE_LINES``)
is turned into styled text at a time. ``/`` searches every line (case-insensitive), ``n``/``N``
go to the next/previous match across pages, ``:`` goes to a line number, Home/End go to the
first/last line of the whole output.
"""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from proctor.widgets.key_bar import KeyBar
from proctor.widgets.lines_view import LinesView
from proctor.widgets.sanitize import one_line, sanitize

PAGE_LINES = 400
FOLD_CHARS = 400
MATCH = Style(bgcolor="yellow", color="black")


def fold_lines(body: str, width: int = FOLD_CHARS) -> list[str]:
    """Split into lines and cut very long lines into pieces, so every page has bounded cost."""
    out: list[str] = []
    for line in body.split("\n"):
        if len(line) <= width:
            out.append(line)
        else:
            out.extend(line[i : i + width] for i in range(0, len(line), width))
    return out


class PagerScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right_square_bracket,space", "page(1)", "Next page"),
        Binding("left_square_bracket,b", "page(-1)", "Prev page"),
        Binding("slash", "ask('search')", "Search"),
        Binding("n", "match(1)", "Next match"),
        Binding("N", "match(-1)", "Prev match", show=False),
        Binding("colon", "ask('line')", "Go to line"),
        Binding("home", "goto_line(1)", "First line", priority=True, show=False),
        Binding("end", "goto_line(-1)", "Last line", priority=True, show=False),
        Binding("escape", "close", "Close"),
    ]

    def __init__(self, title: str, body: str) -> None:
        super().__init__()
        self._title = one_line(title, 160)
        self._lines = fold_lines(sanitize(body))
        self.page = 0
        self.search_text = ""
        self.matches: list[int] = []  # line indexes containing the query
        self.match_index = -1
        self._asking = ""

    @property
    def pages(self) -> int:
        return max(1, -(-len(self._lines) // PAGE_LINES))

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Static(id="pager-title")
            yield LinesView(cursor=True, id="pager-body")
            yield Input(id="pager-input")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#pager-input", Input).display = False
        self._show()
        self._body.focus()

    @property
    def _body(self) -> LinesView:
        return self.query_one("#pager-body", LinesView)

    def _show(self, line_in_page: int = 0) -> None:
        start = self.page * PAGE_LINES
        chunk = self._lines[start : start + PAGE_LINES]
        width = len(str(len(self._lines)))
        lines = []
        for i, x in enumerate(chunk):
            text = Text(x)
            if self.search_text:
                text.highlight_words([self.search_text], MATCH, case_sensitive=False)
            lines.append(Text(f"{start + i + 1:>{width}} ", style="dim", end="") + text)
        self._body.set_lines(lines)
        self._body.move_cursor(line_in_page)
        self._title_line()

    def _title_line(self) -> None:
        title = Text(self._title, style="bold")
        title.append(f"   page {self.page + 1}/{self.pages} · {len(self._lines):,} lines", style="dim")
        if self.search_text:
            found = f"{self.match_index + 1}/{len(self.matches)}" if self.matches else "no matches"
            title.append(f" · “{one_line(self.search_text, 40)}”: {found}", style="bold yellow")
        self.query_one("#pager-title", Static).update(title)

    def goto(self, index: int) -> None:
        """Show line ``index`` (0-based, clamped) with the cursor on it."""
        index = max(0, min(len(self._lines) - 1, index))
        self.page = index // PAGE_LINES
        self._show(index % PAGE_LINES)

    def action_page(self, delta: int) -> None:
        new = max(0, min(self.pages - 1, self.page + delta))
        if new != self.page:
            self.page = new
            self._show()

    def action_goto_line(self, number: int) -> None:
        self.goto(len(self._lines) - 1 if number < 0 else number - 1)

    def action_ask(self, what: str) -> None:
        box = self.query_one("#pager-input", Input)
        self._asking = what
        box.placeholder = "search (enter: find, escape: close)" if what == "search" else "go to line number"
        box.value = ""
        box.display = True
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        self._close_input()
        if self._asking == "line":
            if value.isdigit():
                self.goto(int(value) - 1)
            else:
                self.notify(f"not a line number: {one_line(value, 40)}", severity="warning", markup=False)
            return
        self.search_text = value
        needle = value.casefold()
        self.matches = [i for i, x in enumerate(self._lines) if needle and needle in x.casefold()]
        current = self.page * PAGE_LINES + self._body.cursor_line
        self.match_index = (
            next((k for k, i in enumerate(self.matches) if i >= current), 0) if self.matches else -1
        )
        if self.matches:
            self.goto(self.matches[self.match_index])
        else:
            self._show(self._body.cursor_line)

    def on_key(self, event: events.Key) -> None:
        box = self.query_one("#pager-input", Input)
        if event.key == "escape" and box.has_focus:
            event.stop()
            self._close_input()

    def _close_input(self) -> None:
        box = self.query_one("#pager-input", Input)
        box.display = False
        self._body.focus()

    def action_match(self, step: int) -> None:
        if not self.matches:
            self.notify("no search results: / to search", markup=False)
            return
        self.match_index = (self.match_index + step) % len(self.matches)
        self.goto(self.matches[self.match_index])

    def action_close(self) -> None:
        self.dismiss(None)


__all__ = ["PAGE_LINES", "PagerScreen", "fold_lines"]
