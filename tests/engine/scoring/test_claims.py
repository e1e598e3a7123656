"""judge_claims(): offline lexical verdicts, numeric tolerances, coverage and pass thresholds."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.engine.scoring import judge_claims
from proctor.engine.scoring.lexical import Number, number_matches, statement
from proctor.store.events import Scored
from proctor.store.scores import ScoreName

HAIRCUT = [
    "The average rating of haircuts registered in the environment is 4.25625.",
    "The average age of the clients who got the haircut service is 32.5.",
]


def _verdicts(claims: list[str], answer: str) -> list[str]:
    return [v.verdict for v in judge_claims(claims, answer).verdicts]


def test_numbers_within_five_percent() -> None:
    # 4.26 vs 4.25625: |diff| = 0.00375 <= 0.05 * 4.25625 = 0.2128; 32 vs 32.5: 0.5 <= 1.625
    r = judge_claims(HAIRCUT, "The average haircut rating is 4.26 and the clients' average age is 32.")
    assert [v.verdict for v in r.verdicts] == ["fulfilled", "fulfilled"]
    # coverage = (1 + 1) / 2 = 1.0
    assert (r.coverage, r.passed, r.passed_at_half) == (1.0, True, True)


def test_wrong_value_is_not_fulfilled_whatever_the_words() -> None:
    # 4.0 vs 4.25625: 0.256 > 0.2128 -> the claim's only value is wrong -> not (0)
    r = judge_claims(HAIRCUT, "Average haircut rating 4.0; average age of haircut clients 32.5.")
    assert [v.verdict for v in r.verdicts] == ["not", "fulfilled"]
    # coverage = (0 + 1) / 2 = 0.5: fails at 0.75, passes at 0.5
    assert (r.coverage, r.passed, r.passed_at_half) == (0.5, False, True)
    assert "values not found: 4.25625" in r.verdicts[0].justification


def test_number_boundaries() -> None:
    claim = Number(100.0, False, "100")
    assert number_matches(claim, Number(105.0, False, "105"))  # exactly 5%
    assert not number_matches(claim, Number(105.01, False, "105.01"))
    assert number_matches(claim, Number(95.0, False, "95"))
    assert number_matches(Number(0.0, False, "0"), Number(0.0, False, "0"))
    assert not number_matches(Number(0.0, False, "0"), Number(0.001, False, "0.001"))


def test_percentages_within_one_point() -> None:
    claim = "The engagement rate was 15%."
    assert _verdicts([claim], "Engagement rate: 16%.") == ["fulfilled"]  # |16 - 15| = 1 <= 1
    assert _verdicts([claim], "Engagement rate: 16.5%.") == ["not"]  # 1.5 points: its only value is wrong
    assert _verdicts([claim], "Engagement rate: 15.") == ["not"]  # a plain 15 is not a percentage
    assert _verdicts([claim], "engagement rate of 14.2 percent") == ["fulfilled"]


def test_partial_credit_for_one_of_two_values() -> None:
    claim = "Revenue was 1,200 in March and 1,500 in April."
    # 1200 found, 1500 missing (1400 is 6.7% off); terms revenue, march, april all found (r = 1)
    v = judge_claims([claim], "Revenue: March 1200, April 1400.").verdicts[0]
    assert v.verdict == "partially" and "values not found: 1,500" in v.justification


def test_claims_without_numbers_use_terms_and_names() -> None:
    claim = "The person in the local graph who speaks both Spanish and Mandarin is Sofia Reyes."
    # terms: person local graph speaks spanish mandarin sofia reyes (8); names: spanish mandarin sofia reyes
    assert _verdicts([claim], "Sofia Reyes speaks Spanish and Mandarin.") == ["fulfilled"]  # r = 5/8, k = 1
    assert _verdicts([claim], "The person who speaks Spanish in the local graph is Ana.") == ["partially"]
    assert _verdicts([claim], "I do not know.") == ["not"]


def test_dates_and_number_words() -> None:
    claim = "There are three campaigns, started on 2022-06-24 and 2019-09-20."
    assert _verdicts([claim], "3 campaigns; start dates 2022-06-24 and 2019-09-20") == ["fulfilled"]
    assert _verdicts([claim], "three campaigns; start dates 2022-06-24 and 2019-09-21") == ["partially"]
    st_ = statement(claim)
    assert st_.literals == ("2022-06-24", "2019-09-20")
    assert [n.value for n in st_.numbers] == [3.0]


def test_coverage_threshold_and_no_claims() -> None:
    claims = ["alpha beta gamma delta", "epsilon zeta eta theta", "iota kappa lambda mu"]
    # no anchors: fulfilled (4/4 >= 0.75) + partially (2/4 >= 0.5) + not (0/4) -> 1.5 / 3 = 0.5
    r = judge_claims(claims, "alpha beta gamma delta; epsilon zeta", threshold=0.5)
    assert [v.score for v in r.verdicts] == [1.0, 0.5, 0.0]
    assert r.coverage == pytest.approx(0.5) and r.passed is True
    assert judge_claims(claims, "alpha beta gamma delta; epsilon zeta").passed is False
    empty = judge_claims([], "anything")
    assert (empty.coverage, empty.passed, empty.passed_at_half) == (None, None, None)
    with pytest.raises(ValueError):
        judge_claims(claims, "x", threshold=1.5)


def test_details_record_the_judge_and_threshold() -> None:
    d = judge_claims(HAIRCUT[:1], "4.25625 average rating of haircuts").to_details()
    assert d.judge == "offline:lexical" and d.threshold == 0.75
    assert d.verdicts[0].score == 1.0
    stored = Scored.of(ScoreName.CLAIMS, d.coverage, d).details
    assert stored["passed_at_0.5"] is True and "na" not in stored


@settings(deadline=None, derandomize=True)
@given(st.lists(st.text(max_size=60), max_size=4), st.text(max_size=200))
def test_judge_is_total_and_bounded(claims: list[str], answer: str) -> None:
    r = judge_claims(claims, answer)
    if r.coverage is not None:
        assert 0.0 <= r.coverage <= 1.0
        assert r.passed == (r.coverage >= 0.75)
        assert all(v.verdict in ("fulfilled", "partially", "not") for v in r.verdicts)


@settings(deadline=None, derandomize=True)
@given(st.text(max_size=120))
def test_a_claim_repeated_as_the_answer_is_fulfilled(claim: str) -> None:
    r = judge_claims([claim], claim)
    assert r.coverage in (None, 1.0)
