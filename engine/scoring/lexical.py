"""Lexical evidence for the offline judge: content terms, numbers and literal values.

Shared by claims and key points. A statement is broken into

* numbers: ``1,234.5``, ``-3``, ``15%`` / ``15 percent`` (a percentage), and the words
  ``two`` .. ``twenty``; a number glued to letters (``sha256``, ``v2``) is a term, not a number;
* literals: digit groups joined by ``- / :`` or by two or more dots (dates ``2022-06-24``,
  times ``12:30``, versions ``1.2.3``), which must appear verbatim;
* terms: the remaining words (any script), lower-cased, with stop words dropped and a light
  plural fold (``campaigns`` -> ``campaign``, ``entries`` -> ``entry``);
* key terms: the terms that name something: a capitalized word other than the first word, a
  word inside double quotes, or a word mixing letters and digits (``sha256``).

Evidence text is indexed the same way, and additionally splits identifiers (``TopicCreator``
-> ``topic``, ``creator``; ``search_papers`` -> ``search``, ``papers``) so a statement in
prose can be matched against code or tool names.

Number matching: a plain number matches any number in the evidence within 5% of the
statement's value (exactly, for 0); a percentage matches a percentage in the evidence within
1 percentage point.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

RELATIVE_TOLERANCE = 0.05
PERCENT_POINTS_TOLERANCE = 1.0

_STOP = frozenset(
    """a an the and or but if then else of to in on at by for with from into onto over under
    about as is are was were be been being it its this that these those there their they them
    he she his her we our you your i me my not no nor so such than too very can could should
    would will shall may might must do does did done has have had having which who whom whose
    what when where why how all any both each few more most other some same own only also just
    there's it's that's up down out off again further once here per via vs""".split()
)
_NUMBER_WORDS = {
    w: float(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
    if i >= 2
}
_LITERAL = re.compile(r"(?<![\w.])\d+(?:(?:[-/:]\d+)+|(?:\.\d+){2,})(?![\w]|[-/:.]\d)")
_NUMBER = re.compile(
    r"(?<![\w.\-/:])(?P<sign>[-−])?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?![\w\-/:]|[.,]\d)(?P<pct>\s?%|\s?(?:percent|per cent|pct)\b)?",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_QUOTED = re.compile(r'"[^"\n]+"|“[^”\n]+”')
_IDENT_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


@dataclass(frozen=True)
class Number:
    value: float
    percent: bool
    text: str


@dataclass(frozen=True)
class Statement:
    """What a claim or key point asserts, lexically."""

    terms: tuple[str, ...]
    numbers: tuple[Number, ...]
    literals: tuple[str, ...]
    key_terms: tuple[str, ...] = ()


@dataclass(frozen=True)
class Evidence:
    """An indexed body of text to check statements against."""

    terms: frozenset[str]
    numbers: tuple[Number, ...]
    text: str


def fold(word: str) -> str:
    """Lower-case and fold simple plurals and possessives."""
    w = word.lower().removesuffix("'s")
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def _numbers(text: str) -> list[Number]:
    out: list[Number] = []
    for m in _NUMBER.finditer(text):
        try:
            value = float(m.group("num").replace(",", ""))
        except ValueError:
            continue
        if m.group("sign"):
            value = -value
        if math.isfinite(value):
            out.append(Number(value, bool(m.group("pct")), m.group(0).strip()))
    return out


def _strip_spans(text: str, pattern: re.Pattern[str]) -> str:
    return pattern.sub(" ", text)


def statement(text: str) -> Statement:
    """Break a claim or key point into terms, numbers, literals and key terms."""
    literals = tuple(dict.fromkeys(m.group(0) for m in _LITERAL.finditer(text)))
    rest = _strip_spans(text, _LITERAL)
    numbers = _numbers(rest)
    words_text = _strip_spans(rest, _NUMBER)
    quoted = [m.span() for m in _QUOTED.finditer(words_text)]
    terms: list[str] = []
    keys: list[str] = []
    for i, m in enumerate(_WORD.finditer(words_text)):
        w = m.group(0)
        low = w.lower()
        if low in _NUMBER_WORDS:
            numbers.append(Number(_NUMBER_WORDS[low], False, w))
            continue
        if low in _STOP or w.isdigit():
            continue
        term = fold(w)
        terms.append(term)
        in_quotes = any(a < m.start() < b for a, b in quoted)
        mixed = any(c.isdigit() for c in w) and any(c.isalpha() for c in w)
        if in_quotes or mixed or (i > 0 and w[0].isupper()):
            keys.append(term)
    return Statement(tuple(dict.fromkeys(terms)), tuple(numbers), literals, tuple(dict.fromkeys(keys)))


def evidence(text: str) -> Evidence:
    """Index ``text`` as evidence (identifiers are also split into their parts)."""
    terms: set[str] = set()
    numbers = _numbers(_strip_spans(text, _LITERAL))
    for w in _WORD.findall(text):
        low = w.lower()
        terms.add(fold(w))
        if low in _NUMBER_WORDS:
            numbers.append(Number(_NUMBER_WORDS[low], False, w))
    for ident in re.findall(r"[A-Za-z0-9_]+", text):
        for part in _IDENT_PART.findall(ident):
            terms.add(fold(part))
    return Evidence(frozenset(terms), tuple(numbers), text)


def number_matches(claimed: Number, found: Number) -> bool:
    if claimed.percent:
        return found.percent and abs(found.value - claimed.value) <= PERCENT_POINTS_TOLERANCE + 1e-9
    if claimed.value == 0:
        return found.value == 0
    return abs(found.value - claimed.value) <= RELATIVE_TOLERANCE * abs(claimed.value) + 1e-12


def literal_present(literal: str, ev: Evidence) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(literal)}(?![\w]|[-/:.]\d)", ev.text) is not None


@dataclass(frozen=True)
class Match:
    """How much of a statement the evidence supports."""

    terms_found: tuple[str, ...]
    terms_missing: tuple[str, ...]
    numbers_found: tuple[str, ...]
    numbers_missing: tuple[str, ...]
    key_terms_missing: tuple[str, ...] = ()
    key_terms_total: int = 0

    @property
    def term_ratio(self) -> float:
        total = len(self.terms_found) + len(self.terms_missing)
        return 1.0 if total == 0 else len(self.terms_found) / total

    @property
    def key_ratio(self) -> float:
        if self.key_terms_total == 0:
            return 1.0
        return 1.0 - len(self.key_terms_missing) / self.key_terms_total

    @property
    def has_numbers(self) -> bool:
        return bool(self.numbers_found or self.numbers_missing)

    @property
    def all_numbers(self) -> bool:
        return not self.numbers_missing

    def explain(self) -> str:
        parts = [f"{len(self.terms_found)}/{len(self.terms_found) + len(self.terms_missing)} terms found"]
        if self.terms_missing:
            parts.append("missing terms: " + ", ".join(self.terms_missing[:8]))
        if self.key_terms_missing:
            parts.append("missing names: " + ", ".join(self.key_terms_missing[:8]))
        if self.numbers_found:
            parts.append("values found: " + ", ".join(self.numbers_found))
        if self.numbers_missing:
            parts.append("values not found: " + ", ".join(self.numbers_missing))
        return "; ".join(parts)


def match(st: Statement, ev: Evidence) -> Match:
    found = tuple(t for t in st.terms if t in ev.terms)
    missing = tuple(t for t in st.terms if t not in ev.terms)
    nums_found: list[str] = []
    nums_missing: list[str] = []
    for n in st.numbers:
        (nums_found if any(number_matches(n, e) for e in ev.numbers) else nums_missing).append(n.text)
    for lit in st.literals:
        (nums_found if literal_present(lit, ev) else nums_missing).append(lit)
    keys_missing = tuple(t for t in st.key_terms if t not in ev.terms)
    return Match(found, missing, tuple(nums_found), tuple(nums_missing), keys_missing, len(st.key_terms))
