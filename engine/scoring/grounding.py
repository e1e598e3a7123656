"""Check citations against the pinned commit: grounded, unresolved or hallucinated (DESIGN §5).

Resolution: an absolute path inside the repository's checkout (``repo.path``, what
filesystem-style servers show the agent) is made relative to it; then the path is normalized
with ``safe_relpath`` (other absolute paths, ``..`` escapes and NUL bytes are *unresolved* without
any lookup; Windows separators were turned into ``/`` by ``citations``); then the literal path is tried,
then a unique suffix match on whole path components among the commit's files (``topic.py``
finds ``src/app/topic.py``; two candidates make it *unresolved*, as ambiguous). Symbolic links
are not files here (``PinnedRepo.is_file``/``files`` exclude them), so a citation of a link is
*unresolved* and nothing it points to is ever read.

Once the file is resolved, ``grounding_rules`` decides what the cited lines must show (the line
exists; quoted code is there; a symbol named next to it is near it or encloses it). Without a
path:

* ``path:0``: *unresolved* (lines start at 1).
* ``Symbol:line`` (no path, or a dotted name that is no file): some file of the commit must have
  the symbol (exact case; with its owner, for ``Owner.name``) within ``±tolerance`` lines of that
  line, or a definition of it that encloses the line, else *hallucinated*.

Counting (``check_citations``): by default each (file, line range) is one citation, however often
and in whatever words it is cited (``file_line``, as published scorers count); a repeated one
takes the worst verdict of its mentions (a line that contradicts one claim about it is wrong).
``mention`` counts every mention.

``RepoIndex`` caches what it computes per repository object (one object = one commit): the
suffix index, path resolutions, line counts and per-file identifier positions.
"""

from __future__ import annotations

import os
import re
import threading
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from proctor.scenarios.repo import RepoError, safe_relpath
from proctor.scenarios.schema import CitationCount
from proctor.store.scores import CitationStatus, GroundingCounts, GroundingDetails

from .citations import Citation, extract_citations
from .grounding_rules import (
    FileFacts,
    GroundingResult,
    classify_lines,
    classify_symbol_only,
    clip_line,
    locate,
    member_occurrences,
    symbol_name,
    symbol_parts,
)

_MEMO_LIMIT = 200_000
COUNT_RULES: dict[CitationCount, str] = {
    "file_line": "each (file, line range) counted once; a repeated one takes its worst verdict",
    "mention": "every mention counted",
}


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
class GroundingCheck:
    """An answer's citations checked against one commit: the grounding score, its value the
    share grounded (None without citations)."""

    results: tuple[GroundingResult, ...]
    commit: str
    repo: str
    tolerance: int
    count: CitationCount = "file_line"

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
            count_rule=f"{self.count}: {COUNT_RULES[self.count]}",
            citations=[r.to_details() for r in self.results],
        )


class RepoIndex:
    """Lookups for one repository view; holds no reference to the view itself."""

    def __init__(self) -> None:
        self._suffixes: dict[str, list[str]] | None = None
        self._resolved: dict[str, tuple[str | None, str]] = {}
        self._files: dict[str, FileFacts | None] = {}
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

    def file(self, repo: RepoView, path: str) -> FileFacts | None:
        if path not in self._files:
            try:
                info: FileFacts | None = FileFacts(repo.lines(path))
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
        if citation.line is None:
            return classify_symbol_only(citation, resolved, info, citation.symbol or citation.hint)
        return classify_lines(citation, resolved, info, tolerance)

    def _symbol_at_line(self, repo: RepoView, c: Citation, symbol: str, tolerance: int) -> GroundingResult:
        """``Symbol:line``: grounded where some file has the symbol near that line or around it."""
        assert c.line is not None
        name = symbol_name(symbol)
        first = c.line
        last = c.end_line if c.end_line is not None else c.line
        closest: tuple[int, str, int | None, str] | None = None
        for path in self.files_with(repo, name):
            info = self.file(repo, path)
            if info is None or last > info.n_lines:
                continue
            found = member_occurrences(info, symbol)
            if not found:
                continue
            ok, how, n = locate(info, name, found, first, last, tolerance, c.claims_definition)
            if ok:
                return GroundingResult(c, "grounded", f"{symbol} {how} ({path}:{n})", path, symbol, n)
            gap = min(abs(k - first) for k in found)
            if closest is None or gap < closest[0]:
                closest = (gap, path, n, how)
        if closest is None:
            return GroundingResult(c, "hallucinated", self._nowhere(repo, symbol, name, first), None, symbol)
        gap, path, n, _ = closest
        info = self.file(repo, path)
        return GroundingResult(
            c,
            "hallucinated",
            f"{symbol} is {gap} lines from line {first} and no definition of it encloses it "
            f"(nearest: {path}:{n})",
            path,
            symbol,
            n,
            None if info is None else clip_line(info.line(first)),
        )

    def _nowhere(self, repo: RepoView, symbol: str, name: str, line: int) -> str:
        """Why ``symbol`` is found nowhere: its owner may be what does not exist."""
        owner = symbol_parts(symbol)[:-1]
        if owner:
            for path in self.files_with(repo, name):
                info = self.file(repo, path)
                if info is not None and line in info.occurrences(name):
                    return (
                        f"{symbol} occurs in no file of the commit: {name} is at {path}:{line}, "
                        f"but {owner[-1]} occurs nowhere with it"
                    )
        return f"{symbol} occurs in no file of the commit (at line {line})"

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


def _key(r: GroundingResult) -> tuple[str, int | None, int | None, str | None]:
    c = r.citation
    path = r.resolved_path or c.path
    if c.line is not None:
        return (path, c.line, c.end_line if c.end_line is not None else c.line, None if path else c.symbol)
    return (path, None, None, c.symbol or c.hint)


_SEVERITY: dict[CitationStatus, int] = {"grounded": 0, "unresolved": 1, "hallucinated": 2}


def check_citations(
    text: str, repo: RepoView, tolerance: int = 5, *, unique: bool = True
) -> list[GroundingResult]:
    """Extract and classify the citations in ``text``.

    With ``unique`` (the default, the ``file_line`` rule) each (file, line range) is counted once,
    in the place it is first cited, with the worst verdict of its mentions; without it every
    mention is counted (``mention``).
    """
    index = index_for(repo)
    results = [index.classify(repo, c, tolerance) for c in extract_citations(text)]
    if not unique:
        return results
    first: dict[tuple[str, int | None, int | None, str | None], int] = {}
    out: list[GroundingResult] = []
    for r in results:
        key = _key(r)
        at = first.get(key)
        if at is None:
            first[key] = len(out)
            out.append(r)
        elif _SEVERITY[r.status] > _SEVERITY[out[at].status]:
            out[at] = r
    return out


def check_grounding(
    text: str, repo: PinnedView, tolerance: int = 5, count: CitationCount = "file_line"
) -> GroundingCheck:
    """The grounding score of an answer: its citations, counted by ``count``, checked against ``repo``."""
    results = check_citations(text, repo, tolerance, unique=count == "file_line")
    return GroundingCheck(tuple(results), repo.commit, str(repo.path), tolerance, count)


__all__ = [
    "COUNT_RULES",
    "CitationCount",
    "GroundingCheck",
    "GroundingResult",
    "PinnedView",
    "RepoIndex",
    "RepoView",
    "check_citations",
    "check_grounding",
    "classify",
    "index_for",
]
