"""Formatting helpers of the Markdown report: escaping untrusted text, numbers with their units.

Scenario ids, arm, model and tool names come from suites, servers and imported files, so every
one of them goes through ``cell`` (Markdown: pipes, markup, control and bidi characters) or,
inside a fenced code block, ``code_text`` (no backticks, so the fence cannot be closed early).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from proctor.engine.reports.report_model import ArmModel, MeanCIRow
from proctor.store.display_text import sanitize

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_MARKUP = re.compile(r"([\\`*_{}\[\]<>|#!~])")


def cell(text: object) -> str:
    """Plain text safe inside a Markdown table cell or a sentence."""
    return _MARKUP.sub(r"\\\1", _CONTROL.sub(" ", sanitize(str(text)))).strip()


def code_text(text: object, width: int | None = None) -> str:
    """Plain text safe inside a fenced code block, cut to ``width`` characters with an ellipsis."""
    out = _CONTROL.sub(" ", sanitize(str(text))).replace("`", "'").strip()
    if width is not None and len(out) > width:
        out = out[: max(0, width - 1)] + "…"
    return out


def num(v: object, digits: int = 3) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return cell(v)


def signed(v: float, digits: int = 3) -> str:
    """A difference with its sign, as the tables print it."""
    return f"{v:+.{digits}f}"


def pct(v: object) -> str:
    return "–" if not isinstance(v, int | float) else f"{100 * v:.2f} %"


def ci(m: MeanCIRow | None) -> str:
    if m is None:
        return "–"
    if m["n"] < 2:
        return f"{m['mean']:.3f} (n=1)"
    return f"{m['mean']:.3f} [{m['low']:.3f}, {m['high']:.3f}]"


def money(v: object) -> str:
    return "n/a (unpriced)" if not isinstance(v, int | float) else f"${v:,.4f}"


def seconds(v: float | None) -> str:
    """A duration with its unit: µs, ms or s."""
    if v is None:
        return "–"
    if v < 0.001:
        return f"{v * 1e6:.0f} µs"
    if v < 1:
        return f"{v * 1000:.1f} ms"
    return f"{v:.2f} s"


def size(v: float | None) -> str:
    """Bytes with their unit (kB and MB are 1,000 and 1,000,000 bytes)."""
    if v is None:
        return "–"
    if v < 10_000:
        return f"{v:,.0f} B"
    if v < 10_000_000:
        return f"{v / 1000:,.1f} kB"
    return f"{v / 1_000_000:,.1f} MB"


def p_value(p: float | None) -> str:
    if p is None:
        return "–"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def folded(summary: str, body: list[str], *, over: int = 25) -> list[str]:
    """``body`` inside a collapsed ``<details>`` block when it is longer than ``over`` lines."""
    if len(body) <= over:
        return body
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "", "</details>"]


def who(a: ArmModel) -> str:
    """``arm · model`` of a report entry, escaped."""
    return f"{cell(a['arm'])} · {cell(a['model'])}"


def one_model(entries: Sequence[ArmModel]) -> bool:
    """Whether every entry has the same model (then wide tables name columns by arm alone)."""
    return len({e["model"] for e in entries}) <= 1


def column(a: ArmModel, single_model: bool) -> str:
    """A column or chart label: the arm alone when the run has one model, else ``arm · model``."""
    return cell(a["arm"]) if single_model else who(a)


__all__ = [
    "cell",
    "ci",
    "code_text",
    "column",
    "folded",
    "money",
    "num",
    "one_model",
    "p_value",
    "pct",
    "seconds",
    "signed",
    "size",
    "table",
    "who",
]
