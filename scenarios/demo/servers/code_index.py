"""An ``ast``-based index of the Python symbols in a pinned repository.

The demo code-intelligence servers answer from this index instead of grepping, so a
definition's line numbers come from the parser and names that merely contain the query
(``compute_backoff_jitter`` for ``compute_backoff``) never masquerade as exact hits.
"""

from __future__ import annotations

import ast
import difflib
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from proctor.scenarios.repo import PinnedRepo

KIND_ORDER = {"class": 0, "function": 1, "method": 2, "constant": 3, "variable": 4}

_CONSTANT = re.compile(r"^_?[A-Z][A-Z0-9_]*$")
_WORD = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+|[A-Z]|[0-9]+")
_STOPWORDS = frozenset(
    """a an and are as at be before by can cite code does do file find for from how i in is it its line
    lines me my of on or please show tell that the then there this to what when where which who why
    with would you your function method class defined definition""".split()
)


@dataclass(frozen=True)
class Symbol:
    """One named definition: ``line`` is the ``def``/``class``/assignment line (1-based)."""

    name: str
    qualname: str
    module: str
    kind: str
    path: str
    line: int
    end_line: int
    first_line: int
    docstring: str

    @property
    def dotted(self) -> str:
        return f"{self.module}.{self.qualname}" if self.module else self.qualname


def module_name(path: str) -> str:
    """``tinyq/storage/sqlite.py`` -> ``tinyq.storage.sqlite``; a package's ``__init__`` is the package."""
    parts = path[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def stem(word: str) -> str:
    """A deliberately small stemmer: enough to match "retrying" with "retry" and "caps" with "cap"."""
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix) and not w.endswith("ss"):
            w = w[: -len(suffix)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def words(text: str) -> list[str]:
    """Split prose and identifiers (snake_case, CamelCase) into stemmed lowercase words."""
    return [stem(w) for w in _WORD.findall(text) if len(w) > 1 or w.isdigit()]


def query_words(text: str) -> list[str]:
    return [w for w in words(text) if w not in _STOPWORDS]


def _comment_doc(lines: list[str], line: int) -> str:
    """``#:`` comments directly above ``line`` (the Sphinx convention for documenting constants)."""
    out: list[str] = []
    i = line - 2
    while i >= 0 and lines[i].lstrip().startswith("#"):
        out.append(lines[i].lstrip().lstrip("#:").strip())
        i -= 1
    return " ".join(reversed(out))


def _string_after(body: list[ast.stmt], index: int) -> str:
    if index + 1 < len(body):
        nxt = body[index + 1]
        if (
            isinstance(nxt, ast.Expr)
            and isinstance(nxt.value, ast.Constant)
            and isinstance(nxt.value.value, str)
        ):
            return nxt.value.value
    return ""


def _symbols_in(path: str, source: str) -> Iterator[Symbol]:
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError:
        return
    lines = source.splitlines()
    module = module_name(path)

    def visit(body: list[ast.stmt], prefix: str, in_class: bool) -> Iterator[Symbol]:
        for index, node in enumerate(body):
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                qual = f"{prefix}{node.name}"
                kind = "class" if isinstance(node, ast.ClassDef) else ("method" if in_class else "function")
                first = min([d.lineno for d in node.decorator_list] + [node.lineno])
                yield Symbol(
                    name=node.name,
                    qualname=qual,
                    module=module,
                    kind=kind,
                    path=path,
                    line=node.lineno,
                    end_line=node.end_lineno or node.lineno,
                    first_line=first,
                    docstring=ast.get_docstring(node) or "",
                )
                if isinstance(node, ast.ClassDef):
                    yield from visit(node.body, f"{qual}.", True)
            elif not prefix and isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if not isinstance(target, ast.Name) or target.id == "__all__":
                        continue
                    doc = _comment_doc(lines, node.lineno) or _string_after(body, index)
                    yield Symbol(
                        name=target.id,
                        qualname=target.id,
                        module=module,
                        kind="constant" if _CONSTANT.match(target.id) else "variable",
                        path=path,
                        line=node.lineno,
                        end_line=node.end_lineno or node.lineno,
                        first_line=node.lineno,
                        docstring=doc,
                    )

    yield from visit(tree.body, "", False)


def is_test_path(path: str) -> bool:
    """Tests mention everything; ranking them below the code they test keeps answers on target."""
    name = path.rsplit("/", 1)[-1]
    return "/tests/" in f"/{path}" or name.startswith("test_") or name.endswith("_test.py")


@dataclass(frozen=True)
class Hit:
    symbol: Symbol
    score: float


class CodeIndex:
    """Symbols and text of every file at the pinned commit, built once at server start."""

    def __init__(self, repo: PinnedRepo) -> None:
        self.repo = repo
        self.files = repo.files()
        repo.preload(self.files)
        self.text: dict[str, list[str]] = {}
        for path in self.files:
            data = repo.read_bytes(path)
            if b"\x00" in data:
                continue
            self.text[path] = data.decode("utf-8", errors="replace").splitlines()
        self.symbols: list[Symbol] = []
        for path in self.files:
            if path.endswith(".py") and path in self.text:
                self.symbols.extend(_symbols_in(path, "\n".join(self.text[path]) + "\n"))
        self._name_words = {id(s): set(words(s.name)) for s in self.symbols}
        self._qual_words = {id(s): set(words(s.qualname)) for s in self.symbols}
        self._doc_words = {id(s): set(words(s.docstring)) for s in self.symbols}
        df: Counter[str] = Counter()
        for s in self.symbols:
            df.update(self._name_words[id(s)] | self._qual_words[id(s)] | self._doc_words[id(s)])
        n = max(1, len(self.symbols))
        self._idf = {w: math.log(1.0 + n / (1.0 + c)) for w, c in df.items()}
        self._max_idf = math.log(1.0 + n)

    def search(self, query: str, limit: int) -> list[Hit]:
        """Symbols ranked by how well the query's words match their names, then docstrings."""
        exact = query.strip().rstrip("()")
        qwords = list(dict.fromkeys(query_words(query)))
        hits: list[Hit] = []
        for s in self.symbols:
            score = self._score(s, exact, qwords)
            if score > 0:
                hits.append(Hit(s, score))
        hits.sort(key=lambda h: (-h.score, KIND_ORDER[h.symbol.kind], len(h.symbol.qualname), h.symbol.path))
        return hits[:limit]

    def _score(self, s: Symbol, exact: str, qwords: list[str]) -> float:
        """Per query word: name match, else name prefix, else enclosing class, plus docstring;
        weighted by rarity, scaled by the share of query words matched at all."""
        bonus = 100.0 if exact in (s.name, s.qualname, s.dotted) else 0.0
        name_w, qual_w, doc_w = self._name_words[id(s)], self._qual_words[id(s)], self._doc_words[id(s)]
        total = 0.0
        matched = 0
        name_hits: set[str] = set()
        for w in qwords:
            weight = 0.0
            if w in name_w:
                weight += 10.0
                name_hits.add(w)
            elif len(w) >= 3 and (prefixed := [n for n in name_w if n.startswith(w) or w.startswith(n)]):
                weight += 5.0
                name_hits.update(prefixed)
            elif w in qual_w:
                weight += 4.0
            if w in doc_w:
                weight += 3.0
            if weight:
                matched += 1
                total += weight * self._idf.get(w, self._max_idf)
        if not matched:
            return bonus
        score = total * matched / len(qwords) + 5.0 * len(name_hits) / max(1, len(name_w)) + bonus
        return score * 0.3 if is_test_path(s.path) else score

    def resolve(self, symbol: str) -> list[Symbol]:
        """Definitions named ``symbol`` (bare, ``Class.method`` or dotted), best match first."""
        wanted = symbol.strip().rstrip("()").strip()
        if not wanted:
            return []
        tiers: list[Callable[[Symbol], bool]] = [
            lambda s: wanted in (s.qualname, s.dotted),
            lambda s: s.dotted.endswith(f".{wanted}"),
            lambda s: s.name == wanted,
        ]
        for matches in tiers:
            found = [s for s in self.symbols if matches(s)]
            if found:
                return sorted(found, key=lambda s: (KIND_ORDER[s.kind], s.path, s.line))
        return []

    def close_names(self, symbol: str, n: int = 5) -> list[str]:
        names = sorted({s.qualname for s in self.symbols} | {s.name for s in self.symbols})
        return difflib.get_close_matches(symbol.strip(), names, n=n, cutoff=0.5)

    def definition_lines(self, name: str) -> set[tuple[str, int]]:
        return {(s.path, s.line) for s in self.symbols if s.name == name}

    def references(self, symbol: str, paths: Iterable[str]) -> Iterator[tuple[str, int, str]]:
        """Whole-word occurrences of the symbol's last name component, outside its own definitions."""
        name = symbol.strip().rstrip("()").split(".")[-1]
        if not name:
            return
        pattern = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])")
        defs = self.definition_lines(name)
        for path in paths:
            for number, text in enumerate(self.text.get(path, []), start=1):
                if (path, number) not in defs and pattern.search(text):
                    yield path, number, text.strip()
