"""The one line that says why a trial has its verdict, from the stored ``passed`` details.

The rows below are what the evaluation stored for the demo at 1178ed9 (``proctor report --format
json`` on ``proctor demo --headless``) and for a run whose judge could not be reached; newer rules
come from tests/engine/grading/test_evaluation.py, which runs the evaluation itself.
"""

from __future__ import annotations

from proctor.store.scores import PassedDetails
from proctor.store.verdict_reason import NOT_SCORED, failed_check, verdict_reason

DEMO_24 = {
    "rule": "judged claims coverage 1.00 >= 0.75; failed on grounding: 7 of 27 citations grounded (26%) "
    "< scoring.pass_requires_grounding 80%",
    "ungrounded": True,
}
DEMO_14 = {"rule": "judged claims coverage 0.00 >= 0.75"}
JUDGE_DOWN = {"rule": "no judge verdict: every judge pass was an error, which is neither a pass nor a fail"}
CONNECT = (
    "judge call failed: anthropic: connection failed to http://127.0.0.1:9/v1 (gave up after 5 attempts)"
)


def _details(raw: dict[str, object]) -> PassedDetails:
    return PassedDetails.model_validate(raw)


def test_a_trial_failed_by_its_citations_says_the_grounding_rule_and_not_the_claims_it_met() -> None:
    assert verdict_reason(False, _details(DEMO_24)) == (
        "failed on grounding: 7 of 27 citations grounded (26%) < scoring.pass_requires_grounding 80%"
    )


def test_a_threshold_a_failed_trial_missed_reads_as_below_it() -> None:
    assert verdict_reason(False, _details(DEMO_14)) == "failed on judged claims coverage 0.00 < 0.75"
    assert verdict_reason(True, _details({"rule": "judged claims coverage 1.00 >= 0.75"})) == (
        "passed: judged claims coverage 1.00 >= 0.75"
    )


def test_a_panel_that_failed_a_trial_says_how_the_judges_voted() -> None:
    panel = {"rule": "panel majority of 3 judges", "votes": {"a": True, "b": False, "c": None}}
    assert verdict_reason(False, _details(panel)) == (
        "failed on the judge panel: 1 of 3 judges passed it, 1 abstained (judge errors); "
        "a majority or an even split passes"
    )


def test_no_verdict_names_its_cause_and_the_judges_errors_once() -> None:
    reason = verdict_reason(None, _details(JUDGE_DOWN), judge_errors=[CONNECT, CONNECT])
    assert reason == (
        "no verdict: every judge pass was an error, which is neither a pass nor a fail; "
        f"judge error on 2 pass(es): {CONNECT}"
    )


def test_a_trial_never_scored_says_so_or_says_what_broke_the_scoring() -> None:
    assert verdict_reason(None, None) == f"no verdict: {NOT_SCORED}"
    assert verdict_reason(None, None, scoring_error="KeyError: 'claims'") == (
        "no verdict: scoring failed: KeyError: 'claims'"
    )


def test_failures_group_by_the_check_that_failed_them_not_by_their_numbers() -> None:
    assert failed_check(verdict_reason(False, _details(DEMO_24))) == "grounding"
    assert failed_check(verdict_reason(False, _details(DEMO_14))) == "judged claims coverage"
    tools = "failed on tool-call match (TFS, strict) 0.00 < 1.00: the only check is the gold calls"
    assert failed_check(tools) == "tool-call match (TFS, strict)"


def test_a_rule_that_names_the_judges_errors_itself_is_not_followed_by_them_again() -> None:
    rule = "no judge verdict: judge failed on 2 of 2 passes: HTTP 400 temperature is deprecated"
    details = PassedDetails(rule=rule, judge_failed=True)
    line = verdict_reason(None, details, judge_errors=["HTTP 400 temperature is deprecated"] * 2)
    assert line == "no verdict: judge failed on 2 of 2 passes: HTTP 400 temperature is deprecated"
