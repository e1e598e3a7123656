"""Each arm against the baseline: pass rate, mean fairness, and whether its MCP tools were used.

An arm whose tools were never called gets a warning instead of a bare number: whatever
separates it from the baseline is not the server's doing (engine/reports/attribution.py). An arm
whose agent searched or read with its own tools beside MCP tools for that job says how often
(its misses, engine/scoring/misses.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from proctor.widgets.sanitize import one_line
from proctor.widgets.text_panel import TextPanel


@dataclass(frozen=True)
class ArmRow:
    arm: str
    baseline: bool
    passed: int
    judged: int
    fairness: float | None
    tool_calls: int
    attributable: bool
    misses: int | None = None


def arms_text(rows: Sequence[ArmRow]) -> Text:
    """Lines of at most ~38 cells: the side column is about 40 wide at 100x30."""
    text = Text("arm · passed · fairness · MCP calls\n", style="bold", end="")
    for row in rows:
        text.append(f"{one_line(row.arm, 16):<16} ")
        rate = f"{row.passed}/{row.judged}" if row.judged else "–"
        fair = "–" if row.fairness is None else f"{row.fairness:.2f}"
        text.append(f"{rate:>5} {fair:>4}", style="bold")
        if row.baseline:
            text.append("  baseline\n", style="dim")
        elif not row.attributable:
            text.append(f"  {row.tool_calls}\n", style="yellow")
            text.append("  ⚠ tools unused: Δ not attributable\n", style="yellow")
        else:
            text.append(f"  {row.tool_calls}\n", style="dim")
        if not row.baseline and row.misses:
            text.append(f"  {row.misses} misses: own search/read\n", style="yellow")
    if not rows:
        text.append("no trials ended yet\n", style="dim")
    return text


class ArmsPanel(TextPanel):
    DEFAULT_CSS = "ArmsPanel { height: auto; }"

    def show(self, rows: Sequence[ArmRow]) -> None:
        self.show_text(arms_text(rows))


__all__ = ["ArmRow", "ArmsPanel", "arms_text"]
