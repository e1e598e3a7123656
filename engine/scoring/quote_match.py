"""Is the code an answer quotes next to a citation really at the cited lines?

Whitespace and trailing commas never matter (code is compared with all whitespace removed, and a
``,`` before a closing bracket dropped, across line breaks, so a signature quoted on one line
matches the lines it spans as a formatter wrote them), and an ellipsis (``...``, ``…``) stands
for any text: the pieces between must appear in order. The *window* is the cited lines
``± tolerance``, and, when the cited line opens a definition (a trait, class, function, impl
block), the whole of it: a quote of a trait's method next to the trait's first line is at the
cited lines.

* The quote is in the window: **here**.
* It is somewhere else in the file: **elsewhere** (the line of the occurrence nearest to the
  cited lines is given): the cited line is wrong.
* It is nowhere verbatim (models abridge and rename): its names are compared instead. The window
  *paraphrases* it when it holds at least 60 % of the quote's distinct names (two characters or
  more) and no window of the same size elsewhere holds more; when another window holds more, the
  quote is *elsewhere* (at that window's line with most of them); when no window reaches 60 %, the quote cannot
  be checked (**unchecked**) and the citation is judged without it.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .symbol_extent import block_at

_SPACE = re.compile(r"\s+")
_TRAILING_COMMA = re.compile(r",(?=[)\]}>])")
_ELLIPSIS = re.compile(r"\.\.\.|…")
_NAME = re.compile(r"[A-Za-z_]\w+")
PARAPHRASE_SHARE = 0.6

QuoteFit = Literal["here", "elsewhere", "paraphrase", "unchecked"]


@dataclass(frozen=True)
class QuoteMatch:
    fit: QuoteFit
    line: int | None = None
    names: tuple[int, int] = (0, 0)
    """(names of the quote found, names of the quote) for a comparison by names."""


class FileText:
    """One file's text prepared for quote search (built once per file, then cached)."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        squashed = [_SPACE.sub("", line) for line in lines]
        starts: list[int] = []
        pos = 0
        for s in squashed:
            starts.append(pos)
            pos += len(s)
        joined = "".join(squashed)
        dropped = [m.start() for m in _TRAILING_COMMA.finditer(joined)]
        self.starts = [a - bisect_left(dropped, a) for a in starts]
        self.text = _TRAILING_COMMA.sub("", joined)
        self._names: list[frozenset[str]] | None = None

    def line_of(self, offset: int) -> int:
        return bisect_right(self.starts, offset)

    def names(self) -> list[frozenset[str]]:
        if self._names is None:
            self._names = [frozenset(_NAME.findall(line)) for line in self.lines]
        return self._names


def _pieces(quote: str) -> list[str]:
    # A trailing comma may be the one the file drops before a closing bracket on the next line.
    squashed = (_TRAILING_COMMA.sub("", _SPACE.sub("", part)).rstrip(",") for part in _ELLIPSIS.split(quote))
    return [p for p in squashed if p]


def _find(text: str, pieces: Sequence[str], lo: int, hi: int, span: int) -> int | None:
    """Offset of the first piece where all pieces follow in order within ``span`` characters."""
    start = lo
    while True:
        first = text.find(pieces[0], start, hi)
        if first < 0:
            return None
        pos, ok = first + len(pieces[0]), True
        for piece in pieces[1:]:
            nxt = text.find(piece, pos, min(hi, first + span))
            if nxt < 0:
                ok = False
                break
            pos = nxt + len(piece)
        if ok:
            return first
        start = first + 1


def window_of(lines: Sequence[str], first: int, last: int, tolerance: int) -> tuple[int, int]:
    lo, hi = max(1, first - tolerance), min(len(lines), last + tolerance)
    block = block_at(lines, first)
    if block is not None:
        hi = max(hi, block[1])
    return lo, hi


def match_quote(f: FileText, quote: str, first: int, last: int, tolerance: int) -> QuoteMatch:
    pieces = _pieces(quote)
    if not pieces or not f.lines:
        return QuoteMatch("unchecked")
    lo, hi = window_of(f.lines, first, last, tolerance)
    span = 3 * sum(map(len, pieces)) + 200
    end = f.starts[hi] if hi < len(f.starts) else len(f.text)
    at = _find(f.text, pieces, f.starts[lo - 1], end, span)
    if at is not None:
        return QuoteMatch("here", f.line_of(at))
    near = _nearest_elsewhere(f, pieces, span, first, last)
    if near is not None:
        return QuoteMatch("elsewhere", near)
    return _by_names(f, quote, lo, hi)


def _nearest_elsewhere(f: FileText, pieces: Sequence[str], span: int, first: int, last: int) -> int | None:
    """The line of the quote's occurrence nearest to the cited lines (none is in their window), so
    the reason gives the offset a stale line number really has."""
    before: int | None = None
    start = 0
    while (at := _find(f.text, pieces, start, len(f.text), span)) is not None:
        line = f.line_of(at)
        if line > last:
            return line if before is None or line - last < first - before else before
        before, start = line, at + 1
    return before


def _by_names(f: FileText, quote: str, lo: int, hi: int) -> QuoteMatch:
    wanted = frozenset(_NAME.findall(quote))
    if not wanted:
        return QuoteMatch("unchecked")
    per_line = [names & wanted for names in f.names()]

    def held(a: int, b: int) -> int:
        found: set[str] = set()
        for names in per_line[a - 1 : b]:
            found |= names
        return len(found)

    here = held(lo, hi)
    size = hi - lo
    best, best_at = -1, None
    for a in range(1, max(1, len(per_line) - size) + 1):
        if a + size < lo or a > hi:  # windows that do not overlap the cited one
            got = held(a, a + size)
            if got > best:
                best, best_at = got, a
    need = PARAPHRASE_SHARE * len(wanted)
    if best > here and best >= need and best_at is not None:
        window = range(best_at, best_at + size + 1)
        line = max(window, key=lambda n: (len(per_line[n - 1]) if n <= len(per_line) else -1, -n))
        return QuoteMatch("elsewhere", line, (best, len(wanted)))
    if here >= need:
        return QuoteMatch("paraphrase", lo, (here, len(wanted)))
    return QuoteMatch("unchecked", None, (here, len(wanted)))


__all__ = ["PARAPHRASE_SHARE", "FileText", "QuoteMatch", "match_quote", "window_of"]
