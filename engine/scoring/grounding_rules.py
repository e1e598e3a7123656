"""The verdict on one citation of a file that exists: what the cited lines must show.

A cited line is *hallucinated* when it contradicts what the answer says it shows, never merely
because a name is a few lines away:

* the line (or the end of a range) is past the end of the file, or the range is inverted;
* the code quoted next to it is elsewhere in the file (``quote_match``);
* the symbol named next to it (its ``hint``) occurs neither within ``±tolerance`` lines of the
  cited lines nor around them: the cited lines inside the body of a definition of that symbol
  (``symbol_extent``) are grounded too, since a call site inside ``handleHTTPRequest`` is a line of
  ``handleHTTPRequest``. When the sentence says the symbol is *defined* there, only its
  definition's first line counts (within ``±tolerance``). A hint is matched on its last
  component, case-insensitively (``Class.method`` and ``obj.method``, ``AFTER`` and ``after``);
* ``path:Symbol`` and ``Symbol:line`` name the symbol as the locator itself, so it is matched
  exactly (case-sensitive) and its owner (``Class.method``) must occur in the file too.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from proctor.store.scores import CitationDetails, CitationStatus

from .citations import Citation
from .quote_match import FileText, match_quote
from .symbol_extent import definition_extents

_IDENT = re.compile(r"[A-Za-z_]\w*")
LINE_TEXT_CHARS = 240


@dataclass(frozen=True)
class GroundingResult:
    citation: Citation
    status: CitationStatus
    reason: str
    resolved_path: str | None = None
    symbol: str | None = None
    symbol_line: int | None = None
    line_text: str | None = None
    """The cited line's text at the commit, kept for hallucinated citations (shown with why)."""

    def to_details(self) -> CitationDetails:
        return CitationDetails(
            raw=self.citation.raw,
            path=self.resolved_path or self.citation.path,
            line=self.citation.line,
            line_end=self.citation.end_line,
            symbol=self.citation.symbol or self.citation.hint,
            status=self.status,
            reason=self.reason,
            line_text=self.line_text,
        )


class FileFacts:
    """What the rules look up in one file, computed on first use and kept."""

    __slots__ = ("_extents", "_idents", "_lower", "_text", "lines", "n_lines")

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines: Sequence[str] = lines
        self.n_lines = len(lines)
        self._idents: dict[str, list[int]] | None = None
        self._lower: dict[str, list[int]] | None = None
        self._extents: dict[str, list[tuple[int, int]]] = {}
        self._text: FileText | None = None

    def line(self, n: int) -> str:
        return self.lines[n - 1]

    def _index(self) -> dict[str, list[int]]:
        if self._idents is None:
            idents: dict[str, list[int]] = {}
            for no, text in enumerate(self.lines, start=1):
                for ident in set(_IDENT.findall(text)):
                    idents.setdefault(ident, []).append(no)
            self._idents = idents
        return self._idents

    def identifiers(self) -> Iterable[str]:
        return self._index().keys()

    def occurrences(self, name: str) -> list[int]:
        """Lines where ``name`` is a whole identifier (case-sensitive), in order."""
        return self._index().get(name, [])

    def occurrences_any_case(self, name: str) -> list[int]:
        if self._lower is None:
            lower: dict[str, set[int]] = {}
            for ident, rows in self._index().items():
                lower.setdefault(ident.lower(), set()).update(rows)
            self._lower = {k: sorted(v) for k, v in lower.items()}
        return self._lower.get(name.lower(), [])

    def extents(self, name: str) -> list[tuple[int, int]]:
        """(first, last) lines of each definition of ``name`` (any case)."""
        key = name.lower()
        if key not in self._extents:
            self._extents[key] = definition_extents(self.lines, name, self.occurrences_any_case(name))
        return self._extents[key]

    def text(self) -> FileText:
        if self._text is None:
            self._text = FileText(self.lines)
        return self._text


def symbol_parts(symbol: str) -> list[str]:
    return re.split(r"[.#]|::", symbol.removesuffix("()"))


def symbol_name(symbol: str) -> str:
    return symbol_parts(symbol)[-1]


def member_occurrences(info: FileFacts, symbol: str) -> list[int]:
    """Lines where the symbol (as a locator: exact case) occurs; for ``Class.method`` only in a
    file where the class occurs too."""
    parts = symbol_parts(symbol)
    found = info.occurrences(parts[-1])
    if len(parts) > 1 and not info.occurrences(parts[-2]):
        return []
    return found


def _offset(n: int, first: int, last: int) -> int:
    return 0 if first <= n <= last else min(abs(n - first), abs(n - last))


def _nearest(found: Sequence[int], first: int, last: int) -> int:
    i = bisect_left(found, first)
    return min(found[max(0, i - 1) : i + 1], key=lambda k: _offset(k, first, last))


def clip_line(text: str) -> str:
    return text if len(text) <= LINE_TEXT_CHARS else text[: LINE_TEXT_CHARS - 1] + "…"


def _lines_label(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


def locate(
    info: FileFacts, name: str, found: Sequence[int], first: int, last: int, tolerance: int, definition: bool
) -> tuple[bool, str, int | None]:
    """(grounded, how, the line that decides) for a symbol whose occurrences are ``found``."""
    if not found:
        return False, "does not occur", None
    if definition:
        starts = [a for a, _ in info.extents(name)] or list(found)
        n = _nearest(sorted(starts), first, last)
        if _offset(n, first, last) <= tolerance:
            return True, f"is defined at line {n}", n
        return False, f"is defined at line {n}, {_offset(n, first, last)} lines from the cited line", n
    n = _nearest(found, first, last)
    if _offset(n, first, last) <= tolerance:
        return True, f"at line {n}", n
    for a, b in info.extents(name):
        if a <= first and last <= b:
            return (
                True,
                f"encloses the cited {_lines_label(first, last)} (its definition spans lines {a}-{b})",
                a,
            )
    return (
        False,
        f"is {_offset(n, first, last)} lines from the cited line and no definition of it encloses it",
        n,
    )


def classify_symbol_only(c: Citation, path: str, info: FileFacts, symbol: str | None) -> GroundingResult:
    if not symbol:
        return GroundingResult(c, "grounded", "file exists at the commit", path)
    found = member_occurrences(info, symbol)
    if not found:
        return GroundingResult(c, "hallucinated", f"{symbol} does not occur in {path}", path, symbol)
    return GroundingResult(c, "grounded", f"{symbol} occurs at line {found[0]}", path, symbol, found[0])


def classify_lines(c: Citation, path: str, info: FileFacts, tolerance: int) -> GroundingResult:
    assert c.line is not None
    first, last = c.line, c.end_line if c.end_line is not None else c.line
    if last < first:
        return GroundingResult(c, "hallucinated", f"inverted line range {first}-{last}", path)
    if last > info.n_lines:
        return GroundingResult(
            c, "hallucinated", f"line {last} is past the end of {path} ({info.n_lines} lines)", path
        )
    shown = clip_line(info.line(first))
    note = ""
    if c.quote:
        q = match_quote(info.text(), c.quote, first, last, tolerance)
        if q.fit == "here":
            assert q.line is not None
            inside = (
                f", in the definition line {first} opens" if _offset(q.line, first, last) > tolerance else ""
            )
            return GroundingResult(c, "grounded", f"quoted code at line {q.line}{inside}", path, None, q.line)
        if q.fit == "paraphrase":
            found, of = q.names
            return GroundingResult(
                c,
                "grounded",
                f"the quote is abridged: {found} of its {of} names are at the cited lines",
                path,
            )
        if q.fit == "elsewhere":
            assert q.line is not None
            return GroundingResult(
                c,
                "hallucinated",
                f"the quoted code is at line {q.line}, {_offset(q.line, first, last)} lines from the cited "
                f"{_lines_label(first, last)}, not within {tolerance} lines of it",
                path,
                None,
                q.line,
                shown,
            )
        note = "; the quoted code is not in the file, so it was not checked"
    hint = c.hint
    if hint is None:
        why = f"; {c.unpaired}" if c.unpaired else note
        return GroundingResult(c, "grounded", f"line {last} exists ({info.n_lines} lines){why}", path)
    name = symbol_name(hint)
    ok, how, n = locate(
        info, name, info.occurrences_any_case(name), first, last, tolerance, c.claims_definition
    )
    if ok:
        return GroundingResult(c, "grounded", f"{hint} {how}{note}", path, hint, n)
    where = f" (nearest: line {n}; tolerance ±{tolerance})" if n is not None else f" in {path}"
    return GroundingResult(c, "hallucinated", f"{hint} {how}{where}", path, hint, n, shown)


__all__ = [
    "LINE_TEXT_CHARS",
    "FileFacts",
    "GroundingResult",
    "classify_lines",
    "classify_symbol_only",
    "clip_line",
    "locate",
    "member_occurrences",
    "symbol_name",
    "symbol_parts",
]
