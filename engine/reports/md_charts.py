"""Text-mode charts for the Markdown report, drawn inside fenced code blocks so they render in a
GitHub pull request: the paired fairness differences against the baseline with their intervals,
and fairness against cost (or tokens, when nothing has a price) with the Pareto frontier marked.

Names inside the blocks pass ``code_text`` (no backticks, no control characters), and the scatter
plot labels points with letters whose key is an escaped Markdown table.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass

from proctor.engine.reports.md_format import cell, code_text, one_model, signed, table, who
from proctor.engine.reports.md_verdict import comparisons
from proctor.engine.reports.report_model import ArmEntry, FairnessDelta, Report
from proctor.engine.stats import CostScorePoint, pareto_frontier

_NICE = (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0)
_LETTERS = string.ascii_uppercase + string.ascii_lowercase
FOREST_WIDTH = 31
LABEL_WIDTH = 28
PLOT_WIDTH = 50
PLOT_HEIGHT = 12
MIN_Y_SPAN = 0.1
"""The fairness axis spans at least this much, so a tiny gap does not look like a large one."""


def _span(values: Sequence[float]) -> float:
    top = max((abs(v) for v in values), default=0.0)
    return next((n for n in _NICE if n >= top), top)


def _col(x: float, span: float, width: int) -> int:
    return max(0, min(width - 1, round((x + span) / (2 * span) * (width - 1))))


def _interval(d: FairnessDelta, span: float) -> str:
    line = [" "] * FOREST_WIDTH
    zero = _col(0.0, span, FOREST_WIDTH)
    line[zero] = "│"
    lo, hi, mid = (_col(d[k], span, FOREST_WIDTH) for k in ("low", "high", "mean"))
    for i in range(lo, hi + 1):
        line[i] = "┼" if i == zero else "─"
    if hi > lo:
        line[lo], line[hi] = "├", "┤"
    line[mid] = "o"
    return "".join(line)


def forest_chart(arms: Sequence[ArmEntry]) -> list[str]:
    """Δ fairness (arm − baseline) and its 95% CI per compared arm, on one shared axis."""
    found = [(c, c.versus["fairness_delta"]) for c in comparisons(arms)]
    drawn = [(c, d) for c, d in found if d is not None]
    if not drawn:
        return []
    span = _span([v for _, d in drawn for v in (d["low"], d["high"])])
    single = one_model([c.arm for c, _ in drawn])
    labels = [
        code_text(c.arm["arm"] if single else f"{c.arm['arm']} · {c.arm['model']}", LABEL_WIDTH)
        for c, _ in drawn
    ]
    width = max(len(x) for x in labels)
    axis = [" "] * FOREST_WIDTH
    for text, where in ((signed(-span, 2), 0), ("0", FOREST_WIDTH // 2), (signed(span, 2), FOREST_WIDTH - 1)):
        start = max(0, min(FOREST_WIDTH - len(text), where - len(text) // 2))
        axis[start : start + len(text)] = list(text)
    lines = [
        "Δ fairness (arm − baseline, 0–1 scale): o mean, ├─┤ 95% CI, │ zero",
        "",
        *(
            f"{label.ljust(width)}  {_interval(d, span)}  {signed(d['mean'])} [{signed(d['low'])}, {signed(d['high'])}]"
            for label, (_, d) in zip(labels, drawn, strict=True)
        ),
        f"{' ' * width}  {''.join(axis)}",
    ]
    return ["```text", *lines, "```"]


@dataclass(frozen=True)
class _Point:
    letter: str
    entry: ArmEntry
    x: float | None
    y: float


def _axis(arms: Sequence[ArmEntry]) -> tuple[str, str, list[float | None]]:
    """(axis title, unit kind, x per arm): agent cost per trial when some is priced above $0, else tokens.

    The cost per trial is ``cost_frontier``'s (engine/reports/arm_comparisons.py), so on the cost axis
    the starred points are the report's own frontier.
    """
    costs: list[float | None] = [
        None
        if a["cost_usd"] is None or not a["finished"]
        else a["cost_usd"] / max(1, a["finished"] + a["errors"])
        for a in arms
    ]
    if any(c is not None and c > 0 for c in costs):
        return "agent cost per trial (US$)", "usd", costs
    tokens = [
        float(sum(a["tokens"][k] for k in ("reasoning", "tool_io", "output"))) / max(1, a["trials"])
        for a in arms
    ]
    estimated = " (estimated)" if any(a["tokens"]["estimated"] for a in arms) else ""
    return f"agent tokens per trial{estimated}", "tokens", list(tokens)


def _fmt_x(v: float, kind: str) -> str:
    return f"${v:,.4f}" if kind == "usd" else f"{v:,.0f}"


def _grid(
    points: Sequence[_Point], frontier: set[str]
) -> tuple[list[str], tuple[float, float], tuple[float, float]]:
    placed = [p for p in points if p.x is not None]
    xs = [p.x for p in placed if p.x is not None]
    x0, x1 = min(xs), max(xs)
    if x1 - x0 < 1e-12:
        x0, x1 = x0 - max(1.0, abs(x0) * 0.1), x1 + max(1.0, abs(x1) * 0.1)
    ys = [p.y for p in placed]
    y0, y1 = min(ys), max(ys)
    if y1 - y0 < MIN_Y_SPAN:  # a gap below judge noise must not fill the whole height
        mid = (y0 + y1) / 2
        y0, y1 = mid - MIN_Y_SPAN / 2, mid + MIN_Y_SPAN / 2
    rows = [[" "] * PLOT_WIDTH for _ in range(PLOT_HEIGHT)]
    for p in sorted(placed, key=lambda q: q.letter):
        assert p.x is not None
        r = round((y1 - p.y) / (y1 - y0) * (PLOT_HEIGHT - 1))
        c = round((p.x - x0) / (x1 - x0) * (PLOT_WIDTH - 2))
        mark = p.letter + ("*" if p.letter in frontier else "")
        while c < PLOT_WIDTH - len(mark) and any(ch != " " for ch in rows[r][c : c + len(mark) + 1]):
            c += 1
        rows[r][c : c + len(mark)] = list(mark)
    labelled = {0: y1, PLOT_HEIGHT // 2: (y0 + y1) / 2, PLOT_HEIGHT - 1: y0}
    lines = [
        (f"{labelled[i]:6.3f} ┤" if i in labelled else "       │") + "".join(row).rstrip()
        for i, row in enumerate(rows)
    ]
    return lines, (x0, x1), (y0, y1)


def frontier_chart(report: Report) -> list[str]:
    """Mean fairness against cost (or tokens) per arm × model, frontier points starred."""
    arms = [a for a in report["arms"] if a["fairness"] is not None][: len(_LETTERS)]
    if not arms:
        return []
    title, kind, xs = _axis(arms)
    ys = [f["mean"] for a in arms if (f := a["fairness"]) is not None]
    points = [
        _Point(_LETTERS[i], a, x, float(y)) for i, (a, x, y) in enumerate(zip(arms, xs, ys, strict=True))
    ]
    split = pareto_frontier(CostScorePoint(p.letter, "", p.x, p.y) for p in points)
    frontier = {p.arm for p in split.frontier}
    out = ["## Cost vs fairness", ""]
    if kind == "tokens":
        out += [
            "No agent cost above $0 is known (offline agent or unpriced models), so tokens per trial stand in "
            "for cost here; the Pareto column of Tokens and cost uses US$ and can differ.",
            "",
        ]
    placed = [p for p in points if p.x is not None]
    if placed:
        lines, (x0, x1), _ = _grid(points, frontier)
        left, right = _fmt_x(x0, kind), _fmt_x(x1, kind)
        ticks = f"{left}{' ' * max(1, PLOT_WIDTH - len(left) - len(right))}{right}"
        out += [
            "```text",
            f"mean fairness (0–1, up is better) against {title}, left is cheaper",
            "* on the Pareto frontier: no other point is at least as cheap and as good",
            "",
            *lines,
            "       └" + "─" * PLOT_WIDTH,
            f"        {ticks}",
            f"        {code_text(title)}",
            "```",
            "",
        ]
    rows = [
        [
            p.letter,
            who(p.entry),
            "not placed (unpriced)" if p.x is None else _fmt_x(p.x, kind),
            f"{p.y:.3f}",
            "unpriced" if p.x is None else "frontier" if p.letter in frontier else "dominated",
        ]
        for p in points
    ]
    axis = "US$ cost" if kind == "usd" else "tokens"
    return out + table(
        ["point", "arm · model", cell(title), "mean fairness (0–1)", f"Pareto (on {axis})"], rows
    )


__all__ = ["forest_chart", "frontier_chart"]
