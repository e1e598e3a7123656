"""What every console screen shares: access to the host app's state and the flush/consume hooks.

Screens never read the store themselves: the app folds new data into ``ConsoleState`` and, at
most ~10 times a second, calls ``flush`` on the screens in the stack; ``consume`` hands them the
raw tail events (a trial screen keeps its own transcript).
"""

from __future__ import annotations

import contextlib
from typing import Any, Protocol, cast

from textual.css.query import NoMatches
from textual.dom import DOMNode
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from proctor.app.views.feed import StoreFeed
from proctor.app.views.state import ConsoleState
from proctor.store.operator_commands import OperatorCommandName
from proctor.store.read.reader import StoredEvent


class ConsoleHost(Protocol):
    state: ConsoleState
    feed: StoreFeed

    def enqueue(self, command: OperatorCommandName, args: dict[str, Any], *, note: str = "") -> None: ...

    def open_trial(self, trial_id: int) -> None: ...

    def open_compare(self, trial_id: int) -> None: ...

    def engine_running_since(self) -> float | None: ...

    def report_failure(self, where: str, error: BaseException) -> None: ...


def forward_worker_failure(node: DOMNode, event: Worker.StateChanged) -> None:
    """Hand a failed worker to the app's one error path (worker state messages do not bubble)."""
    error = event.worker.error
    if event.state == WorkerState.ERROR and isinstance(error, BaseException):
        name = type(node).__name__.removesuffix("Screen").lower() or "console"
        cast(ConsoleHost, node.app).report_failure(f"the {name} screen", error)


class ProctorScreen(Screen[None]):
    """Base for the console's full screens."""

    @property
    def host(self) -> ConsoleHost:
        return cast(ConsoleHost, self.app)

    @property
    def state(self) -> ConsoleState:
        return self.host.state

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        forward_worker_failure(self, event)

    def on_screen_resume(self) -> None:
        """Hidden screens are not flushed; catch up when shown again."""
        if self.is_mounted:
            with contextlib.suppress(NoMatches):  # resumed before its widgets are composed
                self.flush()

    def flush(self) -> None:
        """Copy what changed in the state to the widgets (called from the app's flush timer)."""

    def consume(self, events: list[StoredEvent]) -> None:
        """New tail events, before the state flush (default: nothing to do)."""


__all__ = ["ConsoleHost", "ProctorScreen", "forward_worker_failure"]
