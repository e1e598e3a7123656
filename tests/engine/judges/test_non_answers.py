"""Every judge obeys two rules: a non-answer is never rewarded, and nothing is judged without a check."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.engine.judges.base import JudgeSubject, judge_answer
from proctor.engine.judges.offline import OfflineJudge, rubric_terms
from proctor.engine.scoring.non_answer import is_non_answer
from proctor.scenarios.loader import load_suite
from proctor.scenarios.schema import Criterion, Scenario


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "   ",
        "I could not find anything relevant.",
        "I couldn’t find any information about that in the repository.",
        "Sorry, I am unable to determine the answer.",
        "I'm sorry, but I can't help with that.",
        "No relevant results were found.",
    ],
)
def test_non_answers_are_recognised(answer: str) -> None:
    assert is_non_answer(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "The delay is computed by compute_backoff in tinyq/retry.py:66.",
        "Oslo is colder than Rome in January.",
        "I could not find a config file, but the default comes from DEFAULTS in settings.py:12, "
        "which sets the timeout to 30 seconds; the CLI flag --timeout overrides it, as main() in "
        "cli.py:40 shows, and the environment variable APP_TIMEOUT overrides both (env.py:8). "
        "So the effective value is whichever of the three is set last in that order.",
    ],
)
def test_real_answers_are_not_non_answers(answer: str) -> None:
    assert not is_non_answer(answer)


async def test_a_non_answer_scores_zero_whatever_the_rubric_matches() -> None:
    scenario = Scenario(
        id="s",
        prompt="Which city is colder, Oslo or Rome?",
        claims=["Oslo is colder."],
        rubric=[Criterion(name="city", question="Does the answer name Oslo?")],
    )
    subject = JudgeSubject(scenario, "I could not find anything about Oslo.", "", "arm", "m")
    outcome = await judge_answer(OfflineJudge(), subject, 1)
    assert outcome.verdict is not None
    assert outcome.verdict.score == 0.0 and outcome.verdict.rationale.startswith("non-answer")
    assert [c.verdict for c in outcome.verdict.claims] == ["not"]
    assert [c.score for c in outcome.verdict.criteria] == [0.0]
    good = await judge_answer(OfflineJudge(), JudgeSubject(scenario, "Oslo is colder.", "", "arm", "m"), 1)
    assert good.verdict is not None and good.verdict.score == 1.0


def test_question_words_and_sentence_initial_capitals_are_never_required_terms() -> None:
    assert rubric_terms("Does the answer name compute_backoff?") == ["compute_backoff"]
    assert rubric_terms("Which is colder, Oslo or Rome?") == ["Oslo", "Rome"]
    assert rubric_terms("Is MAX_RETRY_DELAY 300? Are `retry.py` and JobState named?") == [
        "MAX_RETRY_DELAY",
        "300",
        "retry.py",
        "JobState",
    ]


def test_the_loader_warns_about_a_scenario_with_no_checks(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "suite.yaml").write_text(
        "name: s\narms: {baseline: {baseline: true}}\nmodels: [offline:default]\n"
    )
    (tmp_path / "scenarios" / "bare.yaml").write_text("id: bare\nprompt: List the files.\n")
    (tmp_path / "scenarios" / "checked.yaml").write_text("id: checked\nprompt: Q?\nclaims: [A.]\n")
    (warning,) = load_suite(tmp_path).warnings
    assert "bare.yaml" in warning and "'bare'" in warning and "not judged" in warning
