"""Citation grounding per arm: how many cited lines exist at the pinned commit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from proctor.store.scores import GroundingCounts
from proctor.widgets.sanitize import one_line
from proctor.widgets.text_panel import TextPanel


@dataclass(frozen=True)
class GroundingRow:
    """One arm: its trials' citations counted together, and how many trials say nothing."""

    arm: str
    counts: GroundingCounts
    trials_scored: int
    without_citations: int
    unreadable: int = 0


def grounding_text(rows: Sequence[GroundingRow]) -> Text:
    """Lines of at most ~48 cells, so two panels sit side by side at 100 columns."""
    text = Text("citation grounding by arm\n", style="bold", end="")
    for row in rows:
        text.append(f"{one_line(row.arm, 16):<16} ")
        counts = row.counts
        rate = counts.rate
        text.append("  —  " if rate is None else f"{rate:5.0%}", style="bold")
        text.append(f"  ✓{counts.grounded}", style="green")
        text.append(f" ?{counts.unresolved}", style="yellow")
        text.append(f" ✗{counts.hallucinated}", style="red")
        text.append(f"  {row.without_citations}/{row.trials_scored} uncited", style="dim")
        if row.unreadable:
            text.append(f" · {row.unreadable} unreadable", style="bold red")
        text.append("\n")
    if not rows:
        text.append("no grounding scores yet\n", style="dim")
    return text


class GroundingPanel(TextPanel):
    DEFAULT_CSS = "GroundingPanel { height: auto; }"

    def show(self, rows: Sequence[GroundingRow]) -> None:
        self.show_text(grounding_text(rows))


__all__ = ["GroundingPanel", "GroundingRow", "grounding_text"]
