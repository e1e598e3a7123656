"""Citation grounding per arm: how many cited lines exist at the pinned commit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from proctor.widgets.sanitize import one_line
from proctor.widgets.text_panel import TextPanel


@dataclass(frozen=True)
class GroundingRow:
    arm: str
    grounded: int
    unresolved: int
    hallucinated: int
    trials_scored: int
    without_citations: int
    unreadable: int = 0

    @property
    def total(self) -> int:
        return self.grounded + self.unresolved + self.hallucinated

    @property
    def rate(self) -> float | None:
        return self.grounded / self.total if self.total else None


def grounding_text(rows: Sequence[GroundingRow]) -> Text:
    """Lines of at most ~48 cells, so two panels sit side by side at 100 columns."""
    text = Text("citation grounding by arm\n", style="bold", end="")
    for row in rows:
        text.append(f"{one_line(row.arm, 16):<16} ")
        rate = row.rate
        text.append("  —  " if rate is None else f"{rate:5.0%}", style="bold")
        text.append(f"  ✓{row.grounded}", style="green")
        text.append(f" ?{row.unresolved}", style="yellow")
        text.append(f" ✗{row.hallucinated}", style="red")
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
