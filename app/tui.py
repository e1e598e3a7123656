"""The live console: a Textual app that watches one run database.

All data comes from the store (``StoreFeed``); operator actions go back as rows in the
``commands`` table. When ``engine`` is given (``proctor demo`` / ``proctor run``) it runs as a
worker in the same event loop and is cancelled when the operator quits; the run stays
resumable. New tail events are folded into ``ConsoleState`` as they are read and widgets are
updated from a ~10 Hz flush, never per event.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import shlex
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.worker import Worker, WorkerState

from proctor.app.exit_codes import ExitCode
from proctor.app.idle_gc import IdleCollector, restore_collector, tune_collector
from proctor.app.screens.base import ProctorScreen
from proctor.app.screens.dashboard import DashboardScreen
from proctor.app.screens.dialogs import ConfirmScreen, HelpScreen
from proctor.app.signals import stop_signals
from proctor.app.views.feed import Snapshot, StoreFeed, TailBatch
from proctor.app.views.key_names import KeyRow, key_rows
from proctor.app.views.state import ConsoleState
from proctor.store.lock import resume_command
from proctor.store.operator_commands import OperatorCommandName, enqueue_operator_command
from proctor.widgets.sanitize import one_line

logger = logging.getLogger(__name__)

EngineFactory = Callable[[], Awaitable[object]]
LatencyProbe = Callable[[list[float], float], None]
NOTE_S = 3.0  # "… queued": the screen that asked shows the outcome itself, where no notice covers it
IDLE_FLUSH_S = 0.25  # time-based panels (rate, throttled summaries) refresh even when no data arrives


class ProctorApp(App[int]):
    CSS_PATH = "proctor.tcss"
    TITLE = "proctor"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        # htop, k9s and lazygit quit on Ctrl-C; here too, with q's question on a live run (a
        # second Ctrl-C answers it). Priority: Textual's own Ctrl-C copies a selection.
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Help"),
        Binding("1", "dashboard", "Dashboard"),
        Binding("2", "judge", "Judge"),
        Binding("3", "anchors", "Anchors"),
        Binding("4", "tools", "Tools"),
    ]

    def __init__(
        self,
        db_path: Path,
        engine: EngineFactory | None = None,
        *,
        live: bool = False,
        poll_interval: float = 0.01,
        flush_interval: float = 0.05,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__()
        self.db_path = Path(db_path)
        self.state = ConsoleState(clock)
        self.feed = StoreFeed(self.db_path)
        self._first_snapshot: asyncio.Task[Snapshot | None] | None = None
        self._engine_factory = engine
        self._live = live  # this process is running the run's trials (run, demo), not only watching
        self._engine_worker: Worker[object] | None = None
        self._engine_started = 0.0
        self.engine_error: str | None = None
        self.leaving_message = ""  # printed on one line after the console has closed
        self._poll_interval = poll_interval
        self._flush_interval = flush_interval
        self._last_flush = 0.0
        self._flush_pending = False
        self._unflushed = False
        self.flushes = 0
        self.latency_probe: LatencyProbe | None = None
        self._unflushed_ts: list[float] = []
        self._collector = IdleCollector()
        self.failures: list[str] = []
        self._gc_before: tuple[int, int, int] | None = None
        self._stop_dialog: ConfirmScreen | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    def get_default_screen(self) -> Screen[Any]:
        return DashboardScreen()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, (events.Key, events.MouseDown)):
            self._collector.input_seen()
        await super().on_event(event)

    def on_load(self) -> None:
        # The first read starts before the screens are composed, so the two overlap.
        self._first_snapshot = asyncio.create_task(self.feed.snapshot())

    def on_mount(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in stop_signals():
            # Like quitting: the engine is cancelled and flushed, the run stays resumable.
            loop.add_signal_handler(sig, self._on_stop_signal, sig == signal.SIGHUP)
        self.set_interval(IDLE_FLUSH_S, self.flush)
        self.run_worker(self._feed_loop(), name="feed", group="feed")
        if self._engine_factory is not None:
            self._engine_started = time.monotonic()
            self._engine_worker = self.run_worker(
                self._engine_factory(), name="engine", group="engine", exit_on_error=False
            )

    async def on_unmount(self) -> None:
        await self.feed.close()
        if self._gc_before is not None:
            restore_collector(self._gc_before)

    class FeedBatch(Message):
        """New rows and events read by the feed's tail thread (posted from that thread)."""

        def __init__(self, batch: TailBatch) -> None:
            super().__init__()
            self.batch = batch

    async def _feed_loop(self) -> None:
        while True:
            first, self._first_snapshot = self._first_snapshot, None
            snapshot = await (first if first is not None else self.feed.snapshot())
            if snapshot is not None:
                break
            await asyncio.sleep(0.2)  # the engine has not created the database yet
        self.state.apply_snapshot(snapshot)
        self.flush()
        self.state.apply_details(await self.feed.details())
        self.flush()
        # The first screen is up: load the other screens' code now, off the event loop, so the
        # first paint never waited for it and the first open of each screen does not either.
        await asyncio.to_thread(_preload_screens)
        self._gc_before = tune_collector()
        self.set_interval(0.5, self._collector.tick)
        self.feed.start_tail(
            self._post_batch,
            interval=self._poll_interval,
            on_error=self._tail_failed,
        )

    def _tail_failed(self, error: BaseException) -> None:
        self.call_later(self.report_failure, "the live tail", error)

    def _post_batch(self, batch: TailBatch) -> None:
        self.post_message(self.FeedBatch(batch))

    def on_proctor_app_feed_batch(self, message: FeedBatch) -> None:
        batch = message.batch
        self.state.apply_batch(batch)
        if batch.events:
            for screen in self.screen_stack:
                if isinstance(screen, ProctorScreen):
                    screen.consume(batch.events)
            if self.latency_probe is not None:
                self._unflushed_ts.extend(e.ts for e in batch.events)
        self._schedule_flush()

    def _schedule_flush(self) -> None:
        """Flush now if the last flush is at least ``flush_interval`` old (so at most ~20 Hz: at
        10 Hz a change waited up to 100 ms for its flush, most of a 150 ms event-to-screen budget).

        Otherwise the data waits for the next batch that arrives after the interval, which
        flushes both at once: with the store committing every ~50 ms this halves the average
        wait of a fixed 10 Hz tick. A fallback timer shows the last batch of a burst anyway.
        """
        self._unflushed = True
        since = time.monotonic() - self._last_flush
        if since >= self._flush_interval:
            self.flush()
        elif not self._flush_pending:
            self._flush_pending = True
            self.set_timer(self._flush_interval * 1.5 - since, self._timed_flush)

    @property
    def settled(self) -> bool:
        """Everything folded so far is on screen (no flush due): what a screenshot waits for."""
        return not self._unflushed and not self._flush_pending

    def _timed_flush(self) -> None:
        self._flush_pending = False
        if self._unflushed:
            self.flush()

    def visible_screens(self) -> list[Screen[Any]]:
        """The top screen and those showing through modal screens above them."""
        shown: list[Screen[Any]] = []
        for screen in reversed(self.screen_stack):
            shown.append(screen)
            if not isinstance(screen, ModalScreen):
                break
        return shown

    def flush(self) -> None:
        """Copy folded state to the widgets of the visible screens (hidden ones catch up on resume)."""
        self._unflushed = False
        self._last_flush = time.monotonic()
        self.flushes += 1
        for screen in self.visible_screens():
            if isinstance(screen, ProctorScreen) and screen.is_mounted:
                try:
                    screen.flush()
                except NoMatches:  # the screen is being composed or torn down
                    continue
        if self.latency_probe is not None and self._unflushed_ts:
            stamps, self._unflushed_ts = self._unflushed_ts, []
            probe = self.latency_probe
            self.call_after_refresh(lambda: probe(stamps, time.time()))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Every worker of the console, the screens' included, fails through here."""
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        if event.worker is self._engine_worker:
            self.engine_error = one_line(str(error), 300)
            self.notify(f"the run stopped with an error: {self.engine_error}", severity="error", markup=False)
        elif isinstance(error, BaseException):
            self.report_failure(event.worker.name or event.worker.group, error)

    def report_failure(self, where: str, error: BaseException) -> None:
        """The console's one error path: a failed load, poll or command is shown, never silent.

        The failure is kept in ``failures`` (newest last) and logged with its traceback, so a
        report of a broken console has more than the one line a notification can hold.
        """
        message = f"{where or 'a background task'} failed: {type(error).__name__}: {error}"
        self.failures.append(one_line(message, 300))
        logger.error("console %s", message, exc_info=error)
        self.notify(self.failures[-1], severity="error", markup=False, timeout=10)

    def _on_stop_signal(self, hangup: bool) -> None:
        self.run_worker(self._terminate(hangup=hangup), group="terminate")

    async def _terminate(self, *, hangup: bool = False) -> None:
        await self._stop_engine()
        if hangup:
            # The terminal is gone: Textual's orderly exit writes to it and blocks forever on a
            # writer queue nobody drains (seen: consoles left running, holding the run's lock).
            # The engine is stopped and flushed; nothing else here needs an orderly exit.
            os._exit(ExitCode.TERMINATED)
        self.exit(ExitCode.TERMINATED, return_code=ExitCode.TERMINATED)

    async def action_quit(self) -> None:
        """Leave; on a run this process is still executing, ask first (it stays resumable)."""
        worker = self._engine_worker
        running = self.state.run is not None and self.state.run.status == "running"
        if self._stop_dialog is not None and self.screen is self._stop_dialog:
            self._stop_dialog.dismiss(True)  # asked again while the question is open: stop
            return
        if self._live and worker is not None and not worker.is_finished and running:

            def lines() -> list[Text]:
                # The header's own count, kept current while the dialog is open (trials keep
                # finishing underneath it).
                done, total = self.state.progress()
                return [
                    Text(f"{done}/{total} done; the trials not done stop now."),
                    Text("The run stays resumable: run the same command again with --resume."),
                    Text("q or ctrl+c again: stop", style="dim"),
                ]

            def answered(stop: bool | None) -> None:
                self._stop_dialog = None
                if stop:
                    self.run_worker(self._interrupt(), group="terminate")

            self._stop_dialog = ConfirmScreen("stop the run?", lines(), live=lines)
            self.push_screen(self._stop_dialog, answered)
            return
        await self._stop_engine()
        code = 1 if self.engine_error else 0
        self.exit(code, return_code=code)

    async def _interrupt(self) -> None:
        await self._stop_engine()
        # Printed by run_console, not as Textual's exit message: that one is wrapped at the
        # terminal's width, and a command cut over two lines cannot be pasted back.
        self.leaving_message = f"proctor: interrupted; resume with {resume_command(self.db_path)}"
        self.exit(ExitCode.INTERRUPTED, return_code=ExitCode.INTERRUPTED)

    async def _stop_engine(self) -> None:
        worker = self._engine_worker
        if worker is not None and not worker.is_finished:
            worker.cancel()
            # A cancelled or failed engine must not keep the console open.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(worker.wait(), timeout=10)

    def engine_running_since(self) -> float | None:
        """When (monotonic) this console started the run's engine, while it is still running."""
        worker = self._engine_worker
        return None if worker is None or worker.is_finished else self._engine_started

    # -- navigation and commands ----------------------------------------------------------------

    def open_trial(self, trial_id: int) -> None:
        from proctor.app.screens.trial import TrialScreen

        if isinstance(self.screen, TrialScreen) and self.screen.trial_id == trial_id:
            return
        self.push_screen(TrialScreen(trial_id))

    def open_compare(self, trial_id: int) -> None:
        if trial_id in self.state.trials:
            from proctor.app.screens.compare import CompareScreen
            from proctor.app.views.recording import DriftError, recording_of
            from proctor.widgets.sanitize import sanitize

            problem = ""
            try:  # a replay run compares each trial with its recording
                recording = recording_of(self.feed.db_path, self.state.run)
            except DriftError as exc:
                problem, recording = str(exc), None
            self.push_screen(CompareScreen(trial_id, self.state, recording))
            if problem:  # after the push: a notice belongs to the screen it is shown on
                self.notify(sanitize(problem), severity="warning", timeout=8, markup=False)

    def _pop_to_dashboard(self) -> None:
        while len(self.screen_stack) > 1:
            self.pop_screen()

    def action_dashboard(self) -> None:
        self._pop_to_dashboard()

    def action_judge(self) -> None:
        self._pop_to_dashboard()
        from proctor.app.screens.judge import JudgeScreen

        self.push_screen(JudgeScreen())

    def action_tools(self) -> None:
        self._pop_to_dashboard()
        from proctor.app.screens.tools import ToolsScreen

        self.push_screen(ToolsScreen())

    def action_anchors(self) -> None:
        self._pop_to_dashboard()
        from proctor.app.screens.anchors import AnchorsScreen

        self.push_screen(AnchorsScreen())

    def enqueue(self, command: OperatorCommandName, args: dict[str, Any], *, note: str = "") -> None:
        """Write one operator command off the event loop (SQLite may wait for the writer's lock)."""

        async def write() -> None:
            run_id = self.state.run.id if self.state.run else None
            try:
                await asyncio.to_thread(enqueue_operator_command, self.db_path, command, args, run_id)
            except Exception as exc:
                self.notify(
                    f"could not queue {command}: {one_line(str(exc), 200)}", severity="error", markup=False
                )
                return
            self.notify(note or f"{command} queued", markup=False, timeout=NOTE_S)

        self.run_worker(write(), group="commands", exit_on_error=False)

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(binding_rows(self.screen)))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Every key binding active on ``screen`` is also a palette entry."""
        yield from super().get_system_commands(screen)
        seen: set[str] = set()
        for active in screen.active_bindings.values():
            binding = active.binding
            if not binding.description or binding.action in seen or binding.action == "command_palette":
                continue
            seen.add(binding.action)
            node, action = active.node, binding.action
            yield SystemCommand(
                binding.description,
                f"key: {binding.key_display or binding.key}",
                lambda node=node, action=action: self.run_action(action, node),
            )


def binding_rows(screen: Screen[Any]) -> list[KeyRow]:
    """Every key that works on ``screen``, one row per action, grouped by what it does."""
    return key_rows(
        (key, active.binding.action, active.binding.description)
        for key, active in screen.active_bindings.items()
        if active.binding.description
    )


def _preload_screens() -> None:
    for module in ("trial", "compare", "judge", "anchors", "tools"):
        importlib.import_module(f"proctor.app.screens.{module}")


def leaving_note(db_path: Path, *, has_run: bool) -> str | None:
    """What to do next, printed when the console closes on a database that holds a run."""
    if not has_run:
        return None
    db = shlex.quote(str(db_path))
    return (
        f"next: proctor report {db} --format md    (the verdict as Markdown)\n"
        f"      proctor watch {db}    (this console again)"
    )


def run_console(db_path: Path, engine: EngineFactory | None = None, *, live: bool = False) -> int:
    """Run the console until the operator quits; returns a process exit code."""
    app = ProctorApp(db_path, engine, live=live)
    result = app.run()
    if app.leaving_message:
        print(app.leaving_message, file=sys.stderr)
    note = leaving_note(app.db_path, has_run=app.state.run is not None)
    if note is not None:
        print(note)
    return int(result if result is not None else (app.return_code or 0))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m proctor.app.tui RUN.db", file=sys.stderr)
        return 2
    return run_console(Path(args[0]))


if __name__ == "__main__":
    sys.exit(main())
