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

A line citation followed by backticked code (```path:12`: `return x + 1```, ``path:12 —
`code```) carries that code as ``quote``; grounding then checks that the quoted code is really at
the cited lines. Only backticks that open after the citation count: the closing backtick of a
backticked citation never opens a quote (```a.py:3`. It calls `f```: no quote), and code that
is followed by a line reference of its own (``a.py:3 — `impl X` at b.py:9``) belongs to that one.

For a ``path:line`` citation without a symbol, ``hint`` is the symbol the sentence names next to
it, and ``unpaired`` says why a symbol next to it was not paired (``citation_hints``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .citation_hints import is_path_token, with_hints

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
_IDENT = re.compile(rf"^{_SYMBOL}$")
_EXT = re.compile(r"\.[A-Za-z][A-Za-z0-9_+-]{0,9}$")
_HOST_SUFFIXES = frozenset({"com", "org", "net", "edu", "gov"})
_NOT_NEWLINE = re.compile(r"[^\n]")


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
    unpaired: str | None = None
    """Why a symbol named next to this line citation was not paired with it (ambiguous)."""
    claims_definition: bool = False
    """The sentence says ``hint`` is defined or declared at the cited line."""

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
        hint = label if _IDENT.match(label) and not is_path_token(label, target.group("path")) else None
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
        plain = _with_quotes(text, with_hints(text, plain))
    return sorted(found + plain, key=lambda c: c.start)


_QUOTE_AFTER = re.compile(r"[ \t]*(?:[:\u2014\u2013-][ \t]*)?`(?P<quote>[^`\n]{6,400})`")
_OWN_LOCATOR = re.compile(
    r"[ \t]*(?:\(|,)?[ \t]*(?:(?:at|in|on|see)\b[ \t]*)?(?:`?[\w.~/-]+\.\w+:L?\d|`?:L?\d|lines?\s+\d)"
)


def _with_quotes(text: str, cites: list[Citation]) -> list[Citation]:
    """Attach the code a line citation quotes right after it (```path:12`: `code```)."""
    out: list[Citation] = []
    for c in cites:
        if c.line is None:
            out.append(c)
            continue
        at = c.end
        if c.start > 0 and text[c.start - 1] == "`" and text[at : at + 1] == "`":
            at += 1  # the citation's own closing backtick
        m = _QUOTE_AFTER.match(text, at)
        quote = m.group("quote").strip() if m else ""
        if m is None or _OWN_LOCATOR.match(text, m.end()):
            quote = ""
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
