r"""Find file citations in assistant prose.

Recognised forms (a citation's ``raw`` is exactly the text that was matched, at ``start``):

* ``path:12``, ``path:L12``, ``path:12-20`` (also ``12–20``), ``path:12:5`` (the column is not
  part of the citation), ``path#L12``, ``path#L12-L20``, ``path#L12-20``
* ``path:Symbol``, ``path:Class.method`` and ``path:Class#method`` (``()`` after the symbol is
  allowed)
* ``Symbol:12`` without a path, when the symbol is clearly code (it has ``_``, an inner capital or
  a ``.``/``#`` member, or stands in backticks): grounding looks for it at that line in any file
* any of those in backticks, and markdown links ``[text](path#L3)`` / ``[text](path:3)``; the
  link is one citation whose ``raw`` is the whole link.

A *path* is a run of letters, digits, ``_ . - / ~`` (and ``\``, Windows' separator, read as
``/``) that contains a letter and either a ``/`` or a file extension (``.py``, ``.md``; an
extension starts with a letter). Paths with spaces are
not recognised. URLs (``scheme://...``) are skipped entirely, so ``http://host:8080`` is not a
citation, and neither is a bare host name (``db.example.com:5432``: no ``/`` and a .com/.org/
.net/.edu/.gov suffix). Line numbers have at most 12 digits; ``path:0`` is a citation of a line
that cannot exist (grounding calls it unresolved).

A line citation followed directly by backticked code (``path:12``: `return x + 1`) carries that
code as ``quote``; grounding then checks that the quoted code is really at the cited lines.

For a ``path:line`` citation without a symbol, ``hint`` is an identifier the sentence names
next to it: the nearest backticked identifier on the same text line whose gap to the citation
is at most 24 characters with no sentence end (``. ; ! ?``), backtick or other citation in
between (ties go to the identifier before the citation); for a markdown link, the link text if it
is an identifier. A backticked file name (the cited one, or any ``name.ext`` with a common
source/text extension) is not a hint.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace

_PATH = r"[\w.~/\\-]*[\w~/\\-]"
_SYMBOL = r"[A-Za-z_]\w*(?:[.#][A-Za-z_]\w*)*(?:\(\))?"
_NUM = r"\d{1,12}(?!\d)"

_CITATION = re.compile(
    rf"(?<![\w.~/:#-])(?P<path>{_PATH})"
    rf"(?:"
    rf":L?(?P<line>{_NUM})(?:\s?[-–]\s?L?(?P<end>{_NUM}))?"
    rf"|#L(?P<hline>{_NUM})(?:-L?(?P<hend>{_NUM}))?"
    rf"|:(?P<symbol>{_SYMBOL})"
    rf")"
    rf"(?![\w])"
)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s<>()\[\]`'\"]*")
_MD_LINK = re.compile(r"\[(?P<text>[^\[\]\n]{0,200})\]\((?P<target>[^()\s]{1,400})\)")
_BACKTICKED = re.compile(r"`(?P<ident>[A-Za-z_][\w.]*(?:\(\))?)`")
_IDENT = re.compile(rf"^{_SYMBOL}$")
_EXT = re.compile(r"\.[A-Za-z][A-Za-z0-9_+-]{0,9}$")
_HOST_SUFFIXES = frozenset({"com", "org", "net", "edu", "gov"})
_FILE_EXTENSIONS = frozenset(
    "py pyi js mjs ts tsx jsx go rs java kt c h cc cpp hpp cs rb php swift scala vue sh bash "
    "md rst txt json yaml yml toml ini cfg conf lock html css scss sql xml csv".split()
)
_NOT_NEWLINE = re.compile(r"[^\n]")
_HINT_GAP = 24
_SENTENCE_END = re.compile(r"[.;!?](\s|$)")


@dataclass(frozen=True)
class Citation:
    """One reference to a file: a line, a line range, or a symbol."""

    raw: str
    start: int
    path: str
    line: int | None = None
    end_line: int | None = None
    symbol: str | None = None
    hint: str | None = None
    quote: str | None = None

    @property
    def end(self) -> int:
        return self.start + len(self.raw)


def looks_like_path(path: str) -> bool:
    """A candidate is a path if it has a letter and a ``/`` or a file extension."""
    if not any(c.isalpha() for c in path):
        return False
    if path.endswith((".", "/")):
        return False
    if "/" in path:
        return True
    ext = _EXT.search(path)
    return ext is not None and ext.group(0)[1:].lower() not in _HOST_SUFFIXES


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    """Blank out ``spans`` (keeping newlines and every offset) so they are not scanned again."""
    if not spans:
        return text
    parts: list[str] = []
    pos = 0
    for a, b in sorted(spans):
        a = max(a, pos)
        if b <= a:
            continue
        parts.append(text[pos:a])
        seg = text[a:b]
        parts.append(_NOT_NEWLINE.sub(" ", seg) if "\n" in seg else " " * len(seg))
        pos = b
    parts.append(text[pos:])
    return "".join(parts)


def _parse_target(target: str) -> re.Match[str] | None:
    m = _CITATION.fullmatch(target)
    if m is None or not looks_like_path(m.group("path")):
        return None
    return m


def _from_match(m: re.Match[str], raw: str, start: int, hint: str | None) -> Citation:
    line = m.group("line") or m.group("hline")
    end = m.group("end") or m.group("hend")
    symbol = m.group("symbol")
    return Citation(
        raw=raw,
        start=start,
        path=m.group("path").replace("\\", "/"),
        line=int(line) if line else None,
        end_line=int(end) if end else None,
        symbol=symbol,
        hint=hint if symbol is None else None,
    )


def extract_citations(text: str) -> list[Citation]:
    """All citations in ``text``, in order of appearance. Never raises on any input."""
    if not text:
        return []
    urls = [m.span() for m in _URL.finditer(text)]
    found: list[Citation] = []
    link_spans: list[tuple[int, int]] = []
    for m in _MD_LINK.finditer(_mask(text, urls)):
        target = _parse_target(m.group("target"))
        if target is None:
            continue
        label = m.group("text").strip().strip("`")
        hint = label if _IDENT.match(label) and not _is_path_token(label, target.group("path")) else None
        found.append(_from_match(target, m.group(0), m.start(), hint))
        link_spans.append(m.span())
    scan = _mask(text, urls + link_spans)
    plain: list[Citation] = []
    for m in _CITATION.finditer(scan):
        if looks_like_path(m.group("path").replace("\\", "/")):
            plain.append(_from_match(m, m.group(0), m.start(), None))
        elif m.group("line") and _is_code_symbol(scan, m):
            line = int(m.group("line"))
            end = int(m.group("end")) if m.group("end") else None
            symbol = m.group("path")
            plain.append(Citation(m.group(0), m.start(), "", line, end, symbol=symbol))
    if plain:
        plain = _with_quotes(text, _with_hints(text, plain))
    return sorted(found + plain, key=lambda c: c.start)


_QUOTE_AFTER = re.compile(r"`?[ \t]*[:\u2014\u2013-]?[ \t]*`(?P<quote>[^`\n]{6,400})`")


def _with_quotes(text: str, cites: list[Citation]) -> list[Citation]:
    """Attach the code a line citation quotes right after it (``path:12``: `code`)."""
    out: list[Citation] = []
    for c in cites:
        m = _QUOTE_AFTER.match(text, c.end) if c.line is not None else None
        quote = m.group("quote").strip() if m else ""
        if quote and not _IDENT.match(quote) and len(quote.replace(" ", "")) >= 6:
            c = replace(c, quote=quote)
        out.append(c)
    return out


_CODE_SYMBOL = re.compile(
    r"[A-Z]\w*(?:[.#][A-Za-z_]\w*)+|\w+#\w+|\w*_\w*[A-Za-z]\w*|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*"
)


def _is_code_symbol(text: str, m: re.Match[str]) -> bool:
    """``Symbol:12`` names code when the symbol looks like an identifier or is backticked."""
    name = m.group("path")
    backticked = m.start() > 0 and text[m.start() - 1] == "`"
    return bool(_IDENT.match(name)) and (backticked or _CODE_SYMBOL.fullmatch(name) is not None)


def _is_path_token(token: str, path: str) -> bool:
    """True for backticked text that names a file rather than a symbol."""
    base = path.rsplit("/", 1)[-1]
    if token in (path, base) or "/" in token or ":" in token:
        return True
    return "." in token and token.rsplit(".", 1)[1].lower() in _FILE_EXTENSIONS


def _with_hints(text: str, cites: list[Citation]) -> list[Citation]:
    ticks = [(m.start(), m.end(), m.group("ident")) for m in _BACKTICKED.finditer(text)]
    if not ticks:
        return cites
    starts = [t[0] for t in ticks]
    cite_starts = [c.start for c in cites]
    out: list[Citation] = []
    for c in cites:
        best = (
            None
            if c.symbol is not None or c.line is None
            else _nearest_hint(text, c, ticks, starts, cite_starts)
        )
        out.append(c if best is None else replace(c, hint=best))
    return out


def _nearest_hint(
    text: str, c: Citation, ticks: list[tuple[int, int, str]], starts: list[int], cite_starts: list[int]
) -> str | None:
    window = _HINT_GAP + 2
    lo = bisect_left(starts, c.start - window - 200)
    hi = bisect_right(starts, c.end + window)
    best: tuple[int, int, str] | None = None
    for a, b, ident in ticks[lo:hi]:
        if _is_path_token(ident.removesuffix("()"), c.path):
            continue
        if b <= c.start:
            gap, before, span = text[b : c.start], 0, (b, c.start)
            gap = gap.removesuffix("`")
        elif a >= c.end:
            gap, before, span = text[c.end : a], 1, (c.end, a)
            gap = gap.removeprefix("`")
        else:
            continue
        if len(gap) > _HINT_GAP or "\n" in gap or "`" in gap or _SENTENCE_END.search(gap):
            continue
        if bisect_left(cite_starts, span[0]) < bisect_left(cite_starts, span[1]):
            continue
        rank = (len(gap), before, ident)
        if best is None or rank[:2] < best[:2]:
            best = rank
    return None if best is None else best[2]
