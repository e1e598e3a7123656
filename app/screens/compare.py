"""Compare view: two trials of one scenario side by side (default: baseline vs the selected arm,
same model and epoch); tool calls aligned step by step, results diffed, answers and scores beside."""

from __future__ import annotations

from itertools import zip_longest
from typing import ClassVar

from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer

from proctor.app.compare_model import align_calls, result_diff
from proctor.app.screens.base import ProctorScreen
from proctor.app.state import ConsoleState
from proctor.app.transcript_state import CallView, TranscriptState
from proctor.store.reader import StoredEvent, TrialRecord
from proctor.store.scores import DISPLAY_ORDER
from proctor.widgets.lines_view import LinesView
from proctor.widgets.sanitize import one_line, sanitize
from proctor.widgets.text_panel import TextPanel

SEP = " │ "


def _wrap(text: Text, console: Console, width: int) -> list[Text]:
    return list(text.wrap(console, max(4, width), overflow="fold")) or [Text("")]


def two_columns(left: Text, right: Text, console: Console, width: int) -> list[Text]:
    half = max(10, (width - len(SEP)) // 2)
    out: list[Text] = []
    for a, b in zip_longest(_wrap(left, console, half), _wrap(right, console, half), fillvalue=Text("")):
        a = a.copy()
        a.truncate(half, pad=True)
        line = a + Text(SEP, style="dim") + b
        line.no_wrap, line.end = True, ""
        out.append(line)
    return out


def _call_text(call: CallView | None) -> Text:
    if call is None:
        return Text("(no call)", style="dim italic")
    text = Text(f"{one_line(call.server, 20)}/{one_line(call.tool, 40)}", style="bold magenta", end="")
    text.append(f" {one_line(call.arguments, 200)}")
    if call.result is None:
        text.append("  (no result yet)", style="dim")
    elif call.is_error:
        text.append("  ERROR", style="bold red")
    return text


def _label(trial: TrialRecord | None, state: ConsoleState) -> Text:
    if trial is None:
        return Text("(no such trial)", style="dim")
    text = Text(f"#{trial.id} {one_line(trial.arm, 24)} / {one_line(trial.model, 28)}", style="bold", end="")
    text.append(f"  {state.statuses.get(trial.id, '?')}")
    return text


def compare_lines(
    state: ConsoleState,
    left: tuple[TrialRecord | None, TranscriptState | None],
    right: tuple[TrialRecord | None, TranscriptState | None],
    console: Console,
    width: int,
) -> list[Text]:
    lines = two_columns(_label(left[0], state), _label(right[0], state), console, width)
    lines.append(Text("scores", style="bold underline"))
    ls = state.scores.get(left[0].id, {}) if left[0] else {}
    rs = state.scores.get(right[0].id, {}) if right[0] else {}
    for name in DISPLAY_ORDER:
        if name in ls or name in rs:
            lv, rv = (s[name].value if name in s else None for s in (ls, rs))
            cells = [Text(f"{name:<12} " + ("—" if v is None else f"{v:.3f}")) for v in (lv, rv)]
            if lv is not None and rv is not None and lv != rv:
                cells[0 if lv > rv else 1].stylize("bold green")
            lines.extend(two_columns(cells[0], cells[1], console, width))
    lines.append(Text("tool calls, aligned by step", style="bold underline"))
    steps = align_calls(left[1].calls if left[1] else [], right[1].calls if right[1] else [])
    for i, step in enumerate(steps, 1):
        mark = "=" if step.same_call else "≠"
        head = Text(f"step {i} {mark} ", style="bold green" if step.same_call else "bold yellow", end="")
        if step.left is not None and step.right is not None:
            head.append("results identical" if step.same_result else "results differ", style="dim")
        lines.append(head)
        lines.extend(two_columns(_call_text(step.left), _call_text(step.right), console, width))
        if step.left is not None and step.right is not None and not step.same_result:
            for d in result_diff(step.left.result, step.right.result):
                style = (
                    Style(color="red")
                    if d.startswith("-")
                    else Style(color="green")
                    if d.startswith("+")
                    else Style(dim=True)
                )
                lines.extend(_wrap(Text("    " + d, style=style), console, width))
    if not steps:
        lines.append(Text("no tool calls on either side", style="dim"))
    lines.append(Text("answers", style="bold underline"))
    answers = [
        Text(sanitize(t.final_answer))
        if t is not None and t.final_answer
        else Text("(no answer yet)", style="dim")
        for t in (left[1], right[1])
    ]
    lines.extend(two_columns(answers[0], answers[1], console, width))
    for line in lines:
        line.no_wrap, line.end = True, ""
    return lines


class CompareScreen(ProctorScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("a", "cycle('left', 'arm')", "Left arm"),
        Binding("A", "cycle('right', 'arm')", "Right arm"),
        Binding("m", "cycle('left', 'model')", "Left model"),
        Binding("M", "cycle('right', 'model')", "Right model"),
        Binding("w", "swap", "Swap sides"),
    ]

    def __init__(self, trial_id: int, state: ConsoleState) -> None:
        super().__init__(id="compare")
        chosen = state.trials[trial_id]
        self.scenario, self.epoch = chosen.scenario, chosen.epoch
        others = [a for a in state.arms() if a != "baseline"]
        if chosen.arm == "baseline":
            right_arm = others[0] if others else chosen.arm
            self.sides = {"left": ("baseline", chosen.model), "right": (right_arm, chosen.model)}
        else:
            self.sides = {"left": ("baseline", chosen.model), "right": (chosen.arm, chosen.model)}
        self.transcripts: dict[int, TranscriptState] = {}
        self._shown: tuple[object, ...] = ()

    def compose(self) -> ComposeResult:
        yield TextPanel(id="compare-title", classes="title")
        yield LinesView(id="compare-body")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#compare-body", LinesView).focus()
        self._ensure_loaded()
        self.flush()

    def trial(self, side: str) -> TrialRecord | None:
        arm, model = self.sides[side]
        return self.state.find_trial(self.scenario, arm, model, self.epoch)

    def _ensure_loaded(self) -> None:
        for side in ("left", "right"):
            trial = self.trial(side)
            if trial is not None and trial.id not in self.transcripts:
                self.transcripts[trial.id] = TranscriptState(trial.id)
                self.run_worker(self._load(trial.id), group="load", exit_on_error=False)

    async def _load(self, trial_id: int) -> None:
        loaded = await self.host.feed.load_trial(trial_id)
        self.state.add_loaded_scores(loaded.scores, loaded.unreadable_scores)
        self.transcripts[trial_id].load(loaded.events, loaded.texts)
        self.flush()

    def consume(self, events: list[StoredEvent]) -> None:
        for t in self.transcripts.values():
            t.feed(events)

    def flush(self) -> None:
        left, right = self.trial("left"), self.trial("right")
        lt = self.transcripts.get(left.id) if left else None
        rt = self.transcripts.get(right.id) if right else None
        view = self.query_one("#compare-body", LinesView)
        key = (
            left.id if left else None,
            right.id if right else None,
            lt.version if lt else -1,
            rt.version if rt else -1,
            self.state.scores_version,
            self.state.statuses.get(left.id) if left else None,
            self.state.statuses.get(right.id) if right else None,
            view.content_width,
        )
        if key == self._shown:
            return
        self._shown = key
        title = Text(f"compare · {one_line(self.scenario, 50)} · epoch {self.epoch}", style="bold")
        self.query_one("#compare-title", TextPanel).show_text(title)
        view.set_lines(
            compare_lines(self.state, (left, lt), (right, rt), self.app.console, view.content_width)
        )

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_cycle(self, side: str, what: str) -> None:
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
        self.flush()


__all__ = ["CompareScreen", "compare_lines", "two_columns"]
