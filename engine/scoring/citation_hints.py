r"""Pair a line citation with the symbol the sentence names next to it (its ``hint``).

A candidate is backticked code that names a symbol: an identifier, ``Owner.member``,
``Owner::member``, ``Owner#member``, optionally with a macro ``!``, generic arguments
(``Query<T>``) or a simple argument list (``full_dispatch_request(ctx)``); the name without the
arguments is the hint. A backticked file name (the cited one, or any ``name.ext`` with a common
source/text extension) is not a candidate.

Each candidate belongs to at most one *locator* (a citation, or a bare line reference such as
`` `:85` ``, ``(239)`` or ``line 255`` that names a line of a file said elsewhere): the nearest one
on the same text line, before or after it, whose gap is at most 24 characters with no sentence end
(``. ; ! ?``), backtick or other locator in between; on a tie it belongs to the locator after it
(```Foo` (a.py:3)``). A citation inside parentheses does not reach past their end
(``(a.py:3) wraps `Foo``` names no hint). A citation takes the nearest candidate that belongs to
it, the one before it on a tie.

A pairing is ambiguous, and left unchecked (``unpaired`` says why), when the candidate is one of
a list of backticked names (```A`, `B` | x.go:469``, ```A` vs `B```, a chain ```A` → `B``` unless
the citation stands right after the name, as in ```A` → `B` (x.rs:3)``)
or the citation one of a list of lines (``x.go:469, 482``, ``x.go:504/517``, ``a.rs:296 vs 313``): a table row or list of several symbols and several lines
does not say which goes with which. When the words between them say the symbol is *defined* or
*declared* there, the citation claims the definition (``claims_definition``).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .citations import Citation

_TICKED = re.compile(r"`(?P<body>[^`\n]{1,200})`")
_ARGS = r"\((?:[\w\s,.*&:'\"…=]|\.\.\.){0,80}\)"
_SYMBOL = re.compile(
    rf"(?P<name>[A-Za-z_]\w*(?:(?:\.|::|#)[A-Za-z_]\w*)*)!?(?:<[^`<>]{{0,60}}(?:<[^`<>]*>)?[^`<>]*>)?(?:{_ARGS})?"
)
_BARE_REF = re.compile(
    r"`:L?\d{1,9}(?:\s?[-–]\s?\d{1,9})?`"
    r"|(?<![\w.:)\]`])(?::L?\d{1,9}(?:[-–]\d{1,9})?)(?![\w.])"
    r"|\(\d{1,9}(?:[-–]\d{1,9})?\)"
    r"|\blines?\s+\d{1,9}(?:\s?[-–]\s?\d{1,9})?"
)
_FILE_EXTENSIONS = frozenset(
    "py pyi js mjs ts tsx jsx go rs java kt kts c h cc cpp hpp cs rb php swift scala vue sh bash "
    "md rst txt json yaml yml toml ini cfg conf lock html css scss sql xml csv".split()
)
_HINT_GAP = 24
_SENTENCE_END = re.compile(r"[.;!?](\s|$)")
_LIST_SEPARATOR = re.compile(r"\s*(?:,|/|&|\+|\band\b|\bor\b|\bvs\.?|\bversus\b)\s*")
_CHAIN = re.compile(r"\s*(?:→|->|=>)\s*")
_ATTACHED = re.compile(r"`?\s*\(?\s*`?")
_MORE_LINES = re.compile(r"`?\s*(?:,\s*|/|\s(?:vs\.?|and|or|&)\s+`?)L?\d")
_DEFINES = re.compile(r"\b(?:defin|declar)", re.IGNORECASE)


@dataclass(frozen=True)
class _Candidate:
    start: int
    end: int
    name: str


def is_path_token(token: str, path: str) -> bool:
    """True for backticked text that names a file rather than a symbol."""
    base = path.rsplit("/", 1)[-1]
    if token in (path, base) or "/" in token or ":" in token.replace("::", ""):
        return True
    return "." in token and token.rsplit(".", 1)[1].lower() in _FILE_EXTENSIONS


def _candidates(text: str, cites: Sequence[Citation]) -> list[_Candidate]:
    cited = {c.path for c in cites} | {c.path.rsplit("/", 1)[-1] for c in cites}
    out: list[_Candidate] = []
    for m in _TICKED.finditer(text):
        body = m.group("body").strip()
        sym = _SYMBOL.fullmatch(body)
        if sym is None:
            continue
        name = sym.group("name").replace("::", ".")
        if name in cited or is_path_token(name, ""):
            continue
        out.append(_Candidate(m.start(), m.end(), name))
    return out


def _gap_ok(gap: str, after_citation: bool) -> bool:
    if len(gap) > _HINT_GAP or "\n" in gap or "`" in gap or _SENTENCE_END.search(gap):
        return False
    # After a citation, a ``)`` that closes a parenthesis the citation is in ends its reach.
    return not (after_citation and gap.count(")") > gap.count("("))


def _trim(gap: str) -> str:
    return gap.removeprefix("`").removesuffix("`")


def with_hints(text: str, cites: list[Citation]) -> list[Citation]:
    """``cites`` (in order of appearance) with ``hint``, ``unpaired`` and ``claims_definition`` set."""
    line_cites = [c for c in cites if c.symbol is None and c.line is not None and c.hint is None]
    if not line_cites:
        return cites
    candidates = _candidates(text, cites)
    if not candidates:
        return cites
    # Locators: (start, end, citation or None for a bare line reference), in text order.
    locators: list[tuple[int, int, Citation | None]] = [(c.start, c.end, c) for c in cites]
    taken = sorted([(c.start, c.end) for c in cites] + [(k.start, k.end) for k in candidates])
    taken_starts = [a for a, _ in taken]
    for m in _BARE_REF.finditer(text):
        j = bisect_left(taken_starts, m.end())
        if j == 0 or taken[j - 1][1] <= m.start():
            locators.append((m.start(), m.end(), None))
    locators.sort(key=lambda loc: loc[0])
    starts = [loc[0] for loc in locators]
    owner: dict[int, tuple[int, int, bool]] = {}  # citation start -> (gap, candidate index, before)
    for k, cand in enumerate(candidates):
        i = bisect_left(starts, cand.start)
        best: tuple[int, int, tuple[int, int, Citation | None]] | None = None
        for loc, before in (
            (locators[i] if i < len(locators) else None, 1),
            (locators[i - 1] if i else None, 0),
        ):
            if loc is None or (loc[0] < cand.end and cand.start < loc[1]):
                continue
            gap = _trim(text[cand.end : loc[0]] if before else text[loc[1] : cand.start])
            if not _gap_ok(gap, after_citation=not before):
                continue
            rank = (len(gap), 0 if before else 1)
            if best is None or rank < best[:2]:
                best = (rank[0], rank[1], loc)
        if best is None or best[2][2] is None:
            continue
        cite = best[2][2]
        if cite.symbol is not None or cite.line is None or cite.hint is not None:
            continue
        mine = (best[0], k, best[1] == 0)
        held = owner.get(cite.start)
        if held is None or (mine[0], not mine[2]) < (held[0], not held[2]):
            owner[cite.start] = mine
    out: list[Citation] = []
    for c in cites:
        held = owner.get(c.start)
        if held is None:
            out.append(c)
            continue
        cand = candidates[held[1]]
        gap = text[cand.end : c.start] if held[2] else text[c.end : cand.start]
        why = _ambiguous(text, held[1], c, candidates, held[2])
        if why is not None:
            out.append(replace(c, unpaired=why))
        else:
            out.append(replace(c, hint=cand.name, claims_definition=bool(_DEFINES.search(gap))))
    return out


def _ambiguous(text: str, k: int, c: Citation, candidates: Sequence[_Candidate], before: bool) -> str | None:
    """Why pairing candidate ``k`` with ``c`` is not unambiguous, or None."""
    cand = candidates[k]
    j = k - 1 if before else k + 1  # the neighbour on the side away from the citation
    if 0 <= j < len(candidates):
        other = candidates[j]
        between = text[other.end : cand.start] if before else text[cand.end : other.start]
        # In a chain (`A` → `B` (x.rs:3)) a citation right after a name is that name's.
        gap = text[cand.end : c.start] if before else text[c.end : cand.start]
        chained = _CHAIN.fullmatch(between) and not _ATTACHED.fullmatch(gap)
        if _LIST_SEPARATOR.fullmatch(between) or chained:
            return f"`{cand.name}` is one of several symbols listed for it; the pairing is ambiguous"
    if _MORE_LINES.match(text, c.end):
        return f"it is one of several lines listed next to `{cand.name}`; the pairing is ambiguous"
    return None


__all__ = ["is_path_token", "with_hints"]
