"""Trial view: the live transcript beside scores, citations, judgments and checks.

A finished trial opens at the top: what the agent was asked (prompts, system prompt, model
parameters) and offered (every tool's definition), then the conversation. ``v`` pages through
the claims, key points and rubric criteria with the judge's reasons.

The transcript is loaded when the screen opens and then follows the tail. Citations come from
the grounding score; ``o`` opens the cited lines at the pinned commit. A failed trial shows its
failure mode and highlights the first failing tool call (``F`` jumps to it).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Static

from proctor.app.screens.base import ProctorScreen
from proctor.app.screens.dialogs import CitationScreen
from proctor.app.screens.pager import PagerScreen
from proctor.app.screens.workbench import WorkbenchScreen, tool_target
from proctor.app.views.citation_panel import CitationRows, citation_rows
from proctor.app.views.matrix_build import cell_of
from proctor.app.views.score_views import (
    TrialCitations,
    citations_of,
    failure_of,
    not_applicable,
    verdict_text,
)
from proctor.app.views.transcript_state import TranscriptState
from proctor.app.views.trial_checks import checks_summary, checks_text
from proctor.store.read.reader import StoredEvent
from proctor.store.scores import DISPLAY_ORDER, ScoreName
from proctor.widgets.key_bar import KeyBar
from proctor.widgets.lines_view import LinesView
from proctor.widgets.sanitize import one_line
from proctor.widgets.text_panel import TextPanel
from proctor.widgets.transcript_view import TranscriptView
from proctor.widgets.trial_matrix import cell_text


class TrialScreen(ProctorScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("slash", "search", "Search"),
        Binding("n", "next_match(1)", "Next match"),
        Binding("N", "next_match(-1)", "Prev match", show=False),
        Binding("right_square_bracket", "citation(1)", "Next citation"),
        Binding("left_square_bracket", "citation(-1)", "Prev citation", show=False),
        Binding("o", "open_citation", "Open cited lines"),
        Binding("p", "page", "Page output"),
        Binding("v", "checks", "Claims & rubric"),
        Binding("w", "workbench", "Call tool by hand"),
        Binding("y", "copy_entry", "Copy entry"),
        Binding("F", "first_failing", "First failing call"),
        Binding("R", "rerun", "Re-run"),
        Binding("c", "compare", "Compare"),
        Binding("t", "follow", "Follow tail"),
    ]

    def __init__(self, trial_id: int) -> None:
        super().__init__(id=f"trial-{trial_id}")
        self.trial_id = trial_id
        self.transcript = TranscriptState(trial_id)
        self._shown_version = -1
        self._side_version = -1
        self._grounding: TrialCitations | None = None
        self._citation_rows = CitationRows([], [], [])
        self._citation_offset = 0
        self._matches: list[int] = []

    def compose(self) -> ComposeResult:
        yield TextPanel(id="trial-title", classes="title")
        yield TextPanel(id="failure", classes="failure")
        with Horizontal():
            with Vertical(id="transcript-pane"):
                yield TranscriptView(id="transcript")
                yield TextPanel(id="tail-status")
                yield Input(placeholder="search the transcript (enter: find, escape: close)", id="search")
            with Vertical(id="trial-side"):
                yield TextPanel(id="scores")
                yield Static(Text("citations  ([ ] select, o open)", style="bold"))
                yield LinesView(cursor=True, id="citations")
                yield TextPanel(id="judgments")
        yield KeyBar()

    @property
    def view(self) -> TranscriptView:
        return self.query_one(TranscriptView)

    def on_mount(self) -> None:
        self.query_one("#search", Input).display = False
        self.query_one("#failure", TextPanel).display = False
        self.view.focus()
        self._tail_status(True, 0)
        self._flush_citations()
        self.run_worker(self._load(), group="load", exit_on_error=False)
        self.flush()

    async def _load(self) -> None:
        loaded = await self.host.feed.load_trial(self.trial_id)
        self.state.add_loaded_scores(loaded.scores, loaded.unreadable_scores)
        if loaded.trial is not None and loaded.trial.status not in ("queued", "running"):
            # A finished trial reads from the top: what the agent was asked and offered first.
            self.view.following = False
            self._tail_status(False, 0)
        self.transcript.load(loaded.events, loaded.texts)
        self._side_version = -1
        self.flush()

    def consume(self, events: list[StoredEvent]) -> None:
        self.transcript.feed(events)

    # -- flush ----------------------------------------------------------------------------------

    def flush(self) -> None:
        scores = self.state.scores.get(self.trial_id, {})
        failure = failure_of(scores)
        if failure is not None:
            self.transcript.mark_failing(failure.first_failing_call_id)
        grounding = citations_of(scores)
        if grounding != self._grounding:
            self._grounding = grounding
            self.view.set_citations(grounding.badges() if grounding else [])
            self._flush_citations()
        if self.transcript.version != self._shown_version:
            self._shown_version = self.transcript.version
            self.view.set_entries(self.transcript.entries, new_events=self.transcript.take_new())
        if self.state.version != self._side_version:
            self._side_version = self.state.version
            self._flush_title()
            self._flush_scores()
            self._flush_failure()
            self._flush_judgments()

    def _flush_title(self) -> None:
        trial = self.state.trials.get(self.trial_id)
        if trial is None:
            self.query_one("#trial-title", TextPanel).show_text(
                Text(f"trial #{self.trial_id} (not in this run)")
            )
            return
        text = Text(f"trial #{trial.id} ", style="bold", end="")
        text.append(
            f"{one_line(trial.scenario, 40)} / {one_line(trial.arm, 24)} / {one_line(trial.model, 30)}"
        )
        text.append(
            f" · epoch {trial.epoch} · attempt {trial.attempt} · {cell_text(cell_of(self.state, trial.id))}"
        )
        if not self.transcript.loaded:
            text.append(" · loading…", style="dim")
        # Why, where the user looks first: the rule that failed it with its numbers, why it has
        # no verdict, or why it broke (the stored error is a stderr tail, in the transcript).
        line = self.state.verdict_line(trial.id)
        if line is not None:
            status = self.state.statuses.get(trial.id, "queued")
            text.append("\n")
            text.append_text(verdict_text(status, line))
        self.query_one("#trial-title", TextPanel).show_text(text)

    def _flush_scores(self) -> None:
        scores = self.state.scores.get(self.trial_id, {})
        text = Text("scores\n", style="bold", end="")
        names = [n for n in DISPLAY_ORDER if n in scores] + sorted(
            n for n in scores if n not in DISPLAY_ORDER and n != ScoreName.FAILURE_MODE
        )
        for name in names:
            value = scores[name].value
            text.append(f"{one_line(name, 14):<14} {'n/a' if value is None else f'{value:.3f}'}\n")
            if value is None and (na := not_applicable(scores[name])):
                text.append(f"  {one_line(na, 120)}\n", style="dim")  # whole, wrapped: the side is narrow
        for bad, problem in sorted(self.state.unreadable.get(self.trial_id, {}).items()):
            text.append(f"{one_line(bad, 14):<14} unreadable: {one_line(problem, 60)}\n", style="bold red")
        if not names and not self.state.unreadable.get(self.trial_id):
            text.append("not scored yet\n", style="dim")
        self.query_one("#scores", TextPanel).show_text(text)

    def _flush_failure(self) -> None:
        failure = failure_of(self.state.scores.get(self.trial_id, {}))
        banner = self.query_one("#failure", TextPanel)
        if banner.display != (failure is not None):
            banner.display = failure is not None
        if failure is not None:
            text = Text(
                f" failure mode: {one_line(failure.mode, 60)} ", style="bold white on dark_red", end=""
            )
            text.append(f" {one_line(failure.evidence, 160)}")
            if failure.first_failing_call_id:
                text.append(
                    f"  (first failing call #{one_line(failure.first_failing_call_id, 40)}: F)", style="bold"
                )
            banner.show_text(text)

    def _flush_citations(self) -> None:
        lines: list[Text] = []
        problem = self.state.unreadable.get(self.trial_id, {}).get(ScoreName.GROUNDING)
        if problem is not None:
            lines.append(Text(f"grounding unreadable: {one_line(problem, 120)}", style="bold red"))
        view = self.query_one("#citations", LinesView)
        if not view.size.width:
            return  # not laid out yet: its Resized message brings the width the rows are cut to
        rows = citation_rows(self._grounding.citations if self._grounding else (), view.content_width)
        self._citation_rows = rows
        self._citation_offset = len(lines)
        lines += rows.lines
        if not lines:
            lines = [Text("no citations", style="dim")]
        view.set_lines(lines)

    def on_lines_view_resized(self, message: LinesView.Resized) -> None:
        if message.view.id == "citations":
            self._flush_citations()  # the side column's width decides where paths are cut

    def _flush_judgments(self) -> None:
        verdicts = self.state.judgments.verdicts(self.trial_id)
        text = Text("judgments\n", style="bold", end="")
        for v in verdicts:
            score = v.score
            text.append(f"pass {v.pass_no} {one_line(v.judge, 20)}: ")
            if v.error:
                text.append(f"error: {one_line(v.error, 40)}\n", style="red")
            else:
                text.append("—\n" if score is None else f"{score:.3f}\n")
        if not verdicts:
            scored = ScoreName.PASSED in self.state.scores.get(self.trial_id, {})  # judging is over
            text.append("none (see llm_quality)\n" if scored else "none yet\n", style="dim")
        summary = checks_summary(self.state.scores.get(self.trial_id, {}), verdicts)
        text.append(f"checks: {summary} (v: details)\n", style="bold")
        self.query_one("#judgments", TextPanel).show_text(text)

    def _tail_status(self, following: bool, unseen: int) -> None:
        trial = self.state.trials.get(self.trial_id)
        if trial is not None and trial.status not in ("queued", "running"):
            text = Text(
                f"■ {trial.status} trial: nothing more will arrive (Home / End: top / bottom)", style="dim"
            )
        elif following:
            text = Text("● following the tail", style="green")
        else:
            text = Text(f"⏸ paused · {unseen} new events (t / End: follow)", style="bold yellow")
        text.no_wrap, text.overflow = True, "ellipsis"
        self.query_one("#tail-status", TextPanel).show_text(text)

    def on_transcript_view_tail_changed(self, message: TranscriptView.TailChanged) -> None:
        self._tail_status(message.following, message.unseen)

    # -- actions --------------------------------------------------------------------------------

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_follow(self) -> None:
        self.view.follow()

    def action_search(self) -> None:
        box = self.query_one("#search", Input)
        box.display = True
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._matches = self.view.set_query(event.value.strip())
        event.input.display = False
        self.view.focus()
        if self._matches:
            self.action_next_match(1)
        elif event.value.strip():
            self.notify("no match", severity="warning", markup=False)

    def on_key(self, event: events.Key) -> None:
        box = self.query_one("#search", Input)
        if event.key == "escape" and box.has_focus:
            box.display = False
            self.view.focus()
            event.stop()

    def action_next_match(self, delta: int) -> None:
        if not self._matches:
            return
        current = self.view.cursor_entry
        if delta > 0:
            target = next((m for m in self._matches if m > current), self._matches[0])
        else:
            target = next((m for m in reversed(self._matches) if m < current), self._matches[-1])
        self.view.select_entry(target)

    def _selected_citation(self) -> int:
        rows = self._citation_rows
        row = self.query_one("#citations", LinesView).cursor_line - self._citation_offset
        return rows.owner[max(0, min(row, len(rows.owner) - 1))] if rows.owner else 0

    def action_citation(self, delta: int) -> None:
        rows = self._citation_rows
        if not rows.starts:
            return
        index = max(0, min(len(rows.starts) - 1, self._selected_citation() + delta))
        self.query_one("#citations", LinesView).move_cursor(rows.starts[index] + self._citation_offset)

    def action_open_citation(self) -> None:
        if self._grounding is None or not self._grounding.citations:
            self.notify("this trial has no citations", severity="warning", markup=False)
            return
        g = self._grounding
        index = min(self._selected_citation(), len(g.citations) - 1)
        self.app.push_screen(CitationScreen(g.citations[index], g.repo, g.commit))

    def action_page(self) -> None:
        entry = self.view.selected()
        if entry is not None and entry.body:
            self.app.push_screen(PagerScreen(entry.title, entry.body))

    def action_workbench(self) -> None:
        entry = self.view.selected()
        call = self.transcript.call(entry.call_id) if entry is not None and entry.call_id else None
        target = tool_target(self.trial_id, call, self.transcript.offered) if call is not None else None
        if target is None:
            self.notify(
                "select an MCP tool call (▸ call …) to call it again", severity="warning", markup=False
            )
            return
        self.app.push_screen(WorkbenchScreen(target))

    def action_copy_entry(self) -> None:
        entry = self.view.selected()
        if entry is None:
            return
        self.app.copy_to_clipboard(f"{entry.title}\n{entry.clean_body()}".rstrip())
        self.notify(f"copied {entry.title[:60]} (OSC 52)", markup=False)

    def action_checks(self) -> None:
        scores = self.state.scores.get(self.trial_id, {})
        body = checks_text(scores, self.state.judgments.verdicts(self.trial_id))
        self.app.push_screen(PagerScreen(f"trial #{self.trial_id}: claims, key points, rubric", body))

    def action_first_failing(self) -> None:
        call_id = self.transcript.failing_call_id
        index = self.view.entry_index_of_call(call_id) if call_id else None
        if index is None:
            self.notify("no failing tool call recorded", severity="warning", markup=False)
            return
        self.view.select_entry(index)

    def action_rerun(self) -> None:
        if self.state.statuses.get(self.trial_id) not in ("failed", "error"):
            self.notify("only failed or errored trials are re-run", severity="warning", markup=False)
            return
        self.host.enqueue(
            "rerun_trial", {"trial_id": self.trial_id}, note=f"re-run of trial #{self.trial_id} queued"
        )
        self.view.follow()

    def action_compare(self) -> None:
        self.host.open_compare(self.trial_id)


__all__ = ["TrialScreen"]
