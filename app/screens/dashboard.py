"""Run dashboard: the trial matrix with live status, progress and rate, cost, variance,
grounding and sparklines. Filters live only as long as the screen does."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll

from proctor.app.screens.base import ProctorScreen
from proctor.app.screens.dialogs import PromptScreen
from proctor.app.views.dashboard_detail import selected_scores_text, why_failed_text
from proctor.app.views.matrix_build import build_matrix, cell_at, cell_of
from proctor.app.views.run_status import progress_text
from proctor.app.views.score_views import verdict_text
from proctor.app.views.state import FAILURES, Filters
from proctor.store.lock import EngineLock
from proctor.widgets.arms_panel import ArmsPanel
from proctor.widgets.cost_panel import CostPanel
from proctor.widgets.grounding_panel import GroundingPanel
from proctor.widgets.key_bar import KeyBar
from proctor.widgets.sanitize import one_line
from proctor.widgets.series_panel import SeriesPanel
from proctor.widgets.text_panel import TextPanel
from proctor.widgets.trial_matrix import STATUSES, TrialMatrix, cell_text, delta_text
from proctor.widgets.variance_panel import VariancePanel

if TYPE_CHECKING:
    from proctor.app.views.surface_view import SurfaceFold

PANEL_INTERVAL_S = 0.5
WIDE_COLUMNS = 140  # from this width the panels under the matrix sit three abreast, else two
TALL_ROWS = 40  # from this height the panels say why trials failed and show the selected trial's scores
ENGINE_CHECK_S = 1.0
SURFACE_CHECK_S = 10.0  # the run's tools against the suite's tool lock, read again this often


def _cycle(options: list[str], current: str | None) -> str | None:
    """None -> first option -> ... -> last option -> None."""
    if not options:
        return None
    if current not in options:
        return options[0]
    i = options.index(current)
    return options[i + 1] if i + 1 < len(options) else None


class DashboardScreen(ProctorScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_selected", "Open trial"),
        Binding("c", "compare", "Compare"),
        Binding("R", "rerun", "Re-run trial"),
        Binding("s", "filter_status", "Status filter"),
        Binding("a", "filter_arm", "Arm filter"),
        Binding("m", "filter_model", "Model filter"),
        Binding("f", "filter_scenario", "Scenario filter"),
        Binding("x", "clear_filters", "Clear filters"),
        Binding("exclamation_mark", "failures_only", "Failures only"),
        Binding("e", "toggle_epochs", "Epochs: fold / unfold"),
        Binding("right_square_bracket", "failure(1)", "Next failure"),
        Binding("left_square_bracket", "failure(-1)", "Prev failure", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(id="dashboard")
        self.filters = Filters()
        self._unfold = False
        self._folded = False
        self._structure = -1
        self._filters_shown: Filters | None = None
        self._index: dict[int, tuple[int, int]] = {}
        self._panels_at = 0.0
        self._panels_version = -1
        self._panels_details = False
        self._flushed_version = -1
        self._title_key: object = None
        self._engine_checked_at = -ENGINE_CHECK_S
        self._engine_held = True
        self._surface_at = -SURFACE_CHECK_S
        self._surface_alert: str | None = None
        self._surface_fold: SurfaceFold | None = None
        self._why_key: object = None

    def compose(self) -> ComposeResult:
        # The matrix takes the whole width and is as tall as its rows (up to 60 % of the
        # screen); the panels share what is left, in as many columns as the width allows.
        yield TextPanel(id="run-title", classes="title")
        yield TextPanel(id="progress")
        yield TrialMatrix(id="matrix")
        yield TextPanel(id="selected")
        with VerticalScroll(id="side"):
            # Narrow panels first in each row: at two abreast the first column is the narrow one.
            yield ArmsPanel(id="arms")
            yield GroundingPanel(id="grounding")
            yield VariancePanel(id="variance")
            yield CostPanel(id="cost")
            yield SeriesPanel(["throughput", "cost", "events"], id="series")
            # Only on a tall terminal (the rows were left empty): why trials failed, by check, and
            # the selected trial's scores.
            yield TextPanel(id="why-failed")
            yield TextPanel(id="selected-scores")
        yield KeyBar()

    @property
    def tall(self) -> bool:
        return self.size.height >= TALL_ROWS

    def on_resize(self) -> None:
        side = self.query_one("#side")
        side.set_class(self.size.width >= WIDE_COLUMNS, "wide")
        if side.has_class("tall") != self.tall:
            side.set_class(self.tall, "tall")
            self._panels_version, self._why_key = -1, None  # the tall panels catch up at the next flush
            self._flush_selected()

    def on_mount(self) -> None:
        self.query_one(TrialMatrix).focus()
        self.flush()

    @property
    def matrix(self) -> TrialMatrix:
        return self.query_one(TrialMatrix)

    # -- flush ----------------------------------------------------------------------------------

    def flush(self) -> None:
        state = self.state
        self._flush_title()
        if not state.loaded:
            return
        if state.run is not None and time.monotonic() - self._surface_at >= SURFACE_CHECK_S:
            self._surface_at = time.monotonic()
            # After the paint this flush asks for: the first check loads the tool-surface code
            # (~30 ms), which would otherwise hold the loaded matrix off the screen.
            self.call_after_refresh(self._start_surface_check)
        changed = state.take_changed()
        model = self.matrix.model
        rebuild = (
            state.structure_version != self._structure
            or self.filters != self._filters_shown
            or (self.filters.status is not None and bool(changed))
            or (bool(changed) and model.baseline is None and state.baseline_arm() is not None)
        )
        if rebuild:
            self._rebuild_matrix()
        elif changed:
            # A baseline cell's score moves the Δ of every cell in its row.
            rows = {self._index[t][0] for t in changed if t in self._index}
            positions = [(r, c) for r in rows for c in range(len(model.columns)) if (r, c) in model.members]
            updates = {pos: cell_at(state, model, pos, fold=self._folded) for pos in positions}
            if updates:
                self.matrix.update_cells(updates)
        if state.version != self._flushed_version:
            self._flushed_version = state.version
            self._flush_progress()
            self._flush_selected()
        now = time.monotonic()
        due = now - self._panels_at >= PANEL_INTERVAL_S or self._panels_details != state.details_loaded
        if state.details_loaded and state.version != self._panels_version and due:
            self._panels_version, self._panels_at = state.version, now
            self._panels_details = state.details_loaded
            self.query_one(ArmsPanel).show(state.arm_rows())
            self.query_one(CostPanel).show(state.cost_rows())
            self.query_one(VariancePanel).show(
                state.variance_rows(),
                state.variance_floor,
                state.judgments.max_passes(),
                state.judgments.deterministic_judges(),
                len(state.judgments.judges()),
                state.variance_sd,
            )
            self.query_one(GroundingPanel).show(state.grounding_rows())
            self.query_one(SeriesPanel).show(state.series())
            why_key = (state.scores_version, state.status_version, state.judgments.version)
            if self.tall and why_key != self._why_key:  # a pass over every failed trial: only when they moved
                self._why_key = why_key
                self.query_one("#why-failed", TextPanel).show_text(why_failed_text(state))

    def _rebuild_matrix(self) -> None:
        epochs = len({t.epoch for t in self.state.trials.values()})
        self._folded = epochs > 1 and not self._unfold
        model = build_matrix(self.state, self.filters, fold=self._folded)
        self._index = {t: pos for pos, ids in model.members.items() for t in ids}
        self.matrix.set_model(model, keep_trial=self.matrix.selected_trial())
        self._structure = self.state.structure_version
        self._filters_shown = self.filters
        self._flush_progress()
        self._flush_selected()  # the cursor may now be on another trial: the line names it

    def _engine_stopped(self) -> bool:
        """A run marked running that no process holds: its engine died (checked once a second)."""
        run = self.state.run
        if run is None or run.status != "running":
            return False
        now = time.monotonic()
        if now - self._engine_checked_at >= ENGINE_CHECK_S:
            self._engine_checked_at = now
            self._engine_held = EngineLock.is_held(self.host.feed.db_path)
        return not self._engine_held

    def _engine_for_s(self) -> float | None:
        """Seconds since this console started the run's engine, while it runs (None: watching)."""
        since = self.host.engine_running_since()
        return None if since is None else time.monotonic() - since

    def _start_surface_check(self) -> None:
        self.run_worker(self._check_surface(), group="surface", exclusive=True, exit_on_error=False)

    async def _check_surface(self) -> None:
        """Whether the run's tools still match the suite's tool lock (views/surface_view.py)."""
        from proctor.app.views.surface_view import SurfaceFold

        if self._surface_fold is None:
            self._surface_fold = SurfaceFold()
        alert = (await self.host.feed.tool_surface(self._surface_fold)).alert()
        if alert != self._surface_alert:
            self._surface_alert = alert
            self._flush_title()

    def _flush_title(self) -> None:
        run = self.state.run
        stopped = self._engine_stopped()
        engine_for_s = self._engine_for_s() if run is None else None
        starting = run is None or (run.status == "running" and self.state.servers is not None)
        key = (
            self.state.loaded,
            run,
            stopped,
            None if engine_for_s is None else int(engine_for_s),
            self._surface_alert,
        )
        if key == self._title_key:
            return
        self._title_key = key
        if not self.state.loaded:
            title = Text("proctor · waiting for the run database …", style="bold")
        elif run is None:
            title = Text(
                "proctor · starting" if engine_for_s is not None else "proctor · no run yet", style="bold"
            )
        else:
            title = Text("proctor · ", style="bold", end="")
            title.append(one_line(run.id, 40), style="bold cyan")
            if self._surface_alert:  # names and words from servers: plain text, never markup
                title.append(f" · {one_line(self._surface_alert, 200)}", style="bold red")
            title.append(f" · suite {one_line(run.suite, 40)} · {one_line(run.status, 20)}")
            if stopped:
                title.append(" · engine stopped (--resume continues the run)", style="bold red")
        title.no_wrap, title.overflow = True, "ellipsis"
        self.query_one("#run-title", TextPanel).show_text(title)
        if starting:
            self._flush_progress()

    def _flush_progress(self) -> None:
        text = progress_text(self.state, self.filters, self._engine_for_s())
        text.no_wrap, text.overflow = True, "ellipsis"
        self.query_one("#progress", TextPanel).show_text(text)

    def _flush_selected(self) -> None:
        trial_id = self.matrix.selected_trial()
        trial = self.state.trials.get(trial_id) if trial_id is not None else None
        if self.tall:
            scores = selected_scores_text(self.state, trial.id if trial is not None else None)
            self.query_one("#selected-scores", TextPanel).show_text(scores)
        if trial is None:
            self.query_one("#selected", TextPanel).show_text(Text("no trial selected", style="dim"))
            return
        text = Text(f"#{trial.id} ", style="bold", end="")
        text.append(
            f"{one_line(trial.scenario, 40)} / {one_line(trial.arm, 24)} / {one_line(trial.model, 30)}"
        )
        text.append(f" · epoch {trial.epoch} · {cell_text(cell_of(self.state, trial.id))}")
        cell = self.matrix.model.cells.get(self.matrix.cursor)
        if cell is not None and cell.delta is not None and self.matrix.model.baseline is not None:
            epochs = "over paired epochs " if cell.folded else ""
            text.append(
                f" · Δ {delta_text(cell.delta)} {epochs}vs {one_line(self.matrix.model.baseline, 24)}"
            )
        if trial.wall_s is not None:
            text.append(f" · {trial.wall_s:.1f}s")
        # The second line says why: the rule that failed it with its numbers, or why it has no
        # verdict, or why it broke. Cut at the width (the trial header wraps it whole).
        text.append("\n")
        status = self.state.statuses.get(trial.id, "queued")
        text.append_text(verdict_text(status, self.state.verdict_line(trial.id), indent="  "))
        self.query_one("#selected", TextPanel).show_text(text)

    def on_trial_matrix_cursor_moved(self, _: TrialMatrix.CursorMoved) -> None:
        self._flush_selected()

    # -- actions --------------------------------------------------------------------------------

    def action_open_selected(self) -> None:
        trial_id = self.matrix.selected_trial()
        if trial_id is not None:
            self.host.open_trial(trial_id)

    def action_compare(self) -> None:
        trial_id = self.matrix.selected_trial()
        if trial_id is not None:
            self.host.open_compare(trial_id)

    def action_rerun(self) -> None:
        trial_id = self.matrix.selected_trial()
        if trial_id is None:
            return
        if self.state.statuses.get(trial_id) not in ("failed", "error"):
            self.notify(
                "only failed or errored trials are re-run from here", severity="warning", markup=False
            )
            return
        self.host.enqueue("rerun_trial", {"trial_id": trial_id}, note=f"re-run of trial #{trial_id} queued")
        self.host.open_trial(trial_id)

    def _set_filters(self, **changes: str | None) -> None:
        current = self.filters
        self.filters = Filters(
            status=changes.get("status", current.status),
            arm=changes.get("arm", current.arm),
            model=changes.get("model", current.model),
            scenario=str(changes.get("scenario", current.scenario) or ""),
        )
        self.flush()

    def action_filter_status(self) -> None:
        self._set_filters(status=_cycle(list(STATUSES), self.filters.status))

    def action_filter_arm(self) -> None:
        self._set_filters(arm=_cycle(self.state.arms(), self.filters.arm))

    def action_filter_model(self) -> None:
        self._set_filters(model=_cycle(self.state.models(), self.filters.model))

    def action_filter_scenario(self) -> None:
        def done(value: str | None) -> None:
            if value is not None:
                self._set_filters(scenario=value.strip())

        self.app.push_screen(
            PromptScreen("filter scenarios containing (empty: all)", self.filters.scenario), done
        )

    def action_toggle_epochs(self) -> None:
        """Several epochs fold into one row per scenario (k/n passed, mean fairness); e unfolds."""
        self._unfold = not self._unfold
        self._rebuild_matrix()

    def action_failures_only(self) -> None:
        self._set_filters(status=None if self.filters.status == "failures" else "failures")

    def action_failure(self, step: int) -> None:
        matrix = self.query_one(TrialMatrix)
        if not matrix.jump_to_status(FAILURES, step):
            self.notify("no failed or errored trial in the matrix", markup=False)

    def action_clear_filters(self) -> None:
        self.filters = Filters()
        self.flush()


__all__ = ["DashboardScreen"]
