"""Judge view: verdicts per pass and criterion with rationales, σ against the floor, re-judge.

Re-judging only enqueues a command; the new passes arrive through the store like everything
else and appear here (and in the variance panel) as they are written.
"""

from __future__ import annotations

import time
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal

from proctor.app.screens.base import ProctorScreen
from proctor.app.views.state import ConsoleState
from proctor.engine.stats import standard_deviation
from proctor.widgets.key_bar import KeyBar
from proctor.widgets.lines_view import LinesView, wrap_texts
from proctor.widgets.sanitize import one_line, safe_text
from proctor.widgets.text_panel import TextPanel

LIST_INTERVAL_S = 0.5
JUDGEABLE = frozenset({"scoring", "passed", "failed", "error"})


def judge_detail(state: ConsoleState, trial_id: int) -> list[Text]:
    trial = state.trials.get(trial_id)
    verdicts = state.judgments.verdicts(trial_id)
    floor = state.variance_floor
    out = [
        Text(
            f"trial #{trial_id} "
            + (
                f"{one_line(trial.scenario, 40)} / {one_line(trial.arm, 20)} / {one_line(trial.model, 24)}"
                if trial
                else ""
            ),
            style="bold",
        )
    ]
    if not verdicts:
        return [*out, Text("no verdicts yet (r: judge it)", style="dim")]
    scores = [v.score for v in verdicts if v.score is not None]
    sigma = standard_deviation(scores, state.variance_sd)
    line = Text(
        "overall: "
        + "  ".join(
            f"p{v.pass_no}={'err' if v.error else ('—' if v.score is None else f'{v.score:.2f}')}"
            for v in verdicts
        )
    )
    if sigma is not None:
        line.append(f"   σ {sigma:.3f}", style="red bold" if sigma > floor else "green")
    out.append(line)
    failed = [v for v in verdicts if v.error]
    if failed:  # said at the top: a trial whose every pass failed has no llm_quality and no fairness
        head = "not judged: " if len(failed) == len(verdicts) else ""
        reasons = "; ".join(dict.fromkeys(one_line(v.error, 200) for v in failed))
        out.append(
            safe_text(f"{head}judge failed on {len(failed)} of {len(verdicts)} passes: {reasons}", "red bold")
        )
    sigmas = state.judgments.criterion_sigmas(trial_id, state.variance_sd)
    out.append(Text("criteria (score per pass, σ)", style="bold underline"))
    for (judge, name), s in sorted(sigmas.items()):
        row = Text(f"  {one_line(name, 28):<28} ", end="")
        for v in verdicts:
            if v.judge == judge:
                value = v.part_scores("criteria").get(name)
                row.append(f" p{v.pass_no}={'—' if value is None else f'{value:.2f}'}")
        if s is not None:
            row.append(f"   σ {s:.3f}", style="red bold" if s > floor else "green")
        out.append(row)
    for v in verdicts:
        out.append(Text(f"pass {v.pass_no} · {one_line(v.judge, 40)}", style="bold cyan"))
        if v.error:
            out.append(safe_text(f"  judge error: {v.error}", "red"))
            continue
        for name, score, rationale in v.rationales():
            row = Text(
                f"  {one_line(name, 28)}: {'—' if score is None else f'{score:.2f}'} ", style="bold", end=""
            )
            row.append(one_line(rationale, 400), style="")
            out.append(row)
    return out


class JudgeScreen(ProctorScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("space", "mark", "Mark trial"),
        Binding("r", "rejudge", "Re-judge marked"),
        Binding("plus,equals_sign", "passes(1)", "More passes"),
        Binding("minus", "passes(-1)", "Fewer passes"),
        Binding("enter", "open", "Open trial"),
    ]

    def __init__(self) -> None:
        super().__init__(id="judge")
        self.marked: set[int] = set()
        self.passes = 2
        self._trial_ids: list[int] = []
        self._list_key: tuple[int, ...] = ()
        self._list_at = 0.0
        self._detail_key: tuple[int, ...] = ()

    def compose(self) -> ComposeResult:
        yield TextPanel(id="judge-title", classes="title")
        with Horizontal():
            yield LinesView(cursor=True, id="judge-trials")
            yield LinesView(id="judge-detail")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#judge-trials", LinesView).focus()
        self.flush()

    def on_resize(self) -> None:
        # The detail is wrapped to its pane's width, known only once the screen is laid out (a
        # screen's first layout sends it a Resize too): wrap it again then, not at the next idle flush.
        self.call_after_refresh(self._flush_detail)

    def selected(self) -> int | None:
        view = self.query_one("#judge-trials", LinesView)
        return self._trial_ids[view.cursor_line] if self._trial_ids else None

    def flush(self) -> None:
        state = self.state
        rows = state.variance_rows()
        title = Text(
            f"judge · re-judge adds {self.passes} passes · marked {len(self.marked)} · σ ",
            style="bold",
            end="",
        )
        for row in rows:
            if row.mean_sigma is not None:
                title.append(
                    f"{row.layer} {row.mean_sigma:.3f} ",
                    style="red" if row.mean_sigma > state.variance_floor else "green",
                )
        title.append(f"({state.variance_sd} SD, floor {state.variance_floor:.2f})", style="dim")
        self.query_one("#judge-title", TextPanel).show_text(title)
        key = (
            state.judgments.version,
            state.structure_version,
            state.scores_version,
            len(self.marked),
            hash(frozenset(self.marked)),
        )
        now = time.monotonic()
        if key != self._list_key and (now - self._list_at >= LIST_INTERVAL_S or not self._list_key):
            self._list_key, self._list_at = key, now
            self._rebuild_list()
        self._flush_detail()

    def _rebuild_list(self) -> None:
        state = self.state
        ids = [t for t in state.trials if state.statuses.get(t) in JUDGEABLE or t in state.judgments.by_trial]
        self._trial_ids = sorted(ids)
        lines: list[Text] = []
        for tid in self._trial_ids:
            t = state.trials[tid]
            verdicts = state.judgments.verdicts(tid)
            scores = [v.score for v in verdicts if v.score is not None]
            line = Text(
                "[x] " if tid in self.marked else "[ ] ",
                style="bold yellow" if tid in self.marked else "dim",
                end="",
            )
            line.append(
                f"#{tid} {one_line(t.scenario, 24)} / {one_line(t.arm, 14)} / {one_line(t.model, 18)}"
            )
            line.append(f"  {len(verdicts)} passes")
            if scores:
                line.append(f" · mean {sum(scores) / len(scores):.2f}")
                sigma = standard_deviation(scores, state.variance_sd)
                if sigma is not None:
                    line.append(f" σ {sigma:.3f}", style="red" if sigma > state.variance_floor else "green")
            lines.append(line)
        if not lines:
            lines = [Text("no finished trials yet", style="dim")]
        self.query_one("#judge-trials", LinesView).set_lines(lines)

    def _flush_detail(self) -> None:
        tid = self.selected()
        view = self.query_one("#judge-detail", LinesView)
        key = (tid if tid is not None else -1, self.state.judgments.version, view.content_width)
        if key == self._detail_key:
            return
        self._detail_key = key
        lines = judge_detail(self.state, tid) if tid is not None else []
        view.set_lines(wrap_texts(lines, self.app.console, view.content_width))

    def on_lines_view_cursor_moved(self, _: LinesView.CursorMoved) -> None:
        self._flush_detail()

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_mark(self) -> None:
        tid = self.selected()
        if tid is not None:
            self.marked.symmetric_difference_update({tid})
            self._list_key = ()
            self.flush()

    def action_passes(self, delta: int) -> None:
        self.passes = max(1, min(10, self.passes + delta))
        self.flush()

    def action_rejudge(self) -> None:
        targets = sorted(self.marked) or ([t] if (t := self.selected()) is not None else [])
        if not targets:
            return
        self.host.enqueue(
            "rejudge",
            {"trial_ids": targets, "passes": self.passes},
            note=f"re-judge of {len(targets)} trial(s) × {self.passes} passes queued",
        )
        self.marked.clear()
        self._list_key = ()
        self.flush()

    def action_open(self) -> None:
        tid = self.selected()
        if tid is not None:
            self.host.open_trial(tid)


__all__ = ["JudgeScreen", "judge_detail"]
