"""The console's view of the run's tool surface: the lock check for the run header, and the
tools screen's block (definition tokens per turn per arm against pass rate, per tool).

The run's ``tools_listed`` events are folded as they arrive (only new ones are read on each
refresh), each distinct payload counted once. Every name and word shown comes from servers and suites, so it reaches the
screen as plain ``Text`` through ``one_line``, never as markup.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from proctor.engine.reports.tool_surface import LockCheck, check_lock, suite_lock_file, tool_surface_section
from proctor.engine.reports.tools_model import ToolSurfaceSection
from proctor.engine.tools.run_surface import Listing, RunSurface, slow_listing
from proctor.store.events import ToolsListed
from proctor.store.records import StoredEvent, TrialRecord
from proctor.widgets.sanitize import one_line


@dataclass(frozen=True)
class SurfaceView:
    """What the screens show: the lock check (None: no lock) and the report's section."""

    lock: LockCheck | None
    section: ToolSurfaceSection

    def alert(self) -> str | None:
        """The run header's warning, or None when the lock holds or there is none."""
        if self.lock is None or self.lock.holds:
            return None
        lines = self.lock.summary_lines()
        more = f" and {len(lines) - 2} more" if len(lines) > 2 else ""
        return "tools differ from the lock: " + "; ".join(lines[:2]) + more


class SurfaceFold:
    """The run's tool lists folded incrementally (the feed calls ``add`` with new events)."""

    def __init__(self) -> None:
        self.run = RunSurface()
        self.after_id = 0
        self._listings: dict[str, Listing] = {}

    def add(self, events: Iterable[StoredEvent]) -> None:
        for stored in events:
            self.after_id = max(self.after_id, stored.id)
            if not isinstance(stored.event, ToolsListed):
                continue
            key = stored.event.model_dump_json()  # a payload recurs in every trial of an arm
            listing = self._listings.get(key)
            if listing is None:
                listing = slow_listing(stored.event)
                if listing is None:
                    continue
                self._listings[key] = listing
            self.run.add(stored.trial_id, stored.abandoned, listing)

    def view(self, config: dict[str, Any], trials: list[TrialRecord]) -> SurfaceView:
        """The lock (read again each time: a small file a user may just have rewritten) and the
        section, as the report computes them."""
        lock_file = suite_lock_file(config)
        lock = None if lock_file is None else check_lock(self.run.surface(), lock_file)
        return SurfaceView(lock, tool_surface_section(self.run, trials, lock))


def surface_lines(view: SurfaceView | None) -> list[Text]:
    """The tools screen's first block."""
    if view is None or (not view.section["arms"] and view.lock is None):
        return []  # no tool lists recorded and no lock: nothing to say
    out = [Text("tool surface", style="bold underline")]
    lock = view.lock
    if lock is None:
        out.append(
            Text(
                "no tool lock checked (none beside the suite: proctor tools lock SUITE writes one)",
                style="dim",
            )
        )
    elif lock.holds:
        out.append(Text(f"tool lock {one_line(lock.path, 80)}: holds", style="green"))
    else:
        out.append(Text(f"tool lock {one_line(lock.path, 80)}: the run's tools differ", style="bold red"))
        out += [Text(f"  {line}", style="red") for line in lock.summary_lines()]
    header = f"{'arm · model':<44} {'tools':>6} {'def tokens/turn':>16} {'pass rate':>10}"
    out.append(Text(header, style="bold"))
    for arm in sorted(view.section["arms"], key=lambda a: (a["tokens_per_turn"], a["arm"])):
        name = one_line(f"{arm['arm']} · {arm['model']}", 44)
        rate = "—" if arm["pass_rate"] is None else f"{arm['pass_rate']:.0%} of {arm['judged']}"
        out.append(Text(f"{name:<44} {arm['tools']:>6g} {arm['tokens_per_turn']:>16,.0f} {rate:>10}"))
    out.append(Text("each tool's definition tokens: the def tok column below", style="dim"))
    out.append(Text(""))
    return out


__all__ = ["SurfaceFold", "SurfaceView", "surface_lines"]
