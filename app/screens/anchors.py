"""Anchors view: held-out scenarios, their lock state, lock (after confirming what will be
written where, and what hashed) and verify; the outcome is read back from operator_command
events and shown at the top, where no notification covers it."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from proctor.app.screens.base import ProctorScreen
from proctor.app.screens.dialogs import ConfirmScreen
from proctor.app.views.state import ConsoleState
from proctor.engine.grading.anchor_files import AnchorError
from proctor.scenarios.errors import SuiteError
from proctor.widgets.key_bar import KeyBar
from proctor.widgets.lines_view import LinesView, wrap_texts
from proctor.widgets.sanitize import one_line, safe_text
from proctor.widgets.text_panel import TextPanel


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, tz=dt.UTC).strftime("%Y-%m-%d %H:%M:%SZ")


def anchor_lines(state: ConsoleState) -> list[Text]:
    held = state.held_out
    locks = {a.scenario: a for a in state.anchors}
    out = [Text(f"{'scenario':<28} {'trials':<28} lock", style="bold underline")]
    if not held:
        out.append(Text("this run holds out no scenarios (run config: held_out)", style="dim"))
    for scenario in held:
        trials = [t for t in state.trials.values() if t.scenario == scenario]
        counts: dict[str, int] = {}
        for t in trials:
            counts[state.statuses[t.id]] = counts.get(state.statuses[t.id], 0) + 1
        summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "none"
        line = Text(f"⚓ {one_line(scenario, 26):<26} {summary:<28} ", end="")
        lock = locks.get(scenario)
        if lock is None:
            line.append("unlocked", style="yellow")
        else:
            line.append(
                f"locked sha256 {one_line(lock.sha256, 16)[:16]}… at {_when(lock.locked_at)}", style="green"
            )
            line.append(f" ({one_line(lock.lock_file, 40)})", style="dim")
        out.append(line)
    extra = sorted(set(locks) - set(held))
    for scenario in extra:
        out.append(Text(f"  {one_line(scenario, 26):<26} (locked, not held out in this run)", style="dim"))
    return out


def _plan_lines(suite_dir: Path, db: Path) -> list[str]:
    """What ``lock_anchors`` will write and where (engine/grading/anchor_plan.py), in words."""
    from proctor.engine.grading.anchor_plan import plan_lock
    from proctor.engine.suites import load_suite

    return plan_lock(load_suite(suite_dir), db).describe()


def lock_preview(state: ConsoleState) -> list[Text]:
    """What ``lock_anchors`` will hash, per held-out scenario."""
    lines: list[Text] = []
    for scenario in state.held_out:
        lines.append(Text(f"⚓ {one_line(scenario, 60)}", style="bold"))
        trials = sorted((t for t in state.trials.values() if t.scenario == scenario), key=lambda t: t.id)
        for t in trials:
            status = state.statuses.get(t.id, "?")
            line = Text(
                f"   transcript of trial #{t.id} {one_line(t.arm, 20)} / {one_line(t.model, 24)} ", end=""
            )
            line.append(
                f"epoch {t.epoch} attempt {t.attempt} ({status})",
                style="yellow" if status in ("queued", "running") else "",
            )
            lines.append(line)
            names = sorted(state.scores.get(t.id, {}))
            lines.append(Text(f"   gold scores: {', '.join(names) or 'none recorded'}", style="dim"))
        lines.append(Text("   rubric and gold scores of the scenario (from the suite)", style="dim"))
    if not lines:
        lines.append(Text("no held-out scenarios: nothing would be hashed", style="yellow"))
    lines.append(Text(""))
    lines.append(
        Text("each scenario's transcript, rubric and gold scores are hashed with SHA-256", style="dim")
    )
    return lines


class AnchorsScreen(ProctorScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("L", "lock", "Lock anchors"),
        Binding("V", "verify", "Verify anchors"),
    ]

    def __init__(self) -> None:
        super().__init__(id="anchors")
        self._shown = -1

    def compose(self) -> ComposeResult:
        yield Static(Text("anchors · held-out scenarios", style="bold"), classes="title")
        # The outcome of L and V at the top: notifications stack at the bottom right, and there
        # they covered a verification's result for as long as they stayed.
        yield TextPanel(id="anchors-result")
        yield LinesView(id="anchors-body")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#anchors-body", LinesView).focus()
        self.flush()

    def flush(self) -> None:
        if self.state.version == self._shown:
            return
        self._shown = self.state.version
        body = self.query_one("#anchors-body", LinesView)
        body.set_lines(wrap_texts(anchor_lines(self.state), self.app.console, body.content_width))
        result = Text("", end="")
        for name in ("lock_anchors", "verify_anchors"):
            outcome = self.state.commands.get(name)
            if outcome is None:
                continue
            style = {"done": "bold green", "failed": "bold red"}.get(outcome.status, "yellow")
            result.append(f"{name}: {outcome.status}  ", style=style)
            result.append_text(safe_text(outcome.message))
            result.append("\n")
        if not result.plain:
            result = Text("L: lock (asks first) · V: verify (hashes and the Spearman gate)", style="dim")
        self.query_one("#anchors-result", TextPanel).show_text(result)

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_lock(self) -> None:
        # What will be written where is worked out from the suite and the run (a thread: it reads
        # the held-out trials' events), then shown before anything is written.
        self.run_worker(self._confirm_lock(), group="lock-plan", exclusive=True, exit_on_error=False)

    async def _confirm_lock(self) -> None:
        run = self.state.run
        run_id = run.id if run else None
        suite_dir = run.config.get("suite_dir") if run is not None else None
        try:
            if not isinstance(suite_dir, str) or not suite_dir:
                raise AnchorError("the run records no suite folder (run config: suite_dir)")
            plan: list[str] | None = await asyncio.to_thread(
                _plan_lines, Path(suite_dir), self.host.feed.db_path
            )
            problem = None
        except (AnchorError, SuiteError, OSError) as exc:
            plan, problem = None, str(exc)
        if plan is None:
            lines = [Text("cannot lock the anchors, so nothing will be written:", style="bold red")]
            lines += [safe_text(line, "red") for line in str(problem).splitlines()]
            self.app.push_screen(ConfirmScreen("lock anchors: nothing to write", lines), lambda _: None)
            return

        def confirmed(ok: bool | None) -> None:
            if ok:
                args = {"run_id": run_id} if run_id else {}
                self.host.enqueue("lock_anchors", args, note="lock of the held-out anchors queued")

        lines = [safe_text(line, "bold" if i == 0 else "") for i, line in enumerate(plan)]
        lines += [Text(""), Text("it hashes:", style="bold"), *lock_preview(self.state)]
        self.app.push_screen(ConfirmScreen("lock anchors: this will write", lines), confirmed)

    def action_verify(self) -> None:
        self.host.enqueue("verify_anchors", {}, note="anchor verification queued")


__all__ = ["AnchorsScreen", "anchor_lines", "lock_preview"]
