"""The trial matrix: one row per (scenario, epoch), one column per (arm, model).

A Line-API widget: each repaint renders the rows on screen and nothing else, so a 10k-trial run
paints as fast as a 10-trial one (a DataTable of 10k rows blocks ~2 s on first paint). The
scenario column stays put while the cells scroll sideways. Cell updates are per trial, so a
status change repaints one line.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from proctor.widgets.sanitize import one_line

STATUSES: tuple[str, ...] = ("queued", "running", "scoring", "passed", "failed", "not judged", "error")
STATUS_GLYPH = {
    "queued": "·",
    "running": "▶",
    "scoring": "…",
    "passed": "✓",
    "failed": "✗",
    "not judged": "○",
    "error": "!",
}
STATUS_STYLE = {
    "queued": Style(dim=True),
    "running": Style(color="yellow", bold=True),
    "scoring": Style(color="cyan"),
    "passed": Style(color="green", bold=True),
    "failed": Style(color="red", bold=True),
    "not judged": Style(color="magenta"),
    "error": Style(color="white", bgcolor="red", bold=True),
}
HEADER_STYLE = Style(bold=True, underline=True)
DELTA_STYLE = {1: Style(color="green"), -1: Style(color="red"), 0: Style(dim=True)}
CELL_WIDTH = 16
FULL_MAX = 26  # spare width goes to full cells up to this, so a wide terminal is used and names show whole
# Compact cells, when every arm would not fit at full width: "✗ 0.42" (a glyph and the fairness;
# the status word is in the colour and the selected line), "✗ 2/3 0.71" when epochs are folded.
COMPACT_WIDTH = 7
COMPACT_FOLDED_WIDTH = 11
COMPACT_MAX = 14  # spare width goes to compact cells up to this, so arm names show more
DELTA_WIDTH = 6  # " +0.31": what a cell grows by when the run has a baseline to compare with
LABEL_MAX = 40
COMPACT_LABEL_MAX = 18  # the selected line below the matrix names the scenario whole
ELLIPSIS = "…"


@dataclass(frozen=True)
class MatrixCell:
    """One cell; ``folded`` cells stand for all epochs of a scenario (``note`` is "k/n mean").

    ``delta`` is the cell's fairness minus the baseline arm's for the same scenario, model and
    epochs (None in the baseline column, or when either side has no score yet)."""

    trial_id: int
    status: str
    note: str = ""
    folded: bool = False
    delta: float | None = None


@dataclass
class MatrixModel:
    """What the matrix shows: rows, columns and the cell at each (row, column) that has a trial."""

    rows: list[tuple[str, int]] = field(default_factory=list)
    columns: list[tuple[str, str]] = field(default_factory=list)
    cells: dict[tuple[int, int], MatrixCell] = field(default_factory=dict)
    members: dict[tuple[int, int], tuple[int, ...]] = field(default_factory=dict)  # trial ids per cell
    marked_scenarios: frozenset[str] = frozenset()
    show_epoch: bool = False
    baseline: str | None = None  # the arm the Δ in other columns is measured against
    folded: bool = False  # cells stand for all epochs of a scenario ("k/n mean")
    compact: bool = False  # short cells, chosen by the widget when full ones do not all fit
    compact_width: int = COMPACT_WIDTH  # a compact cell's width (Δ apart), set by the widget
    full_width: int = CELL_WIDTH  # a full cell's width (Δ apart): wider when the terminal has room

    def has_delta(self, col: int) -> bool:
        return self.baseline is not None and self.columns[col][0] != self.baseline

    def cell_width(self) -> int:
        return self.compact_width if self.compact else self.full_width

    def fit_full(self, room: int) -> None:
        """Full cells as wide as ``room`` allows, between ``CELL_WIDTH`` and ``FULL_MAX``."""
        self.compact = False
        deltas = sum(DELTA_WIDTH for c in range(len(self.columns)) if self.has_delta(c))
        share = (room - deltas) // max(1, len(self.columns))
        self.full_width = max(CELL_WIDTH, min(FULL_MAX, share))

    def fit_compact(self, room: int) -> None:
        """Compact cells as wide as ``room`` allows, between their minimum and ``COMPACT_MAX``."""
        self.compact = True
        least = COMPACT_FOLDED_WIDTH if self.folded else COMPACT_WIDTH
        deltas = sum(DELTA_WIDTH for c in range(len(self.columns)) if self.has_delta(c))
        share = (room - deltas) // max(1, len(self.columns))
        self.compact_width = max(least, min(COMPACT_MAX, share))

    def column_width(self, col: int) -> int:
        return self.cell_width() + (DELTA_WIDTH if self.has_delta(col) else 0)

    def column_left(self, col: int) -> int:
        return sum(self.column_width(c) for c in range(col))

    def body_width(self) -> int:
        return self.column_left(len(self.columns))

    def position_of(self, trial_id: int) -> tuple[int, int] | None:
        for pos, cell in self.cells.items():
            if cell.trial_id == trial_id or trial_id in self.members.get(pos, ()):
                return pos
        return None


def cell_text(cell: MatrixCell | None, *, compact: bool = False) -> str:
    if cell is None:
        return ""
    if cell.folded or compact:
        return f"{STATUS_GLYPH.get(cell.status, '?')} {cell.note}".rstrip()
    return f"{STATUS_GLYPH.get(cell.status, '?')} {cell.status:<7} {cell.note}".rstrip()


def delta_text(delta: float | None) -> str:
    """Δ fairness against the baseline as the matrix prints it: signed, two decimals; a
    difference that rounds to nothing is ±0.00, never -0.00."""
    if delta is None:
        return ""
    return "±0.00" if round(delta, 2) == 0 else f"{delta:+.2f}"


def clip(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells; what is cut ends in an ellipsis, never mid-word silently."""
    if cell_len(text) <= width:
        return text
    out = ""
    for ch in text:
        if cell_len(out + ch) > width - 1:
            break
        out += ch
    return out + ELLIPSIS


def delta_sign(delta: float) -> int:
    return 0 if round(delta, 2) == 0 else (1 if delta > 0 else -1)


class TrialMatrix(ScrollView, can_focus=True):
    """Keyboard-driven grid of trials; ``selected_trial`` is the trial under the cursor.

    What enter does is the host screen's binding, not a message from here: a message would be
    handled after keys already typed (enter then ? would open help under the trial)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"trialmatrix--cursor"}
    DEFAULT_CSS = """
    TrialMatrix { height: 1fr; }
    TrialMatrix > .trialmatrix--cursor { background: $accent; color: $text; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1, 0)", "Up", show=False),
        Binding("down,j", "move(1, 0)", "Down", show=False),
        Binding("left,h", "move(0, -1)", "Left", show=False),
        Binding("right,l", "move(0, 1)", "Right", show=False),
        Binding("pageup,ctrl+u", "page(-1)", "Page up", show=False),
        Binding("pagedown,ctrl+d", "page(1)", "Page down", show=False),
        Binding("home,g", "edge(-1)", "First row", show=False),
        Binding("end,G", "edge(1)", "Last row", show=False),
    ]
    HEADER_ROWS = 2

    class CursorMoved(Message):
        def __init__(self, trial_id: int | None) -> None:
            super().__init__()
            self.trial_id = trial_id

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model = MatrixModel()
        self.cursor = (0, 0)
        self._label_width = 12

    # -- data -----------------------------------------------------------------------------

    def set_model(self, model: MatrixModel, *, keep_trial: int | None = None) -> None:
        """Replace rows and columns; the cursor stays on ``keep_trial`` when it is still shown."""
        rows_before = len(self.model.rows)
        self.model = model
        self._fit()
        if len(model.rows) != rows_before:
            self.refresh(layout=True)  # the matrix is as tall as its rows, up to what the screen gives it
        pos = model.position_of(keep_trial) if keep_trial is not None else None
        row, col = pos or self.cursor
        self.cursor = (
            max(0, min(row, len(model.rows) - 1)),
            max(0, min(col, len(model.columns) - 1)),
        )
        self.refresh()

    def _fit(self) -> None:
        """Full cells when every column fits the width, else compact ones (and shorter labels)."""
        model = self.model
        labels = [self._row_label(i, LABEL_MAX) for i in range(len(model.rows))]
        full_label = min(LABEL_MAX, max([12, *(cell_len(x) + 1 for x in labels)]))
        model.compact = False
        model.full_width = CELL_WIDTH
        width = self.size.width - 1  # the vertical scrollbar's column when rows overflow
        self._label_width = full_label
        if self.size.width and full_label + model.body_width() <= width:
            model.fit_full(width - full_label)
        elif self.size.width:
            model.fit_compact(width - min(COMPACT_LABEL_MAX, full_label))
            self._label_width = max(
                min(COMPACT_LABEL_MAX, full_label), min(full_label, width - model.body_width())
            )
        self.virtual_size = Size(self._label_width + model.body_width(), len(model.rows) + self.HEADER_ROWS)

    def on_resize(self) -> None:
        compact, label = self.model.compact, self._label_width
        self._fit()
        if (compact, label) != (self.model.compact, self._label_width):
            self.move_to(*self.cursor)  # keep the cursor's column in view at the new widths

    def update_cells(self, changes: dict[tuple[int, int], MatrixCell]) -> None:
        """Replace some cells in place (statuses changed); repaints only their lines."""
        for pos, cell in changes.items():
            self.model.cells[pos] = cell
        for row in {r for r, _ in changes}:
            self.refresh_line(row + self.HEADER_ROWS)

    def selected_trial(self) -> int | None:
        cell = self.model.cells.get(self.cursor)
        return None if cell is None else cell.trial_id

    # -- rendering --------------------------------------------------------------------------

    def _row_label(self, row: int, width: int | None = None) -> str:
        scenario, epoch = self.model.rows[row]
        mark = "⚓" if scenario in self.model.marked_scenarios else " "
        suffix = f" #{epoch}" if self.model.show_epoch else ""
        room = (width or self._label_width) - 1 - cell_len(mark) - cell_len(suffix)
        return f"{mark}{one_line(scenario, max(4, room))}{suffix}"

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        scroll_x = int(self.scroll_x)
        label_w = min(self._label_width, width)
        if y < self.HEADER_ROWS:
            label = "scenario" if y == 1 else ""
            if y == 0:
                left, right = self.hidden_columns()
                more = " ".join(x for x in (f"◀{left}" if left else "", f"{right}▶" if right else "") if x)
                label = f"{more} more" if more else ""
            heads = [self._head(c, y) for c in range(len(self.model.columns))]
            return self._join_row(self._pad(label, HEADER_STYLE, label_w), heads, scroll_x, width, base)
        row = int(self.scroll_y) + y - self.HEADER_ROWS
        if row >= len(self.model.rows):
            return Strip.blank(width, base)
        cursor_style = self.get_component_rich_style("trialmatrix--cursor", partial=True)
        label_style = cursor_style if row == self.cursor[0] and self.has_focus else Style()
        parts: list[list[Segment]] = []
        for col in range(len(self.model.columns)):
            cell = self.model.cells.get((row, col))
            style = STATUS_STYLE.get(cell.status, Style()) if cell is not None else Style()
            if (row, col) == self.cursor:
                style = style + (cursor_style if self.has_focus else Style(reverse=True))
            parts.append(self._cell(col, cell, style))
        return self._join_row(
            self._pad(self._row_label(row), label_style, label_w), parts, scroll_x, width, base
        )

    def _head(self, col: int, y: int) -> list[Segment]:
        """Arm over model, each spread over the whole column (Δ included) and cut with an
        ellipsis (the selected line names them whole); the Δ part is marked on the model line."""
        name = self.model.columns[col][y]
        if not self.model.has_delta(col):
            return self._pad(one_line(name, 80), HEADER_STYLE, self.model.column_width(col))
        cell_w = self.model.cell_width()
        if y == 0:
            return self._pad(one_line(name, 80), HEADER_STYLE, self.model.column_width(col))
        mark = f"{'Δ':>{DELTA_WIDTH - 1}}"
        return self._pad(one_line(name, 80), HEADER_STYLE, cell_w) + self._pad(
            mark, HEADER_STYLE, DELTA_WIDTH
        )

    def _cell(self, col: int, cell: MatrixCell | None, style: Style) -> list[Segment]:
        text = cell_text(cell, compact=self.model.compact)
        cell_w = self.model.cell_width()
        if not self.model.has_delta(col):
            return self._pad(text, style, cell_w)
        delta = None if cell is None else cell.delta
        delta_style = style if delta is None else style + DELTA_STYLE[delta_sign(delta)]
        return self._pad(text, style, cell_w) + self._pad(
            f"{delta_text(delta):>{DELTA_WIDTH - 1}}", delta_style, DELTA_WIDTH
        )

    @staticmethod
    def _pad(text: str, style: Style, width: int = CELL_WIDTH) -> list[Segment]:
        text = clip(text, width - 1)
        return [Segment(text, style), Segment(" " * (width - cell_len(text)))]

    def _join_row(
        self, label: list[Segment], cells: list[list[Segment]], scroll_x: int, width: int, base: Style
    ) -> Strip:
        """The label, then the columns in view; a column that does not fit whole is left out
        (the header's "n▶ more" counts it) rather than cut mid-cell."""
        label_strip = Strip(label)
        body = Strip([seg for cell in cells for seg in cell], self.model.body_width())
        body_width = max(0, width - label_strip.cell_length)
        shown = self._whole_columns_width(scroll_x, body_width)
        body = body.crop_extend(scroll_x, scroll_x + shown, base).extend_cell_length(body_width, base)
        return Strip.join([label_strip, body]).crop_extend(0, width, base).apply_style(base)

    def _whole_columns_width(self, scroll_x: int, body_width: int) -> int:
        """How much of ``body_width`` the columns that fit whole from ``scroll_x`` take."""
        end = scroll_x + body_width
        rights = [self.model.column_left(c + 1) for c in range(len(self.model.columns))]
        fitting = [r for r in rights if r <= end and r > scroll_x]
        return (max(fitting) - scroll_x) if fitting else min(body_width, self.model.body_width() - scroll_x)

    # -- navigation -------------------------------------------------------------------------

    def action_move(self, d_row: int, d_col: int) -> None:
        self.move_to(self.cursor[0] + d_row, self.cursor[1] + d_col)

    def action_page(self, direction: int) -> None:
        step = max(1, self.size.height - self.HEADER_ROWS - 1)
        self.move_to(self.cursor[0] + direction * step, self.cursor[1])

    def action_edge(self, direction: int) -> None:
        self.move_to(0 if direction < 0 else len(self.model.rows) - 1, self.cursor[1])

    def move_to(self, row: int, col: int) -> None:
        if not self.model.rows or not self.model.columns:
            return
        row = max(0, min(len(self.model.rows) - 1, row))
        col = max(0, min(len(self.model.columns) - 1, col))
        self.cursor = (row, col)
        visible = max(1, self.size.height - self.HEADER_ROWS)
        if row < self.scroll_y:
            self.scroll_to(y=row, animate=False, immediate=True, force=True)
        elif row >= self.scroll_y + visible:
            self.scroll_to(y=row - visible + 1, animate=False, immediate=True, force=True)
        body_width = max(self.model.column_width(col), self.size.width - self._label_width)
        left = self.model.column_left(col)
        right = left + self.model.column_width(col)
        if left < self.scroll_x:
            self.scroll_to(x=left, animate=False, immediate=True, force=True)
        elif right > self.scroll_x + body_width:
            # Scroll by whole columns: the leftmost one shown starts at its own edge.
            lefts = (self.model.column_left(c) for c in range(col + 1))
            x = next((x for x in lefts if right - x <= body_width), left)
            self.scroll_to(x=x, animate=False, immediate=True, force=True)
        self.refresh()
        self.post_message(self.CursorMoved(self.selected_trial()))

    def jump_to_status(self, statuses: Collection[str], step: int) -> bool:
        """Move to the next (step 1) or previous (-1) cell whose status is one of ``statuses``,
        row by row and wrapping around; False when there is none."""
        order = sorted(pos for pos, cell in self.model.cells.items() if cell.status in statuses)
        if not order:
            return False
        if step > 0:
            target = next((p for p in order if p > self.cursor), order[0])
        else:
            target = next((p for p in reversed(order) if p < self.cursor), order[-1])
        self.move_to(*target)
        return True

    def hidden_columns(self) -> tuple[int, int]:
        """How many columns are scrolled out of view on the left and on the right."""
        body = max(0, self.size.width - min(self._label_width, self.size.width))
        start, end = int(self.scroll_x), int(self.scroll_x) + body
        edges = [
            (self.model.column_left(c), self.model.column_left(c + 1)) for c in range(len(self.model.columns))
        ]
        left = sum(1 for a, _ in edges if a < start)
        right = sum(1 for a, b in edges if a >= start and b > end)
        return left, right

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()


__all__ = [
    "CELL_WIDTH",
    "STATUSES",
    "STATUS_GLYPH",
    "MatrixCell",
    "MatrixModel",
    "TrialMatrix",
    "cell_text",
    "clip",
    "delta_text",
]
