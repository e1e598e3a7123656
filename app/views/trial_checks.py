"""What the answer was checked against, per trial: claims, key points and rubric criteria.

Scores say how well a trial did; these say why: each claim with the judge's verdict and
justification, each key point, and each rubric criterion of the latest judge pass with its
rationale. Pure functions over stored rows, so the trial view and tests read the same text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from proctor.app.views.judgment_fold import Verdict
from proctor.store.read.reader import ScoreRecord
from proctor.store.scores import ClaimsDetails, D, KeyPointsDetails, ScoreName, UnreadableScore

_CLAIM_MARK = {"fulfilled": "✓", "partially": "◐", "not": "✗"}


def checks_summary(scores: Mapping[ScoreName, ScoreRecord], verdicts: Sequence[Verdict]) -> str:
    """One line for the side panel: how many of each kind of check held."""
    parts = []
    claims = _parsed(scores, ScoreName.CLAIMS, ClaimsDetails)
    if claims is not None and claims.verdicts:
        held = sum(v.verdict == "fulfilled" for v in claims.verdicts)
        parts.append(f"claims {held}/{len(claims.verdicts)}")
    points = _parsed(scores, ScoreName.KEY_POINTS, KeyPointsDetails)
    if points is not None and points.checks:
        parts.append(f"key points {sum(c.satisfied for c in points.checks)}/{len(points.checks)}")
    latest = _latest(verdicts)
    if latest is not None and latest.rationales():
        parts.append(f"rubric {len(latest.rationales())} criteria")
    return " · ".join(parts) if parts else "no claims, key points or rubric"


def checks_text(scores: Mapping[ScoreName, ScoreRecord], verdicts: Sequence[Verdict]) -> str:
    """Every check with its verdict and the judge's reason, for the pager."""
    out: list[str] = []
    claims = _parsed(scores, ScoreName.CLAIMS, ClaimsDetails)
    if claims is not None and claims.verdicts:
        coverage = (
            ""
            if claims.coverage is None
            else f" · coverage {claims.coverage:.2f} (pass at {claims.threshold:g})"
        )
        out.append(f"CLAIMS · judge {claims.judge or '?'}{coverage}")
        for v in claims.verdicts:
            out.append(f"  {_CLAIM_MARK.get(v.verdict, '?')} {v.verdict}: {v.claim}")
            if v.justification:
                out.append(f"      why: {v.justification}")
    points = _parsed(scores, ScoreName.KEY_POINTS, KeyPointsDetails)
    if points is not None and points.checks:
        out.append(f"KEY POINTS · judge {points.judge or '?'} · {points.satisfied}/{points.total} satisfied")
        for c in points.checks:
            where = ", ".join(w for w, on in (("answer", c.in_answer), ("trajectory", c.in_trajectory)) if on)
            out.append(
                f"  {'✓' if c.satisfied else '✗'} {c.key_point}" + (f"  (in {where})" if where else "")
            )
            if c.justification:
                out.append(f"      why: {c.justification}")
    latest = _latest(verdicts)
    if latest is not None and latest.rationales():
        out.append(f"RUBRIC · pass {latest.pass_no} of {latest.judge}")
        for name, score, rationale in latest.rationales():
            shown = "—" if score is None else f"{score:.2f}"
            out.append(f"  {shown}  {name}" + (f": {rationale}" if rationale else ""))
    return "\n".join(out) if out else "This trial has no claims, key points or rubric criteria recorded."


def _parsed(scores: Mapping[ScoreName, ScoreRecord], name: ScoreName, model: type[D]) -> D | None:
    record = scores.get(name)
    if record is None:
        return None
    try:
        return record.parsed(model)
    except (UnreadableScore, TypeError):
        return None  # the scores panel already names it unreadable


def _latest(verdicts: Sequence[Verdict]) -> Verdict | None:
    usable = [v for v in verdicts if v.verdict is not None and not v.error]
    return max(usable, key=lambda v: v.pass_no) if usable else None


__all__ = ["checks_summary", "checks_text"]
