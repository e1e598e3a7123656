"""The trial view's checks: claims, key points and rubric criteria with the judge's reasons."""

from __future__ import annotations

from proctor.app.screens.pager import PagerScreen
from proctor.app.views.judgment_fold import Verdict
from proctor.app.views.trial_checks import checks_summary, checks_text
from proctor.store.events import Scored
from proctor.store.read.reader import ScoreRecord
from proctor.store.scores import ClaimDetails, ClaimsDetails, KeyPointDetails, KeyPointsDetails, ScoreName
from tests.app.fixture_store import CLICK, Fixture
from tests.app.helpers import console, open_trial, screen_text, wait_until


def _record(event: Scored) -> ScoreRecord:
    return ScoreRecord(1, event.name, event.value, event.details)


CLAIMS = _record(
    Scored.of(
        ScoreName.CLAIMS,
        0.5,
        ClaimsDetails(
            judge="offline:lexical",
            coverage=0.5,
            threshold=0.75,
            verdicts=[
                ClaimDetails(
                    claim="The cap is 300 s.", verdict="fulfilled", score=1.0, justification="states 300"
                ),
                ClaimDetails(claim="It uses jitter.", verdict="not", score=0.0),
            ],
        ),
    )
)
POINTS = _record(
    Scored.of(
        ScoreName.KEY_POINTS,
        1.0,
        KeyPointsDetails(
            judge="human",
            satisfied=1,
            total=1,
            checks=[
                KeyPointDetails(
                    key_point="opens the file", satisfied=True, in_answer=False, in_trajectory=True
                )
            ],
        ),
    )
)
RUBRIC = [
    Verdict(1, 1, "j", {"criteria": [{"name": "old", "score": 0.1, "rationale": "first pass"}]}, ""),
    Verdict(1, 2, "j", {"criteria": [{"name": "cap", "score": 1.0, "rationale": "gives 300"}]}, ""),
    Verdict(1, 3, "j", None, "unparseable"),
]


def test_checks_list_every_claim_key_point_and_the_latest_rubric_with_reasons() -> None:
    scores = {ScoreName.CLAIMS: CLAIMS, ScoreName.KEY_POINTS: POINTS}
    assert checks_summary(scores, RUBRIC) == "claims 1/2 · key points 1/1 · rubric 1 criteria"
    assert checks_text(scores, RUBRIC).splitlines() == [
        "CLAIMS · judge offline:lexical · coverage 0.50 (pass at 0.75)",
        "  ✓ fulfilled: The cap is 300 s.",
        "      why: states 300",
        "  ✗ not: It uses jitter.",
        "KEY POINTS · judge human · 1/1 satisfied",
        "  ✓ opens the file  (in trajectory)",
        "RUBRIC · pass 2 of j",
        "  1.00  cap: gives 300",
    ]


def test_a_trial_without_checks_says_so_and_a_reshaped_score_is_skipped() -> None:
    broken = ScoreRecord(1, ScoreName.CLAIMS, 0.5, {"verdicts": "not a list"})
    assert checks_summary({ScoreName.CLAIMS: broken}, []) == "no claims, key points or rubric"
    assert checks_text({}, []) == "This trial has no claims, key points or rubric criteria recorded."


async def test_v_pages_the_checks_with_hostile_rationales_shown_as_text(fx: Fixture) -> None:
    async with console(fx.db) as (app, pilot):
        await open_trial(app, pilot, 0, 1)
        assert "checks: rubric 2 criteria (v: details)" in screen_text(app)
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, PagerScreen))
        text = screen_text(app)
        assert "correctness: cites the job class" in text and CLICK in text
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, PagerScreen))
