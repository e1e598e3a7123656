"""Keyword coverage of the answer text (DESIGN §5).

coverage = (required hits + 0.5 · bonus hits) / (required + 0.5 · bonus)

Matching rules: case-insensitive; a keyword matches only as a whole word or identifier, i.e.
where the keyword starts (ends) with a letter, digit or underscore, the character before
(after) it must not be one: ``reserve`` does not match ``reserved``, ``reserve_x`` or
``preserve``, but matches ``reserve-price`` and ``self.reserve()``. A keyword that starts or ends
with punctuation (``C++``, ``--force``) has no boundary on that side. Whitespace inside a
keyword matches any run of whitespace. Keywords are de-duplicated case-insensitively (a bonus
keyword that is also required counts as required only); empty keywords are ignored.
Score only ``TrialDigest.answer_text`` with this, never tool input or output.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from proctor.store.scores import KeywordsDetails

BONUS_WEIGHT = 0.5


@dataclass(frozen=True)
class KeywordCoverage:
    """``value`` is None when the scenario has no keywords."""

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
    """Whether ``text`` contains ``keyword`` under the rules above."""
    return bool(keyword.strip()) and keyword_pattern(keyword).search(text) is not None


def _dedupe(words: Sequence[str], exclude: set[str]) -> list[str]:
    out: list[str] = []
    for w in words:
        key = w.strip().casefold()
        if key and key not in exclude:
            exclude.add(key)
            out.append(w.strip())
    return out


def keyword_coverage(text: str, required: Sequence[str], bonus: Sequence[str] = ()) -> KeywordCoverage:
    seen: set[str] = set()
    req = _dedupe(required, seen)
    bon = _dedupe(bonus, seen)
    req_hits = tuple(k for k in req if mentions(text, k))
    bon_hits = tuple(k for k in bon if mentions(text, k))
    denominator = len(req) + BONUS_WEIGHT * len(bon)
    value = None if denominator == 0 else (len(req_hits) + BONUS_WEIGHT * len(bon_hits)) / denominator
    return KeywordCoverage(
        value=value,
        required_hits=req_hits,
        required_missed=tuple(k for k in req if k not in req_hits),
        bonus_hits=bon_hits,
        bonus_missed=tuple(k for k in bon if k not in bon_hits),
    )
