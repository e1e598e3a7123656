"""Sparklines for live series (throughput, cost, events per second) with their latest values."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, Sparkline


@dataclass(frozen=True)
class Series:
    key: str
    label: str
    values: Sequence[float]
    summary: str = ""


class SeriesPanel(Vertical):
    """One labelled sparkline per series key; ``show`` assigns new data lists (one repaint each)."""

    DEFAULT_CSS = """
    SeriesPanel { height: auto; }
    SeriesPanel Horizontal { height: 1; }
    SeriesPanel Label { width: 30; }
    SeriesPanel Sparkline { width: 1fr; height: 1; }
    """

    def __init__(self, keys: Sequence[str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._keys = list(keys)

    def compose(self) -> ComposeResult:
        for key in self._keys:
            with Horizontal():
                yield Label(Text(key), id=f"label-{key}")
                yield Sparkline([0.0], id=f"spark-{key}")

    def show(self, series: Sequence[Series]) -> None:
        for s in series:
            if s.key not in self._keys:
                continue
            self.query_one(f"#label-{s.key}", Label).update(
                Text(f"{s.label} {s.summary}".strip()), layout=False
            )
            self.query_one(f"#spark-{s.key}", Sparkline).data = list(s.values) or [0.0]


__all__ = ["Series", "SeriesPanel"]
