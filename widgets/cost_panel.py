"""Per-model cost: tokens by phase, dollars, dollars per passed trial.

Offline models report token counts they estimated; the panel says so next to the model, since
an estimate compared with an API-reported count would be a wrong comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from proctor.widgets.sanitize import one_line
from proctor.widgets.text_panel import TextPanel


@dataclass(frozen=True)
class CostRow:
    """Totals for one model. ``tool_io_in`` is None while older events are still being read."""

    model: str
    trials: int
    passed: int
    input_tokens: int
    tool_io_in: int | None
    output_tokens: int
    cache_read: int
    cache_write: int
    judge_tokens: int | None
    cost_usd: float | None
    estimated: bool

    @property
    def reasoning_in(self) -> int | None:
        return None if self.tool_io_in is None else max(0, self.input_tokens - self.tool_io_in)

    @property
    def cost_per_pass(self) -> float | None:
        return self.cost_usd / self.passed if self.passed and self.cost_usd is not None else None


def _n(value: int | None) -> str:
    if value is None:
        return "…"
    if value >= 10_000_000:
        return f"{value / 1e6:.1f}M"
    if value >= 100_000:
        return f"{value / 1e3:.0f}k"
    return f"{value:,}"


def _usd(value: float | None, unpriced: bool = False) -> str:
    if value is None:
        return "n/a (unpriced)" if unpriced else "—"
    return f"${value:.4f}" if value < 10 else f"${value:,.2f}"


def cost_text(rows: Sequence[CostRow]) -> Text:
    """Two lines per model: name (and the estimate label), then tokens by phase and dollars."""
    text = Text("cost by model (tokens by phase)\n", style="bold", end="")
    for row in rows:
        text.append(one_line(row.model, 40), style="bold cyan")
        text.append(f" · {row.trials} trials, {row.passed} passed\n")
        if row.estimated:
            text.append("  offline model: tokens estimated\n", style="italic yellow")
        text.append(
            f"  in: reasoning {_n(row.reasoning_in)} · tool_io {_n(row.tool_io_in)} · out {_n(row.output_tokens)}\n"
        )
        judge = _n(row.judge_tokens) if row.judge_tokens is not None else "—"
        text.append(f"  cache r/w {_n(row.cache_read)}/{_n(row.cache_write)} · judge {judge} · ")
        text.append(_usd(row.cost_usd, unpriced=True), style="bold")
        text.append(f" · {_usd(row.cost_per_pass)}/pass\n")
    if not rows:
        text.append("no model calls yet\n", style="dim")
    return text


class CostPanel(TextPanel):
    DEFAULT_CSS = "CostPanel { height: auto; }"

    def show(self, rows: Sequence[CostRow]) -> None:
        self.show_text(cost_text(rows))


__all__ = ["CostPanel", "CostRow", "cost_text"]
