"""Where two versions of a line differ, within the line: the compare view's result and argument diffs.

A unified diff says *which* lines changed; in a tool result that is often one long line (a
JSON value, a path list) where the change is a few characters. Each removed line is paired with
the added line at the same place of its hunk, and the characters that differ are marked, so
the eye goes to ``42`` vs ``43`` rather than reading two 200-character lines. The text is
sanitized before it is compared, so marks fall on what is shown.
"""

from __future__ import annotations

from difflib import SequenceMatcher

from rich.text import Text

from proctor.widgets.sanitize import sanitize

CHANGED = "bold reverse"
# Lines past this length are not compared character by character: SequenceMatcher is quadratic
# in the worst case, and such a line is cut for display anyway.
MAX_COMPARE_CHARS = 2000


def changed_spans(a: str, b: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Character ranges of ``a`` and of ``b`` that are not part of their common subsequence."""
    if a == b or len(a) > MAX_COMPARE_CHARS or len(b) > MAX_COMPARE_CHARS:
        return [], []
    left: list[tuple[int, int]] = []
    right: list[tuple[int, int]] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        if i2 > i1:
            left.append((i1, i2))
        if j2 > j1:
            right.append((j1, j2))
    return left, right


def marked_pair(a: str, b: str, left_style: str, right_style: str, skip: int = 0) -> tuple[Text, Text]:
    """``a`` and ``b`` as Text in their side's style, the characters that differ marked (the
    first ``skip`` characters of each, a diff's ``-``/``+``, are not compared)."""
    left, right = Text(a, style=left_style), Text(b, style=right_style)
    a_spans, b_spans = changed_spans(a[skip:], b[skip:])
    for start, end in a_spans:
        left.stylize(CHANGED, start + skip, end + skip)
    for start, end in b_spans:
        right.stylize(CHANGED, start + skip, end + skip)
    return left, right


def _style(line: str) -> str:
    if line.startswith("@@"):
        return "cyan"
    return "red" if line.startswith("-") else "green" if line.startswith("+") else "dim"


def unified_diff_text(lines: list[str]) -> list[Text]:
    """Unified-diff lines as Text: removed red, added green, and within a run of removals
    followed by a run of additions, the n-th removal and the n-th addition marked where they differ."""
    clean = [sanitize(line) for line in lines]
    out = [Text(line, style=_style(line)) for line in clean]
    i = 0
    while i < len(clean):
        if not clean[i].startswith("-"):
            i += 1
            continue
        removed_end = i
        while removed_end < len(clean) and clean[removed_end].startswith("-"):
            removed_end += 1
        added_end = removed_end
        while added_end < len(clean) and clean[added_end].startswith("+"):
            added_end += 1
        for k in range(min(removed_end - i, added_end - removed_end)):
            a, b = clean[i + k], clean[removed_end + k]
            out[i + k], out[removed_end + k] = marked_pair(a, b, "red", "green", skip=1)
        i = added_end
    return out


__all__ = ["CHANGED", "changed_spans", "marked_pair", "unified_diff_text"]
