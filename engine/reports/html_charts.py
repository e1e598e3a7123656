"""The HTML report's charts, drawn by matplotlib as inline SVG (no script, no network).

matplotlib is the optional ``html`` extra: it is imported only here, when an HTML report is
asked for, so the other report formats and light commands never load it. Text stays text in the
SVG (``svg.fonttype: none``) and math parsing is off, so a ``$`` in an arm's name is printed, not
typeset; matplotlib escapes the text it writes into the SVG's XML.
"""

from __future__ import annotations

import io
from typing import Any

MISSING = "the HTML report draws its charts with matplotlib, an optional extra: pip install 'proctor[html]'"


class ChartsUnavailable(Exception):
    """matplotlib is not installed; the message says how to install it."""


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise ChartsUnavailable(MISSING) from None
    matplotlib.use("Agg")  # no display: a report is written in CI and over ssh
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "svg.fonttype": "none",
            "svg.hashsalt": "proctor",  # the same report gives the same SVG ids
            "text.parse_math": False,
            "font.size": 9,
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )
    return plt


def _svg(fig: Any, plt: Any, css_class: str) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    start = text.index("<svg")
    return f'<div class="chart {css_class}">' + text[start:] + "</div>"


def forest_svg(rows: list[tuple[str, float, float, float]]) -> str:
    """Δ fairness against the baseline with its 95 % interval, one row per arm · model."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 0.5 + 0.45 * max(1, len(rows))))
    labels = [r[0] for r in rows]
    ys = list(range(len(rows)))[::-1]
    for y, (_, mean, low, high) in zip(ys, rows, strict=True):
        crosses = low <= 0 <= high
        color = "#888888" if crosses else ("#1a7f37" if mean > 0 else "#cf222e")
        ax.plot([low, high], [y, y], color=color, linewidth=2)
        ax.plot([mean], [y], marker="o", color=color)
    ax.axvline(0, color="#444444", linewidth=0.8, linestyle="--")
    ax.set_yticks(ys, labels)
    ax.set_xlabel("Δ fairness vs baseline (0–1 scale), 95 % CI; grey: the interval contains 0")
    return _svg(fig, plt, "forest")


def frontier_svg(points: list[tuple[str, float, float, bool]], x_label: str) -> str:
    """Mean fairness against cost (or tokens), the Pareto frontier joined by a line."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for label, x, y, on_front in points:
        ax.scatter([x], [y], s=40, color="#0969da" if on_front else "#999999", zorder=3)
        ax.annotate(label, (x, y), textcoords="offset points", xytext=(6, 4))
    front = sorted((x, y) for _, x, y, on in points if on)
    if len(front) > 1:
        ax.plot([p[0] for p in front], [p[1] for p in front], color="#0969da", linewidth=1, zorder=2)
    ax.set_xlabel(x_label)
    ax.set_ylabel("mean fairness (0–1, up is better)")
    ax.set_title("fairness against cost: blue points are on the Pareto frontier", loc="left")
    return _svg(fig, plt, "frontier")
