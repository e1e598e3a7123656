"""The offline judge: lexical matching with numeric tolerance, no network, labelled as such.

Claims and key points are matched by the pure scoring functions; each rubric criterion is
scored by whether the answer mentions the identifiers and numbers its question names. It is
deterministic, so its passes agree exactly (σ = 0): a variance panel built on it measures the
agent, not the judge, and says so.
"""

from __future__ import annotations

import re

from proctor.engine.judges.base import (
    ClaimJudgment,
    CriterionScore,
    JudgeOutcome,
    JudgeSubject,
    Verdict,
    rubric_hash,
    text_hash,
)
from proctor.engine.scoring import judge_claims, judge_key_points, mentions
from proctor.scenarios.schema import Criterion
from proctor.store.records import JudgmentMeta

PROMPT_VERSION = "offline-lexical-1"
METHOD = "lexical: claims and key points by term overlap (numbers within 5%, percentages within 1 point); rubric by named terms"
_TERM = re.compile(
    r"`([^`]+)`|\b([A-Za-z_]*[_A-Z][A-Za-z0-9_]*[a-z0-9_]|[A-Za-z_]+_[A-Za-z0-9_]+|\d+(?:\.\d+)?)\b"
)


class OfflineJudge:
    judge_id = "offline:lexical"
    needs_criteria = True  # see judges.base.can_judge

    def __init__(self, claims_threshold: float = 0.75) -> None:
        self._threshold = claims_threshold

    async def judge(self, subject: JudgeSubject, pass_no: int) -> JudgeOutcome:
        return JudgeOutcome(verdict=self.verdict(subject), error="", meta=self.meta(subject))

    def meta(self, subject: JudgeSubject) -> JudgmentMeta:
        return JudgmentMeta(
            prompt_version=PROMPT_VERSION,
            prompt_hash=text_hash(METHOD),
            rubric_hash=rubric_hash(subject.scenario),
            temperature=0.0,
            source="proctor:offline",
        )

    def verdict(self, subject: JudgeSubject) -> Verdict:
        sc = subject.scenario
        answer = subject.answer_text
        parts: list[float] = []
        claims: list[ClaimJudgment] = []
        if sc.claims:
            result = judge_claims(sc.claims, answer, self._threshold)
            claims = [
                ClaimJudgment(claim=v.claim, verdict=v.verdict, justification=v.justification)
                for v in result.verdicts
            ]
            parts.append(result.coverage if result.coverage is not None else 0.0)
        kp_success: bool | None = None
        if sc.key_points:
            kp = judge_key_points(sc.key_points, answer, subject.audit_text)
            kp_success = kp.success
            parts.append(1.0 if kp.success else 0.0)
        criteria = [_criterion(c, answer) for c in sc.rubric]
        if criteria:
            total_w = sum(c.weight for c in sc.rubric) or 1.0
            parts.append(
                sum(cs.score * c.weight for cs, c in zip(criteria, sc.rubric, strict=True)) / total_w
            )
        score = sum(parts) / len(parts) if parts else (1.0 if answer.strip() else 0.0)
        return Verdict(
            score=round(score, 6),
            criteria=criteria,
            claims=claims,
            key_points_success=kp_success,
            rationale="offline lexical judge (no model): " + METHOD,
        )


_QUESTION_WORDS = frozenset(
    "does do did is are was were which what when where who whom whose why how can could should would will "
    "has have had may might must shall the a an if".split()
)


def _is_term(question: str, match: re.Match[str]) -> bool:
    """A named term of a rubric question: backticked, an identifier, a number or a proper name.

    A word capitalized only because it starts the sentence ("Does", "Which") is not one, nor is a
    question word anywhere; "Oslo" in the middle of a sentence is.
    """
    if match.group(1):
        return True
    word = match.group(2)
    if len(word) < 2:
        return False
    if "_" in word or any(ch.isdigit() for ch in word) or any(ch.isupper() for ch in word[1:]):
        return True
    if word.casefold() in _QUESTION_WORDS:
        return False
    before = question[: match.start()].rstrip()
    return not (before == "" or before[-1] in ".?!:;\n\"'(")


def rubric_terms(question: str) -> list[str]:
    """The terms an answer must mention to meet a rubric criterion, in order, without repeats."""
    terms = [m.group(1) or m.group(2) for m in _TERM.finditer(question) if _is_term(question, m)]
    return list(dict.fromkeys(terms))


def _criterion(c: Criterion, answer: str) -> CriterionScore:
    terms = rubric_terms(c.question)
    if not terms:
        return CriterionScore(
            name=c.name, score=1.0 if answer.strip() else 0.0, rationale="no checkable terms; answer present"
        )
    hits = [t for t in terms if mentions(answer, t)]
    return CriterionScore(
        name=c.name,
        score=round(len(hits) / len(terms), 6),
        rationale=f"mentions {len(hits)}/{len(terms)} named terms"
        + (f": missing {', '.join(t for t in terms if t not in hits)}" if len(hits) < len(terms) else ""),
    )
