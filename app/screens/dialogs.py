"""Modal screens: confirmation, one-line prompt, pager for huge outputs, cited lines, help."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static
from textual.worker import Worker

from proctor.app.screens.base import forward_worker_failure
from proctor.app.views.help_page import help_rows, wrap_hanging
from proctor.app.views.key_names import KeyRow
from proctor.scenarios.repo import PinnedRepo, RepoError
from proctor.store.scores import CitationDetails
from proctor.widgets.key_bar import KeyBar
from proctor.widgets.lines_view import LinesView
from proctor.widgets.sanitize import one_line, safe_text
from proctor.widgets.transcript_model import BADGE

CONTEXT_LINES = 5


class ConfirmScreen(ModalScreen[bool]):
    """Shows what an action will do; y/enter confirms, n/escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer(True)", "Confirm"),
        Binding("n,escape", "answer(False)", "Cancel"),
    ]

    LIVE_REFRESH_S = 0.25

    def __init__(
        self, title: str, lines: Sequence[Text], *, live: Callable[[], Sequence[Text]] | None = None
    ) -> None:
        """``live``, when given, is asked for the lines again while the dialog is open."""
        super().__init__()
        self._title = title
        self._lines = list(lines)
        self._live = live

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(self._title, style="bold"), classes="dialog-title")
            view = LinesView(id="confirm-body")
            yield view
            yield Static(Text("y / enter: confirm    n / escape: cancel", style="dim"))
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#confirm-body", LinesView).set_lines(self._lines)
        if self._live is not None:
            self.set_interval(self.LIVE_REFRESH_S, self._refresh_lines)

    def _refresh_lines(self) -> None:
        assert self._live is not None
        lines = list(self._live())
        if [t.plain for t in lines] != [t.plain for t in self._lines]:
            self._lines = lines
            self.query_one("#confirm-body", LinesView).set_lines(lines)

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class PromptScreen(ModalScreen[str | None]):
    """A one-line input (filters); enter submits, escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, value: str = "") -> None:
        super().__init__()
        self._title = title
        self._value = value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog small"):
            yield Static(Text(self._title, style="bold"))
            yield Input(value=self._value, id="prompt-input")
        yield KeyBar()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


def cited_lines(citation: CitationDetails, lines: list[str]) -> list[Text]:
    """The cited range with context, numbered; cited lines and the named symbol highlighted."""
    first = citation.line
    if first is None and citation.symbol:
        name = citation.symbol.removesuffix("()").split(".")[-1]
        first = next((i + 1 for i, x in enumerate(lines) if name in x), None)
    if first is None:
        return [
            Text("no line to show (the citation names no line and the symbol was not found)", style="dim")
        ]
    last = max(first, citation.line_end or first)
    if first > len(lines):
        return [Text(f"line {first} is past the end of the file ({len(lines)} lines)", style="bold red")]
    lo, hi = max(1, first - CONTEXT_LINES), min(len(lines), last + CONTEXT_LINES)
    width = len(str(hi))
    out: list[Text] = []
    for n in range(lo, hi + 1):
        cited = first <= n <= last
        row = Text(f"{'▶' if cited else ' '}{n:>{width}} │ ", style="bold yellow" if cited else "dim", end="")
        body = safe_text(lines[n - 1], Style(bgcolor="grey23") if cited else "")
        if citation.symbol:
            body.highlight_words([citation.symbol.removesuffix("()").split(".")[-1]], Style(reverse=True))
        out.append(row + body)
    return out


class CitationScreen(ModalScreen[None]):
    """The lines a citation points to, read from git objects at the pinned commit."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(self, citation: CitationDetails, repo: str, commit: str) -> None:
        super().__init__()
        self.citation = citation
        self._repo = repo
        self._commit = commit

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Static(self._title(), id="citation-title")
            yield LinesView(id="citation-body")
        yield KeyBar()

    def _title(self) -> Text:
        c = self.citation
        glyph, style = BADGE.get(c.status, ("?", Style(reverse=True)))
        text = Text(f" {glyph} {c.status} ", style=style, end="")
        text.append(f" {one_line(c.raw, 80)}", style="bold")
        text.append(f"  @ {one_line(self._commit, 64)[:12]}\n", style="dim")
        text.append(one_line(c.reason, 200), style="italic")
        return text

    def on_mount(self) -> None:
        self.run_worker(self._load, thread=True, exit_on_error=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        forward_worker_failure(self, event)

    def _load(self) -> None:
        try:
            if not self._repo or not self._commit:
                raise RepoError("the grounding score names no repository or commit")
            repo = PinnedRepo(self._repo, self._commit)
            if not repo.is_file(self.citation.path):
                lines = [
                    Text(f"{one_line(self.citation.path, 120)}: not a file at this commit", style="bold")
                ]
            else:
                lines = cited_lines(self.citation, repo.lines(self.citation.path))
        except (RepoError, OSError) as exc:
            lines = [Text(f"cannot read the pinned repository: {one_line(str(exc), 300)}", style="bold red")]
        self.app.call_from_thread(self._show, lines)

    def _show(self, lines: list[Text]) -> None:
        self.query_one("#citation-body", LinesView).set_lines(lines)

    def action_close(self) -> None:
        self.dismiss(None)


class HelpScreen(ModalScreen[None]):
    """Every key that works on the screen underneath, then the legend and the concepts.

    It covers the whole terminal, opaque: the dashboard underneath showed through around the
    dialog and beside its scrollbar, which read as part of the help."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,question_mark", "close", "Close")]

    def __init__(self, rows: Sequence[KeyRow]) -> None:
        super().__init__()
        self._rows = list(rows)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Static(
                Text("help: this screen's keys, then what every symbol means (escape: close)", style="bold")
            )
            yield LinesView(id="help-body")
        yield KeyBar()

    def on_mount(self) -> None:
        view = self.query_one("#help-body", LinesView)
        view.set_lines(wrap_hanging(help_rows(self._rows), self.app.console, max(40, self.size.width - 6)))
        view.focus()

    def action_close(self) -> None:
        self.dismiss(None)


__all__ = [
    "CitationScreen",
    "ConfirmScreen",
    "HelpScreen",
    "PromptScreen",
    "cited_lines",
]
