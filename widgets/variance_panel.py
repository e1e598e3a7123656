"""Judge variance by layer against the floor below which score deltas are noise."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from proctor.widgets.text_panel import TextPanel


@dataclass(frozen=True)
class VarianceRow:
    """σ across judge passes for one layer (in the run's convention): mean over its groups, and the
    worst group."""

    layer: str
    mean_sigma: float | None
    max_sigma: float | None
    groups: int


def variance_text(
    rows: Sequence[VarianceRow],
    floor: float,
    passes: int,
    deterministic: Sequence[str] = (),
    judges: int = 0,
    sd: str = "sample",
) -> Text:
    """One line per layer: a bar of mean σ relative to the floor (the floor is the 4th cell).

    ``sd`` names σ's convention (``sample`` or ``population``), in which the floor is compared. A
    deterministic judge (the offline lexical one) agrees with itself by construction: its σ of
    0 would read as a perfectly reliable judge, so the panel says what it is instead.
    """
    text = Text(f"judge σ ({sd} SD) · floor {floor:.2f} · ≤{passes} passes\n", style="bold", end="")
    if deterministic and len(deterministic) >= judges:
        names = ", ".join(deterministic)
        text.append(f"deterministic judge ({names}):\n", style="yellow")
        text.append("its passes agree by construction, so σ\n", style="yellow")
        text.append("measures nothing; add an LLM judge\n", style="yellow")
        return text
    if deterministic:
        text.append(f"σ leaves out {', '.join(deterministic)} (deterministic)\n", style="dim")
    for row in rows:
        text.append(f"{row.layer:<10}")
        if row.mean_sigma is None or row.max_sigma is None:
            text.append("— (needs ≥2 passes)\n", style="dim")
            continue
        noisy = row.mean_sigma > floor + 1e-9
        filled = min(8, round(row.mean_sigma / max(floor, 1e-9) * 4))
        text.append("█" * filled + "·" * (8 - filled), style="red" if noisy else "green")
        text.append(f" σ {row.mean_sigma:.3f} max {row.max_sigma:.3f} n={row.groups} ")
        if noisy:
            text.append("noisy\n", style="bold red")
        elif row.max_sigma > floor + 1e-9:
            text.append("some noisy\n", style="yellow")
        else:
            text.append("ok\n", style="green")
    if not rows:
        text.append("no judgments yet\n", style="dim")
    return text


class VariancePanel(TextPanel):
    DEFAULT_CSS = "VariancePanel { height: auto; }"

    def show(
        self,
        rows: Sequence[VarianceRow],
        floor: float,
        passes: int,
        deterministic: Sequence[str] = (),
        judges: int = 0,
        sd: str = "sample",
    ) -> None:
        self.show_text(variance_text(rows, floor, passes, deterministic, judges, sd))


__all__ = ["VariancePanel", "VarianceRow", "variance_text"]
