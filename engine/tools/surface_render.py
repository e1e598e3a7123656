"""A surface diff as plain lines, for terminals (its JSON form is the report's, in
engine/reports/tool_surface.py).

The text form puts every name and word from a server through ``one_line`` (escape sequences and
controls removed, newlines folded), so a description cannot forge a line of the output or act on
the terminal.
"""

from __future__ import annotations

from proctor.engine.tools.surface_diff import SurfaceDiff, ToolChange
from proctor.store.display_text import one_line

KINDS = ("added", "removed", "renamed", "changed")
NAME_CHARS = 80
WORDS_CHARS = 400


def tool_label(c: ToolChange) -> str:
    return f"{one_line(c.server, NAME_CHARS)}/{one_line(c.tool, NAME_CHARS)}"


def change_summary(c: ToolChange) -> str:
    """One line: what happened to the tool (used by the gate, the console and the report)."""
    if c.kind == "renamed":
        return f"{tool_label(c)}: renamed from {one_line(c.old_name, NAME_CHARS)} (breaking)"
    if c.kind in ("added", "removed"):
        return f"{tool_label(c)}: {c.kind}" + (" (breaking)" if c.breaking else "")
    parts = []
    if c.description is not None:
        parts.append("description changed")
    if c.schema:
        broken = sum(s.breaking for s in c.schema)
        parts.append(f"input schema changed ({broken} breaking)" if broken else "input schema changed")
    parts += [f"{label} changed" for label in c.other]
    return f"{tool_label(c)}: {', '.join(parts)}"


def diff_lines(diff: SurfaceDiff) -> list[str]:
    """The diff for a terminal: a line per tool, then its schema changes and its words."""
    if diff.same:
        return ["tool surfaces are the same"]
    counts = {k: sum(c.kind == k for c in diff.changes) for k in KINDS}
    lines = [
        "tool surface differs: "
        + ", ".join(f"{n} {k}" for k, n in counts.items() if n)
        + (" (breaking)" if diff.breaking else " (nothing breaking)")
    ]
    for c in diff.changes:
        mark = {"added": "+", "removed": "-", "renamed": "~", "changed": "~"}[c.kind]
        lines.append(f"{mark} {change_summary(c)}")
        for s in c.schema:
            lines.append(
                f"    {'BREAKING' if s.breaking else 'ok      '} {one_line(s.path, NAME_CHARS)}: {one_line(s.change, NAME_CHARS * 2)}"
            )
        if c.description is not None:
            lines.append(f"    description: {one_line(c.description.text(), WORDS_CHARS)}")
    return lines


__all__ = ["KINDS", "change_summary", "diff_lines", "tool_label"]
