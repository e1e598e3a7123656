"""Why each trial failed, in the report: one line per failed or errored trial, its reason in full.

The reason is the stored verdict's own (store/verdict_reason.py: the rule that failed it with its
numbers), or the error's cause; the same words as the console's trial header, the JUnit
failure and the HTML page's fold titles. Never folded: a reader should not have to open anything
to see why a trial failed.
"""

from __future__ import annotations

from proctor.engine.reports.error_causes import cause_of
from proctor.engine.reports.md_format import cell, table
from proctor.engine.reports.report_model import Report, TrialEntry, score_details
from proctor.store.scores import PassedDetails, ScoreName, UnreadableScore, parse_details
from proctor.store.verdict_reason import verdict_reason


def trial_reason(t: TrialEntry) -> str:
    """Why a trial of the report has its verdict (or its error), in store/verdict_reason.py's words."""
    if t["status"] == "error":
        return f"error: {cause_of(t['error'])}"
    stored = (t.get("scores") or {}).get(ScoreName.PASSED)
    raw = None if stored is None else score_details(stored)
    try:
        details = parse_details(ScoreName.PASSED, raw, PassedDetails) if isinstance(raw, dict) else None
    except UnreadableScore as err:
        return f"the passed score is unreadable ({err})"
    errors = [str(j["error"]) for j in t["judgments"] if j["error"]]
    return verdict_reason(t["passed"], details, judge_errors=errors)


def failed_trials(report: Report) -> list[TrialEntry]:
    return [t for t in report["trials"] if t["passed"] is False or t["status"] == "error"]


def failed_trials_section(report: Report) -> list[str]:
    failed = failed_trials(report)
    if not failed:
        return []
    rows = [
        [
            str(t["id"]),
            cell(t["scenario"]),
            f"{cell(t['arm'])} · {cell(t['model'])}",
            str(t["epoch"]),
            cell(trial_reason(t)),
        ]
        for t in failed
    ]
    return [
        "## Failed trials",
        "",
        f"{len(failed)} trial(s) failed or ended in error; each with the rule that failed it and its numbers.",
        "",
        *table(["trial", "scenario", "arm · model", "epoch", "why"], rows),
    ]


__all__ = ["failed_trials", "failed_trials_section", "trial_reason"]
