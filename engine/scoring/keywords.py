"""Keyword coverage of the answer text (DESIGN §5).

coverage = (required hits + 0.5 · bonus hits) / (required + 0.5 · bonus)

Kinds of keyword (a plain string is ``word``; a scenario writes the others ``{kind: value}``),
the text checks of published harnesses (luuuc/sense's ``bench/SCORING.md``):

* ``word``: case-insensitive, whole word or identifier only, i.e. where the keyword starts
  (ends) with a letter, digit or underscore, the character before (after) it must not be one:
  ``reserve`` does not match ``reserved``, ``reserve_x`` or ``preserve``, but matches
  ``reserve-price`` and ``self.reserve()``. A keyword that starts or ends with punctuation
  (``C++``, ``--force``) has no boundary on that side. Whitespace inside a keyword matches any
  run of whitespace.
* ``contains``: a case-insensitive substring, inside identifiers too (``test_`` matches
  ``test_basic.py``).
* ``exact``: a verbatim, case-sensitive substring (code: ``register_blueprint(``).
* ``starts_with``: some line of the answer, stripped, starts with it, case-insensitive.

Counting (``scoring.keyword_count``): ``once`` de-duplicates keywords of one kind
(case-insensitively, except ``exact``), and a bonus keyword that is also required counts as
required only; ``per_occurrence`` counts every listing, as a harness that sums its checks over
steps does. Empty keywords are ignored. Score only ``TrialDigest.answer_text`` with this, never
tool input or output.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from proctor.scenarios.schema import KeywordCheck, KeywordCount, KeywordKind, keyword_kind
from proctor.store.scores import KeywordsDetails

BONUS_WEIGHT = 0.5

Keyword = str | KeywordCheck


@dataclass(frozen=True)
class KeywordCoverage:
    """``value`` is None when the scenario has no keywords. Keywords of another kind than
    ``word`` are listed as ``kind: value``."""

    value: float | None
    required_hits: tuple[str, ...]
    required_missed: tuple[str, ...]
    bonus_hits: tuple[str, ...]
    bonus_missed: tuple[str, ...]

    def to_details(self) -> KeywordsDetails:
        return KeywordsDetails(
            value=self.value,
            required_hits=list(self.required_hits),
            required_missed=list(self.required_missed),
            bonus_hits=list(self.bonus_hits),
            bonus_missed=list(self.bonus_missed),
        )


@lru_cache(maxsize=4096)
def keyword_pattern(keyword: str) -> re.Pattern[str]:
    """The compiled whole-word, case-insensitive pattern for one keyword."""
    kw = keyword.strip()
    body = r"\s+".join(re.escape(part) for part in kw.split())
    head = r"(?<!\w)" if kw[:1].isalnum() or kw[:1] == "_" else ""
    tail = r"(?!\w)" if kw[-1:].isalnum() or kw[-1:] == "_" else ""
    return re.compile(head + body + tail, re.IGNORECASE)


def mentions(text: str, keyword: str) -> bool:
    """Whether ``text`` contains ``keyword`` as a whole word (the ``word`` kind)."""
    return bool(keyword.strip()) and keyword_pattern(keyword).search(text) is not None


def matches(text: str, kind: KeywordKind, value: str) -> bool:
    """Whether ``text`` satisfies one keyword of ``kind`` (rules in the module docstring)."""
    if not value.strip():
        return False
    if kind == "word":
        return mentions(text, value)
    if kind == "contains":
        return value.lower() in text.lower()
    if kind == "exact":
        return value in text
    wanted = value.strip().lower()
    return any(line.strip().lower().startswith(wanted) for line in text.splitlines())


def label(kind: KeywordKind, value: str) -> str:
    """How a keyword is listed in the details: a word as written, another kind as ``kind: value``."""
    return value if kind == "word" else f"{kind}: {value}"


def _listed(words: Sequence[Keyword], seen: set[tuple[str, str]] | None) -> list[tuple[KeywordKind, str]]:
    """The keywords that count: non-empty ones, each once unless ``seen`` is None."""
    out: list[tuple[KeywordKind, str]] = []
    for keyword in words:
        kind, value = keyword_kind(keyword)
        value = value if kind == "exact" else value.strip()
        if not value.strip():
            continue
        if seen is not None:
            key = (kind, value if kind == "exact" else value.casefold())
            if key in seen:
                continue
            seen.add(key)
        out.append((kind, value))
    return out


def keyword_coverage(
    text: str, required: Sequence[Keyword], bonus: Sequence[Keyword] = (), count: KeywordCount = "once"
) -> KeywordCoverage:
    seen: set[tuple[str, str]] | None = set() if count == "once" else None
    req = _listed(required, seen)
    bon = _listed(bonus, seen)
    req_hit = [matches(text, kind, value) for kind, value in req]
    bon_hit = [matches(text, kind, value) for kind, value in bon]
    denominator = len(req) + BONUS_WEIGHT * len(bon)
    hits = sum(req_hit) + BONUS_WEIGHT * sum(bon_hit)
    return KeywordCoverage(
        value=None if denominator == 0 else hits / denominator,
        required_hits=tuple(label(*k) for k, hit in zip(req, req_hit, strict=True) if hit),
        required_missed=tuple(label(*k) for k, hit in zip(req, req_hit, strict=True) if not hit),
        bonus_hits=tuple(label(*k) for k, hit in zip(bon, bon_hit, strict=True) if hit),
        bonus_missed=tuple(label(*k) for k, hit in zip(bon, bon_hit, strict=True) if not hit),
    )
