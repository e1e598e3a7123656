"""Why a trial has the verdict it has, in one line a person reads: the rule that failed it with
its numbers ("failed on grounding: 7 of 27 citations grounded (26%) < …"), or why it has none.

One wording for every place that says it: the console's trial header and matrix status line,
the Markdown and HTML reports, JUnit and the headless summary. It is read from what the store
holds, never recomputed: the ``passed`` score's rule (the check that decided, with the measured
value and its threshold, ``coverage 0.50 >= 0.75``), and for a trial without a verdict whatever
else explains it (the judges' errors, an error while scoring). A rule of the form ``X >= T``
that failed a trial is shown as ``X < T``: that is why it failed.
"""

from __future__ import annotations

from collections.abc import Sequence

from proctor.store.scores import PassedDetails

FAILED_ON = "failed on "
NO_VERDICT = "no verdict: "
GROUNDING_BLOCK = "failed on grounding"
"""How the rule of a trial failed by ``scoring.pass_requires_grounding`` names that part."""
NOT_SCORED = "not scored: the engine stopped before scoring it (proctor judge DB scores it)"
# Rules that already say "no verdict" in their own words; the line says it once.
_NO_VERDICT_PREFIXES = ("no verdict from a check: ", "no judge verdict: ", "not judged: ")


def verdict_reason(
    passed: bool | None,
    details: PassedDetails | None,
    *,
    judge_errors: Sequence[str] = (),
    scoring_error: str | None = None,
) -> str:
    """``passed: …``, ``failed on …`` or ``no verdict: …`` for one trial's stored verdict.

    ``judge_errors`` are the trial's judge passes that failed (their messages), ``scoring_error``
    the message of an error raised while scoring it; both only speak for a trial with no verdict.
    """
    if passed is True:
        return f"passed: {details.rule}" if details is not None and details.rule else "passed"
    if passed is False:
        return failed_reason(details)
    return no_verdict_reason(details, judge_errors=judge_errors, scoring_error=scoring_error)


def failed_reason(details: PassedDetails | None) -> str:
    if details is None or not details.rule:
        return f"{FAILED_ON}its pass rule (none recorded)"
    rule = details.rule
    if details.ungrounded and GROUNDING_BLOCK in rule:
        return rule[rule.index(GROUNDING_BLOCK) :].split("; ")[0]
    if details.votes:
        yes = sum(v is True for v in details.votes.values())
        abstained = sum(v is None for v in details.votes.values())
        return (
            f"{FAILED_ON}the judge panel: {yes} of {len(details.votes)} judges passed it"
            + (f", {abstained} abstained (judge errors)" if abstained else "")
            + "; a majority or an even split passes"
        )
    return FAILED_ON + rule.replace(" >= ", " < ", 1)


def failed_check(reason: str) -> str:
    """The check a ``failed on …`` reason names, without its numbers: what failures group by
    ("grounding", "judged claims coverage", "tool-call match (TFS, strict)")."""
    check = reason.removeprefix(FAILED_ON)
    cut = next((i for i, ch in enumerate(check) if ch.isdigit()), len(check))
    return check[:cut].rstrip(" :(") or check


def no_verdict_reason(
    details: PassedDetails | None, *, judge_errors: Sequence[str] = (), scoring_error: str | None = None
) -> str:
    if details is not None and details.rule:
        why = details.rule
        for prefix in _NO_VERDICT_PREFIXES:
            why = why.removeprefix(prefix)
    elif scoring_error:
        why = f"scoring failed: {scoring_error}"
        scoring_error = None
    else:
        why = NOT_SCORED
    out = NO_VERDICT + why
    distinct = list(dict.fromkeys(e for e in judge_errors if e))
    if distinct and not (details is not None and details.judge_failed):  # its rule names them already
        more = f" (and {len(distinct) - 1} other error(s))" if len(distinct) > 1 else ""
        out += f"; judge error on {len(judge_errors)} pass(es): {distinct[0]}{more}"
    if scoring_error:
        out += f"; scoring failed: {scoring_error}"
    return out


__all__ = [
    "FAILED_ON",
    "GROUNDING_BLOCK",
    "NOT_SCORED",
    "NO_VERDICT",
    "failed_check",
    "failed_reason",
    "no_verdict_reason",
    "verdict_reason",
]
