"""Compare view: two trials of one scenario side by side (default: baseline vs the selected arm,
same model and epoch).

Tool calls are aligned by call (``call_alignment``: same tool and arguments side by side, a
sequence alignment with gaps), one row per aligned pair: a mark (same / result ≠ / args ≠ /
only left / only right), the left call and the right call or "— no matching call —". The lower
pane shows the selected row in full: both calls, their argument differences, and the diff of
their results (or "same result"). ``n``/``N`` jump to the next/previous difference, ``enter``
gives the lower pane the whole height. On a replay run (``proctor replay``) one side is the
recording: the trial of the same key in the database the run replayed (``views.recording``),
so each replayed call stands beside the recorded one. All tool text is sanitized and shown as ``rich`` Text,
never as markup; a row cut to fit ends in "…" and the lower pane has it whole.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType

from proctor.app.screens.base import ProctorScreen
from proctor.app.views.call_alignment import Pair, align_calls
from proctor.app.views.compare_model import MARKS, CompareRow, rows_from_pairs
from proctor.app.views.compare_text import (
    MARK_STYLES,
    Side,
    answer_line,
    answer_of,
    answers_detail,
    head_text,
    row_detail,
    row_line,
)
from proctor.app.views.recording import Recording, TrialKey
from proctor.app.views.state import ConsoleState
from proctor.app.views.transcript_state import TranscriptState
from proctor.store.read.reader import StoredEvent, TrialRecord
from proctor.widgets.key_bar import KeyBar
from proctor.widgets.lines_view import LinesView, wrap_texts
from proctor.widgets.sanitize import one_line
from proctor.widgets.text_panel import TextPanel

# -- the screen ----------------------------------------------------------------------------------


class CompareScreen(ProctorScreen):
    DEFAULT_CSS = """
    CompareScreen #compare-head { height: auto; }
    CompareScreen #compare-rows { height: auto; max-height: 40%; }
    CompareScreen #compare-detail { height: 1fr; }
    CompareScreen.expanded #compare-rows, CompareScreen.expanded #compare-head { display: none; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("n", "difference(1)", "Next diff"),
        Binding("N", "difference(-1)", "Prev diff", show=False),
        Binding("enter", "expand", "Details"),
        Binding("a", "cycle('left', 'arm')", "Left arm"),
        Binding("A", "cycle('right', 'arm')", "Right arm"),
        Binding("m", "cycle('left', 'model')", "Left model"),
        Binding("M", "cycle('right', 'model')", "Right model"),
        Binding("w", "swap", "Swap sides"),
    ]

    def __init__(self, trial_id: int, state: ConsoleState, recording: Recording | None = None) -> None:
        super().__init__(id="compare")
        chosen = state.trials[trial_id]
        self.scenario, self.epoch = chosen.scenario, chosen.epoch
        self.recording = recording
        self.recorded_side = "left" if recording is not None else ""
        others = [a for a in state.arms() if a != "baseline"]
        if recording is not None:  # the recording of the same trial, then the replay
            self.sides = {"left": (chosen.arm, chosen.model), "right": (chosen.arm, chosen.model)}
        elif chosen.arm == "baseline":
            right_arm = others[0] if others else chosen.arm
            self.sides = {"left": ("baseline", chosen.model), "right": (right_arm, chosen.model)}
        else:
            self.sides = {"left": ("baseline", chosen.model), "right": (chosen.arm, chosen.model)}
        self.transcripts: dict[int, TranscriptState] = {}
        self.rows: list[CompareRow] = []
        self._pairs_key: tuple[object, ...] = ()
        self._pairs: list[Pair] = []
        self._shown: tuple[object, ...] = ()
        self._detail_key: tuple[object, ...] = ()
        self._trials_key: tuple[object, ...] = ()

    def compose(self) -> ComposeResult:
        yield TextPanel(id="compare-title", classes="title")
        yield TextPanel(id="compare-head")
        yield LinesView(cursor=True, id="compare-rows")
        yield TextPanel(id="compare-detail-title", classes="title")
        yield LinesView(id="compare-detail")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#compare-rows", LinesView).focus()
        self._ensure_loaded()
        self.flush()

    def _recorded_key(self) -> TrialKey:
        """The replayed side's trial key: the recording shows the trial of the same key."""
        other = "right" if self.recorded_side == "left" else "left"
        arm, model = self.sides[other]
        return (self.scenario, arm, model, self.epoch)

    def trial(self, side: str) -> TrialRecord | None:
        if self.recording is not None and side == self.recorded_side:
            return self.recording.trial(self._recorded_key())
        arm, model = self.sides[side]
        return self.state.find_trial(self.scenario, arm, model, self.epoch)

    def _ensure_loaded(self) -> None:
        if self.recording is not None and self._recorded_key() not in self.recording.transcripts:
            self.run_worker(self._load_recorded(self._recorded_key()), group="load", exit_on_error=False)
        for side in ("left", "right"):
            if side == self.recorded_side:
                continue
            trial = self.trial(side)
            if trial is not None and trial.id not in self.transcripts:
                self.transcripts[trial.id] = TranscriptState(trial.id)
                self.run_worker(self._load(trial.id), group="load", exit_on_error=False)

    async def _load(self, trial_id: int) -> None:
        loaded = await self.host.feed.load_trial(trial_id)
        self.state.add_loaded_scores(loaded.scores, loaded.unreadable_scores)
        self.transcripts[trial_id].load(loaded.events, loaded.texts)
        self.flush()

    async def _load_recorded(self, key: TrialKey) -> None:
        assert self.recording is not None
        await self.recording.load(key)
        self._shown = ()  # the recorded side arrived: rebuild
        self.flush()

    async def on_unmount(self) -> None:
        if self.recording is not None:
            await self.recording.close()

    def consume(self, events: list[StoredEvent]) -> None:
        for t in self.transcripts.values():
            t.feed(events)

    def _side(self, side: str) -> Side:
        trial = self.trial(side)
        if self.recording is not None and side == self.recorded_side:
            return trial, self.recording.transcripts.get(self._recorded_key())
        return trial, (self.transcripts.get(trial.id) if trial else None)

    def _aligned(self, left: Side, right: Side) -> list[CompareRow]:
        lcalls = left[1].calls if left[1] else []
        rcalls = right[1].calls if right[1] else []
        key = tuple(
            (t.trial_id, t.attempt, len(t.calls)) if t else None for t in (left[1], right[1])
        )  # calls only grow within an attempt; results fill in place
        if key != self._pairs_key:
            self._pairs_key, self._pairs = key, align_calls(lcalls, rcalls)
        return rows_from_pairs(self._pairs, lcalls, rcalls)

    def flush(self) -> None:
        left, right = self._side("left"), self._side("right")
        rows_view = self.query_one("#compare-rows", LinesView)
        trials_key = (left[0].id if left[0] else None, right[0].id if right[0] else None)
        key = (
            trials_key,
            left[1].version if left[1] else -1,
            right[1].version if right[1] else -1,
            self.state.scores_version,
            self.state.statuses.get(trials_key[0]) if trials_key[0] else None,
            self.state.statuses.get(trials_key[1]) if trials_key[1] else None,
            rows_view.content_width,
        )
        if key != self._shown:
            self._shown = key
            if trials_key != self._trials_key:
                self._trials_key = trials_key
                rows_view.cursor_line = 0
                rows_view.scroll_to(y=0, animate=False, immediate=True, force=True)
            self._rebuild(left, right, rows_view)
        self._flush_detail()

    def _rebuild(self, left: Side, right: Side, rows_view: LinesView) -> None:
        console = self.app.console
        title = Text(f"compare · {one_line(self.scenario, 50)} · epoch {self.epoch}", style="bold")
        if self.recording is not None:
            sides = ("recorded", "replayed") if self.recorded_side == "left" else ("replayed", "recorded")
            title.append(f" · {sides[0]} (left) vs {sides[1]} (right)", style="bold cyan")
        self.query_one("#compare-title", TextPanel).show_text(title)
        self.rows = self._aligned(left, right)
        head_panel = self.query_one("#compare-head", TextPanel)
        width = rows_view.content_width  # the head's columns stand over the rows'
        name = self.recording.name if self.recording is not None else ""
        recorded = (
            name if self.recorded_side == "left" else "",
            name if self.recorded_side == "right" else "",
        )
        head = head_text(self.state, self.rows, left, right, console, width, recorded)
        head_panel.show_text(head)
        lines = [row_line(row, width) for row in self.rows]
        lines.append(answer_line(left, right, width))
        rows_view.set_lines(lines)
        self._detail_key = ()

    def _flush_detail(self) -> None:
        rows_view = self.query_one("#compare-rows", LinesView)
        view = self.query_one("#compare-detail", LinesView)
        index = rows_view.cursor_line
        key = (index, self._shown, view.content_width)
        if key == self._detail_key:
            return
        self._detail_key = key
        total = len(self.rows) + 1
        left, right = self._side("left"), self._side("right")
        console = self.app.console
        title = Text(f"row {index + 1} of {total} · ", style="bold", end="")
        if index < len(self.rows):
            row = self.rows[index]
            lines = wrap_texts(row_detail(row), console, view.content_width)
            title.append(MARKS[row.mark], style=MARK_STYLES[row.mark])
        else:
            lines = answers_detail(left, right, console, view.content_width)
            same = answer_of(left[1]) == answer_of(right[1])
            title.append(
                f"final answers {'the same' if same else 'differ'}", style="green" if same else "yellow"
            )
        expanded = self.has_class("expanded")
        title.append(
            " · enter: back to the rows" if expanded else " · enter: full height · tab: scroll this pane",
            style="dim",
        )
        self.query_one("#compare-detail-title", TextPanel).show_text(title)
        view.set_lines(lines)
        view.scroll_to(y=0, animate=False, immediate=True, force=True)

    def on_lines_view_cursor_moved(self, message: LinesView.CursorMoved) -> None:
        if message.view.id == "compare-rows":
            self._flush_detail()

    def action_difference(self, step: int) -> None:
        rows_view = self.query_one("#compare-rows", LinesView)
        flags = [row.is_difference for row in self.rows]
        flags.append(answer_of(self._side("left")[1]) != answer_of(self._side("right")[1]))
        k = rows_view.cursor_line + step
        while 0 <= k < len(flags):
            if flags[k]:
                rows_view.move_cursor(k)
                return
            k += step
        self.notify(f"no {'later' if step > 0 else 'earlier'} difference", timeout=2)

    def action_expand(self) -> None:
        self.toggle_class("expanded")
        target = "#compare-detail" if self.has_class("expanded") else "#compare-rows"
        self.query_one(target, LinesView).focus()
        self._detail_key = ()
        self._flush_detail()

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_cycle(self, side: str, what: str) -> None:
        if side == self.recorded_side:
            self.notify(
                f"the {side} side is the recording of the other side's trial: change that side", timeout=3
            )
            return
        arm, model = self.sides[side]
        if what == "arm":
            options = self.state.arms()
            arm = options[(options.index(arm) + 1) % len(options)] if arm in options else options[0]
        else:
            options = self.state.models()
            model = options[(options.index(model) + 1) % len(options)] if model in options else options[0]
        self.sides[side] = (arm, model)
        self._ensure_loaded()
        self.flush()

    def action_swap(self) -> None:
        self.sides = {"left": self.sides["right"], "right": self.sides["left"]}
        if self.recording is not None:
            self.recorded_side = "right" if self.recorded_side == "left" else "left"
        self.flush()


__all__ = ["CompareScreen"]
