"""Check citations against the pinned commit: grounded, unresolved or hallucinated (DESIGN §5).

Resolution: an absolute path inside the repository's checkout (``repo.path``, what
filesystem-style servers show the agent) is made relative to it; then the path is normalized
with ``safe_relpath`` (other absolute paths, ``..`` escapes and NUL bytes are *unresolved* without
any lookup; Windows separators were turned into ``/`` by ``citations``); then the literal path is tried,
then a unique suffix match on whole path components among the commit's files (``topic.py``
finds ``src/app/topic.py``; two candidates make it *unresolved*, as ambiguous). Symbolic links
are not files here (``PinnedRepo.is_file``/``files`` exclude them), so a citation of a link is
*unresolved* and nothing it points to is ever read.

Once the file is resolved (its line count is ``n``; lines as ``RepoView.lines`` splits them):

* ``path:line`` / ``path:a-b``: the line(s) must exist (``b <= n``; an inverted range ``b < a`` is
  *hallucinated*). If the citation names a symbol (``hint``: an identifier the sentence puts in
  backticks next to it, see ``citations``), that identifier must also occur within ``±tolerance``
  lines of the cited line or range, else *hallucinated*. Without a symbol, the line existing
  is all that is checked.
* ``path:Symbol``: the symbol must occur somewhere in the file, else *hallucinated*.
* ``path:0``: *unresolved* (lines start at 1).
* ``Symbol:line`` (no path, or a dotted name that is no file): the symbol must occur within
  ``±tolerance`` lines of that line in some file of the commit, else *hallucinated*.

A symbol "occurs" where its last component (``Class.method`` and ``Class#method`` -> ``method``,
``()`` dropped) appears as a whole identifier, case-sensitively; the nearest occurrence counts,
not only definitions. For ``Class.method`` the class must occur in the file too, before the
method's occurrence.

``RepoIndex`` caches what it computes per repository object (one object = one commit): the
suffix index, path resolutions, line counts and per-file identifier positions.
"""

from __future__ import annotations

import os
import re
import threading
import weakref
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from proctor.scenarios.repo import RepoError, safe_relpath
from proctor.store.scores import CitationDetails, CitationStatus, GroundingCounts, GroundingDetails

from .citations import Citation, extract_citations

_IDENT = re.compile(r"[A-Za-z_]\w*")
_MEMO_LIMIT = 200_000


class RepoView(Protocol):
    """Read-only files of one commit (``proctor.scenarios.repo.PinnedRepo`` satisfies it)."""

    def is_file(self, path: str) -> bool: ...

    def lines(self, path: str) -> Sequence[str]: ...

    def files(self) -> Iterable[str]: ...


class PinnedView(RepoView, Protocol):
    """A ``RepoView`` that names its commit and checkout, which the grounding score records."""

    @property
    def commit(self) -> str: ...

    @property
    def path(self) -> Path: ...


@dataclass(frozen=True)
class GroundingResult:
    citation: Citation
    status: CitationStatus
    reason: str
    resolved_path: str | None = None
    symbol: str | None = None
    symbol_line: int | None = None

    def to_details(self) -> CitationDetails:
        return CitationDetails(
            raw=self.citation.raw,
            path=self.resolved_path or self.citation.path,
            line=self.citation.line,
            line_end=self.citation.end_line,
            symbol=self.citation.symbol or self.citation.hint,
            status=self.status,
            reason=self.reason,
        )


@dataclass(frozen=True)
class GroundingCheck:
    """An answer's citations checked against one commit: the grounding score, its value the
    share grounded (None without citations)."""

    results: tuple[GroundingResult, ...]
    commit: str
    repo: str
    tolerance: int

    @property
    def counts(self) -> GroundingCounts:
        return GroundingCounts.of(r.status for r in self.results)

    @property
    def value(self) -> float | None:
        return self.counts.rate

    def to_details(self) -> GroundingDetails:
        counts = self.counts
        return GroundingDetails(
            counts=counts,
            label=counts.label,
            commit=self.commit,
            repo=self.repo,
            tolerance=self.tolerance,
            citations=[r.to_details() for r in self.results],
        )


class _FileInfo:
    __slots__ = ("_idents", "_lines", "n_lines")

    def __init__(self, lines: Sequence[str]) -> None:
        self._lines: Sequence[str] = lines
        self.n_lines = len(lines)
        self._idents: dict[str, list[int]] | None = None

    def line(self, n: int) -> str:
        return self._lines[n - 1]

    def identifiers(self) -> Iterable[str]:
        self.occurrences("")
        assert self._idents is not None
        return self._idents.keys()

    def occurrences(self, name: str) -> list[int]:
        if self._idents is None:
            idents: dict[str, list[int]] = {}
            for no, text in enumerate(self._lines, start=1):
                for ident in set(_IDENT.findall(text)):
                    idents.setdefault(ident, []).append(no)
            self._idents = idents
        return self._idents.get(name, [])


class RepoIndex:
    """Lookups for one repository view; holds no reference to the view itself."""

    def __init__(self) -> None:
        self._suffixes: dict[str, list[str]] | None = None
        self._resolved: dict[str, tuple[str | None, str]] = {}
        self._files: dict[str, _FileInfo | None] = {}
        self._symbol_files: dict[str, list[str]] | None = None
        self._lock = threading.Lock()

    def resolve(self, repo: RepoView, path: str) -> tuple[str | None, str]:
        """(repository path, how) or (None, why not)."""
        hit = self._resolved.get(path)
        if hit is None:
            hit = self._resolve(repo, path)
            if len(self._resolved) >= _MEMO_LIMIT:
                self._resolved.clear()
            self._resolved[path] = hit
        return hit

    def _resolve(self, repo: RepoView, path: str) -> tuple[str | None, str]:
        root = getattr(repo, "path", None)
        if path.startswith("/") and root is not None:
            for prefix in {str(root).rstrip("/"), os.path.realpath(str(root)).rstrip("/")}:
                if path.startswith(prefix + "/"):
                    path = path[len(prefix) + 1 :]
                    break
        rel = safe_relpath(path)
        if not rel:
            return None, "path is absolute, empty or leaves the repository"
        if repo.is_file(rel):
            return rel, "path exists at the commit"
        candidates = self._suffix_index(repo).get(rel, [])
        if len(candidates) == 1:
            return candidates[0], f"matched {candidates[0]} by suffix"
        if candidates:
            return None, f"ambiguous: {len(candidates)} files end with {rel}"
        return None, "no such file at the commit"

    def _suffix_index(self, repo: RepoView) -> dict[str, list[str]]:
        if self._suffixes is None:
            with self._lock:
                if self._suffixes is None:
                    index: dict[str, list[str]] = {}
                    for f in repo.files():
                        parts = f.split("/")
                        for i in range(1, len(parts)):
                            index.setdefault("/".join(parts[i:]), []).append(f)
                    self._suffixes = index
        return self._suffixes

    def file(self, repo: RepoView, path: str) -> _FileInfo | None:
        if path not in self._files:
            try:
                info: _FileInfo | None = _FileInfo(repo.lines(path))
            except (RepoError, OSError, KeyError, UnicodeError):
                info = None
            self._files[path] = info
        return self._files[path]

    def classify(self, repo: RepoView, citation: Citation, tolerance: int = 5) -> GroundingResult:
        if citation.line == 0:
            return GroundingResult(citation, "unresolved", "line 0 cannot exist: lines start at 1")
        if not citation.path and citation.symbol and citation.line is not None:
            return self._symbol_at_line(repo, citation, citation.symbol, tolerance)
        resolved, why = self.resolve(repo, citation.path)
        if resolved is None:
            if (
                citation.line is not None
                and "/" not in citation.path
                and _IDENT_PATH.fullmatch(citation.path)
            ):
                return self._symbol_at_line(repo, citation, citation.path, tolerance)
            return GroundingResult(citation, "unresolved", why)
        info = self.file(repo, resolved)
        if info is None:
            return GroundingResult(citation, "unresolved", "file cannot be read", resolved)
        symbol = citation.symbol or citation.hint
        name = _symbol_name(symbol) if symbol else None
        if citation.line is None:
            return _classify_symbol_only(citation, resolved, info, symbol, name)
        return _classify_lines(citation, resolved, info, symbol, name, tolerance)

    def _symbol_at_line(self, repo: RepoView, c: Citation, symbol: str, tolerance: int) -> GroundingResult:
        """``Symbol:line``: grounded where some file has the symbol near that line."""
        assert c.line is not None
        name = _symbol_name(symbol)
        last = c.end_line if c.end_line is not None else c.line
        nearest: tuple[int, str, int] | None = None
        for path in self.files_with(repo, name):
            info = self.file(repo, path)
            if info is None:
                continue
            found = _member_occurrences(info, symbol, name)
            for n in found:
                offset = 0 if c.line <= n <= last else min(abs(n - c.line), abs(n - last))
                if nearest is None or offset < nearest[0]:
                    nearest = (offset, path, n)
        if nearest is None:
            return GroundingResult(
                c, "hallucinated", f"{symbol} occurs in no file of the commit", None, symbol
            )
        offset, path, n = nearest
        if offset <= tolerance:
            return GroundingResult(c, "grounded", f"{symbol} at {path}:{n}", path, symbol, n)
        return GroundingResult(
            c,
            "hallucinated",
            f"{symbol} is {offset} lines from line {c.line} (nearest: {path}:{n})",
            path,
            symbol,
            n,
        )

    def files_with(self, repo: RepoView, name: str) -> list[str]:
        """Files of the commit in which ``name`` occurs as an identifier (text search, cached)."""
        if self._symbol_files is None:
            with self._lock:
                if self._symbol_files is None:
                    index: dict[str, list[str]] = {}
                    for f in repo.files():
                        info = self.file(repo, f) if not f.endswith(_BINARY_SUFFIXES) else None
                        if info is None or info.n_lines > _MAX_INDEXED_LINES:
                            continue
                        for ident in info.identifiers():
                            index.setdefault(ident, []).append(f)
                    self._symbol_files = index
        return self._symbol_files.get(name, [])


_IDENT_PATH = re.compile(r"[A-Z]\w*(?:[.#][A-Za-z_]\w*)+|\w+#\w+")
_BINARY_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".pdf", ".zip", ".gz", ".whl", ".so", ".bin", ".ico")
_MAX_INDEXED_LINES = 50_000


def _symbol_name(symbol: str) -> str:
    return re.split(r"[.#]", symbol.removesuffix("()"))[-1]


def _member_occurrences(info: _FileInfo, symbol: str, name: str) -> list[int]:
    """Lines where ``name`` occurs; for ``Class.method``/``Class#method``, only after the class."""
    found = info.occurrences(name)
    parts = re.split(r"[.#]", symbol.removesuffix("()"))
    if len(parts) < 2:
        return found
    owner = info.occurrences(parts[-2])
    return [n for n in found if owner and n > owner[0]]


def _classify_symbol_only(
    c: Citation, path: str, info: _FileInfo, symbol: str | None, name: str | None
) -> GroundingResult:
    if not name:
        return GroundingResult(c, "grounded", "file exists at the commit", path)
    found = _member_occurrences(info, symbol or name, name)
    if not found:
        return GroundingResult(c, "hallucinated", f"{symbol} does not occur in {path}", path, symbol)
    return GroundingResult(c, "grounded", f"{symbol} occurs at line {found[0]}", path, symbol, found[0])


def _squash(text: str) -> str:
    return " ".join(text.split())


def _classify_quote(
    c: Citation, path: str, info: _FileInfo, first: int, last: int, tolerance: int
) -> GroundingResult:
    """The quoted code must stand within ``tolerance`` lines of the cited range."""
    assert c.quote is not None
    quote = _squash(c.quote)
    lo, hi = max(1, first - tolerance), min(info.n_lines, last + tolerance)
    for n in range(lo, hi + 1):
        if quote in _squash(info.line(n)):
            return GroundingResult(c, "grounded", f"quoted code at line {n}", path, None, n)
    return GroundingResult(
        c, "hallucinated", f"the quoted code is not within {tolerance} lines of line {first} in {path}", path
    )


def _classify_lines(
    c: Citation, path: str, info: _FileInfo, symbol: str | None, name: str | None, tolerance: int
) -> GroundingResult:
    assert c.line is not None
    first, last = c.line, c.end_line if c.end_line is not None else c.line
    if last < first:
        return GroundingResult(c, "hallucinated", f"inverted line range {first}-{last}", path)
    if last > info.n_lines:
        return GroundingResult(
            c, "hallucinated", f"line {last} is past the end of {path} ({info.n_lines} lines)", path
        )
    if c.quote:
        return _classify_quote(c, path, info, first, last, tolerance)
    if not name:
        return GroundingResult(c, "grounded", f"line {last} exists ({info.n_lines} lines)", path)
    found = _member_occurrences(info, symbol or name, name)
    if not found:
        return GroundingResult(c, "hallucinated", f"{symbol} does not occur in {path}", path, symbol)
    i = bisect_left(found, first - tolerance)
    if i < len(found) and found[i] <= last + tolerance:
        return GroundingResult(c, "grounded", f"{symbol} at line {found[i]}", path, symbol, found[i])
    nearest = min(found[max(0, i - 1) : i + 1], key=lambda k: min(abs(k - first), abs(k - last)))
    offset = min(abs(nearest - first), abs(nearest - last))
    return GroundingResult(
        c,
        "hallucinated",
        f"{symbol} is {offset} lines from the cited line (nearest: line {nearest}; tolerance ±{tolerance})",
        path,
        symbol,
        nearest,
    )


_CACHE: dict[int, tuple[weakref.ref[Any], RepoIndex]] = {}
_CACHE_LOCK = threading.Lock()


def index_for(repo: RepoView) -> RepoIndex:
    """The cached index of this repository object (a fresh, uncached one if it cannot be weakly referenced)."""
    key = id(repo)
    entry = _CACHE.get(key)
    if entry is not None and entry[0]() is repo:
        return entry[1]
    index = RepoIndex()

    def _drop(ref: weakref.ref[Any], key: int = key) -> None:
        with _CACHE_LOCK:
            current = _CACHE.get(key)
            if current is not None and current[0] is ref:
                del _CACHE[key]

    try:
        ref = weakref.ref(repo, _drop)
    except TypeError:
        return index
    with _CACHE_LOCK:
        _CACHE[key] = (ref, index)
    return index


def classify(citation: Citation, repo: RepoView, tolerance: int = 5) -> GroundingResult:
    """Classify one citation against the commit ``repo`` shows (see the module docstring)."""
    if tolerance < 0:
        raise ValueError("tolerance must be >= 0")
    return index_for(repo).classify(repo, citation, tolerance)


def check_citations(
    text: str, repo: RepoView, tolerance: int = 5, *, unique: bool = True
) -> list[GroundingResult]:
    """Extract and classify the citations in ``text``.

    With ``unique`` (the default) a citation repeated verbatim (same path, lines, symbol and
    hint) is counted once, so repeating a reference neither helps nor hurts the rate.
    """
    seen: set[tuple[str, int | None, int | None, str | None, str | None]] = set()
    out: list[GroundingResult] = []
    index = index_for(repo)
    for c in extract_citations(text):
        key = (c.path, c.line, c.end_line, c.symbol, c.hint)
        if unique and key in seen:
            continue
        seen.add(key)
        out.append(index.classify(repo, c, tolerance))
    return out


def check_grounding(text: str, repo: PinnedView, tolerance: int = 5) -> GroundingCheck:
    """The grounding score of an answer: its citations (each counted once) checked against ``repo``."""
    results = check_citations(text, repo, tolerance)
    return GroundingCheck(tuple(results), repo.commit, str(repo.path), tolerance)
