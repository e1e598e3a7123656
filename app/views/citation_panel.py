"""The trial view's citation list as rows of text, fitted to the width of the side column.

Each citation is one row: its badge, its status and what the answer wrote, the path cut from the
left so the line number, the part that matters, always shows (``…/storage/sqlite.py:11``). A
hallucinated citation adds the line it points at as the commit has it, and why it is
hallucinated, wrapped. Text from the answer and the repository is sanitized and never markup.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text

from proctor.store.scores import CitationDetails
from proctor.widgets.sanitize import one_line
from proctor.widgets.transcript_model import BADGE

_HEAD = 17  # " ✗  hallucinated " before the citation
_MIN_TAIL = 8


def cut_left(text: str, width: int) -> str:
    """``text`` in ``width`` cells, cut from the left at a ``/`` where one fits (``…/a/b.py:3``)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    tail = text[len(text) - (width - 1) :]
    slash = tail.find("/")
    if 0 <= slash < len(tail) - 1 and len(tail) - slash >= _MIN_TAIL:
        tail = tail[slash:]
    return "…" + tail


@dataclass(frozen=True)
class CitationRows:
    lines: list[Text]
    owner: list[int]
    """The citation (index) each row belongs to."""
    starts: list[int]
    """Each citation's first row."""


def citation_rows(citations: Sequence[CitationDetails], width: int) -> CitationRows:
    lines: list[Text] = []
    owner: list[int] = []
    starts: list[int] = []
    width = max(_HEAD + _MIN_TAIL, width)
    for i, c in enumerate(citations):
        starts.append(len(lines))
        glyph, style = BADGE.get(c.status, ("?", Style(reverse=True)))
        head = Text(f" {glyph} ", style=style, end="")
        head.append(f" {one_line(c.status, 12):<12} ", style="dim")
        head.append(cut_left(one_line(c.raw, 400), width - _HEAD))
        lines.append(head)
        owner.append(i)
        if c.status != "hallucinated":
            continue
        if c.line is not None:
            shown = (
                "(past the end of the file)" if c.line_text is None else one_line(c.line_text, 400).strip()
            )
            row = Text(f"   {c.line}│ ", style="dim", end="")
            row.append(shown[: max(1, width - row.cell_len)], style="bold")
            lines.append(row)
            owner.append(i)
        why = textwrap.wrap(
            f"why: {one_line(c.reason, 400)}", width - 1, initial_indent="   ", subsequent_indent="        "
        )
        for part in why:
            lines.append(Text(part, style="italic", no_wrap=True, end=""))
            owner.append(i)
    return CitationRows(lines, owner, starts)


__all__ = ["CitationRows", "citation_rows", "cut_left"]
