"""Offline, lexical claim judging (MCP-Atlas style): fulfilled / partially / not.

Each claim is broken into terms, numbers and literal values (see ``lexical``) and checked
against the answer text only. A claim's *values* are its numbers and literals; its *anchors*
are its values and key terms (names, quoted words). With ``r`` = share of the claim's terms
found and ``k`` = share of its key terms found (1 when it has none):

* fulfilled (1.0): every value matches, k >= 0.75, and r >= 0.5 (r >= 0.75 for a claim without
  anchors, which has nothing but its words to go on);
* partially (0.5): otherwise, if the claim has values, all match and r >= 0.25; or if at least
  one value matches (or it has none) and r >= 0.5;
* not (0.0): everything else; in particular a claim whose only value is wrong is *not*
  fulfilled however many of its words appear.

coverage = mean of the claim scores; pass = coverage >= threshold (default 0.75), and the
result also reports pass at 0.5. This judge cannot see negation or paraphrase; it is labelled
offline wherever it is shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from proctor.store.scores import ClaimDetails, ClaimsDetails

from .lexical import Evidence, Match, evidence, match, statement

ClaimVerdictKind = Literal["fulfilled", "partially", "not"]
SCORES: dict[ClaimVerdictKind, float] = {"fulfilled": 1.0, "partially": 0.5, "not": 0.0}
DEFAULT_THRESHOLD = 0.75
HALF_THRESHOLD = 0.5


@dataclass(frozen=True)
class ClaimVerdict:
    claim: str
    verdict: ClaimVerdictKind
    justification: str

    @property
    def score(self) -> float:
        return SCORES[self.verdict]


@dataclass(frozen=True)
class ClaimsResult:
    """``coverage``/``passed`` are None when the scenario has no claims."""

    verdicts: tuple[ClaimVerdict, ...]
    coverage: float | None
    threshold: float
    passed: bool | None
    passed_at_half: bool | None

    def to_details(self) -> ClaimsDetails:
        return ClaimsDetails(
            judge="offline:lexical",
            coverage=self.coverage,
            threshold=self.threshold,
            passed=self.passed,
            passed_at_half=self.passed_at_half,
            verdicts=[
                ClaimDetails(claim=v.claim, verdict=v.verdict, score=v.score, justification=v.justification)
                for v in self.verdicts
            ],
        )


def verdict_for(m: Match) -> ClaimVerdictKind:
    r = m.term_ratio
    anchored = m.has_numbers or m.key_terms_total > 0
    if m.all_numbers and m.key_ratio >= 0.75 and r >= (0.5 if anchored else 0.75):
        return "fulfilled"
    if m.has_numbers and m.all_numbers and r >= 0.25:
        return "partially"
    if (not m.has_numbers or m.numbers_found) and r >= 0.5:
        return "partially"
    return "not"


def judge_claim(claim: str, answer: Evidence) -> ClaimVerdict:
    m = match(statement(claim), answer)
    return ClaimVerdict(claim, verdict_for(m), m.explain())


def judge_claims(
    claims: Sequence[str], answer_text: str, threshold: float = DEFAULT_THRESHOLD
) -> ClaimsResult:
    if not 0.0 <= threshold <= 1.0:
        raise ValueError("threshold must be within [0, 1]")
    ev = evidence(answer_text)
    verdicts = tuple(judge_claim(c, ev) for c in claims if c.strip())
    if not verdicts:
        return ClaimsResult((), None, threshold, None, None)
    coverage = sum(v.score for v in verdicts) / len(verdicts)
    return ClaimsResult(verdicts, coverage, threshold, coverage >= threshold, coverage >= HALF_THRESHOLD)
