"""Tools (``4``): for each arm and tool, how it was used, and the tools offered but never called.

The figures are the report's (engine/reports/tool_usage.py), read in the feed's thread when
the screen opens and again on ``r``, so a run in progress can be followed without a refresh
on every event.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

from proctor.app.screens.base import ProctorScreen
from proctor.engine.reports.tool_usage import ArmToolUsage
from proctor.engine.tools.surface import own_name
from proctor.widgets.key_bar import KeyBar
from proctor.widgets.lines_view import LinesView, wrap_texts
from proctor.widgets.sanitize import one_line

if TYPE_CHECKING:
    from proctor.app.views.surface_view import SurfaceFold

HEADER = f"{'server/tool':<34} {'calls':>6} {'errors':>7} {'p50 ms':>8} {'p95 ms':>8} {'bytes/result':>13} {'trials':>7}"


def _ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1000:.0f}"


def tool_lines(usage: list[ArmToolUsage], tokens: Mapping[tuple[str, str], int] | None = None) -> list[Text]:
    """One block per arm × model: a row per called tool, then the never-called ones. With
    ``tokens`` (each tool's definition tokens, from the recorded tool lists) a row also says what
    the tool's definition costs per turn, and the never-called ones what they cost together."""
    if not usage:
        return [Text("no tool calls recorded yet", style="dim")]

    def cost(server: str, tool: str) -> int | None:
        return None if tokens is None else tokens.get((server, own_name(tool, server)))

    header = HEADER + (f" {'def tok':>8}" if tokens is not None else "")
    out: list[Text] = []
    for arm in usage:
        title = f"{one_line(arm.arm, 40)} · {one_line(arm.model, 40)} · {arm.trials} trials, {arm.offered} tools offered"
        out += [Text(title, style="bold underline"), Text(header, style="bold")]
        for t in arm.tools:
            name = one_line(f"{t.server}/{t.tool}", 34)
            errors = f"{t.errors}" + (f" {t.error_rate:.0%}" if t.error_rate else "")
            mean = "—" if t.mean_result_bytes is None else f"{t.mean_result_bytes:,.0f}"
            row = f"{name:<34} {t.calls:>6} {errors:>7} {_ms(t.latency_p50_s):>8} {_ms(t.latency_p95_s):>8} {mean:>13} {t.trials:>7}"
            if tokens is not None:
                n = cost(t.server, t.tool)
                row += f" {'—' if n is None else n:>8}"
            out.append(Text(row, style=Style(color="red") if t.errors else Style()))
        if not arm.tools:
            out.append(Text("no tool was called", style="dim"))
        if arm.never_called:
            names = ", ".join(one_line(f"{n.server}/{n.tool}", 40) for n in arm.never_called)
            costs = [cost(n.server, n.tool) for n in arm.never_called]
            spent = sum(c for c in costs if c is not None)
            what = (
                f"{len(arm.never_called)}, {spent:,} definition tokens per turn"
                if spent
                else f"{len(arm.never_called)}"
            )
            out.append(Text(f"offered but never called ({what}): {names}", style="yellow"))
        out.append(Text(""))
    return out


class ToolsScreen(ProctorScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "refresh", "Refresh"),
        Binding("escape", "back", "Back"),
    ]

    _fold: SurfaceFold | None = None  # the run's tool lists read so far, kept across refreshes

    def compose(self) -> ComposeResult:
        yield Static(
            Text(
                "tool surface and tools by arm: lock, definition tokens, calls, errors, latency, size",
                style="bold",
            )
        )
        yield LinesView(id="tools-body")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(LinesView).set_lines([Text("reading tool events…", style="dim")])
        self.query_one(LinesView).focus()
        self.action_refresh()

    def action_refresh(self) -> None:
        self.run_worker(self._load(), group="tools", exclusive=True, exit_on_error=False)

    async def _load(self) -> None:
        from proctor.app.views.surface_view import SurfaceFold, surface_lines

        if self._fold is None:
            self._fold = SurfaceFold()
        surface = await self.host.feed.tool_surface(self._fold)
        usage = await self.host.feed.tool_usage()
        view = self.query_one(LinesView)
        tokens = {(t["server"], t["tool"]): t["tokens"] for t in surface.section["tools"]}
        lines = surface_lines(surface) + tool_lines(usage, tokens or None)
        view.set_lines(wrap_texts(lines, self.app.console, max(20, view.size.width - 1)))

    def action_back(self) -> None:
        self.app.pop_screen()


__all__ = ["ToolsScreen", "tool_lines"]
