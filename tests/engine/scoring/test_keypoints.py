"""judge_key_points(): binary success from key points over the answer and the trajectory."""

from __future__ import annotations

from proctor.engine.scoring import judge_key_points

POINTS = [
    "Search arxiv for papers by Jane Castleman",
    "Query the notion database for the campaign engagement rate of 15%",
]
AUDIT = (
    '[tool call] arxiv/arxiv_search_papers({"query": "jane castleman ad locality 2024"})\n'
    "[tool result] arxiv/arxiv_search_papers: Why am I Still Seeing This ...\n"
    '[tool call] notion/notion_query_database({"database_id": "21b9"})\n'
    "[tool result] notion/notion_query_database: campaign A engagement rate 15%"
)


def test_success_when_every_key_point_is_met_in_answer_or_trajectory() -> None:
    r = judge_key_points(POINTS, "The paper is 'Why am I Still Seeing This'; three campaigns tie.", AUDIT)
    assert r.success is True and r.satisfied == 2
    # point 1: search, arxiv, paper, jane, castleman all in the trajectory (tool name split into words)
    assert r.checks[0].in_trajectory and not r.checks[0].in_answer
    assert r.reason == "all 2 key points met"


def test_one_unmet_point_fails_the_task() -> None:
    audit = AUDIT.replace("15%", "12%")  # |12 - 15| = 3 points > 1
    r = judge_key_points(POINTS, "Answer.", audit)
    assert r.success is False
    assert [c.satisfied for c in r.checks] == [True, False]
    assert "values not found: 15%" in r.checks[1].justification
    assert r.reason == "1 of 2 key points not met"


def test_no_answer_is_a_failure_even_if_the_trajectory_meets_the_points() -> None:
    r = judge_key_points(POINTS, "   ", AUDIT)
    assert r.success is False and r.satisfied == 2 and r.reason == "no answer was given"


def test_term_ratio_threshold() -> None:
    # "Compute the average rating of barbers": terms compute, average, rating, barber (4)
    point = ["Compute the average rating of barbers"]
    # evidence has average + rating = 2/4 = 0.5 < 0.6
    assert judge_key_points(point, "average rating", "").success is False
    # threshold 0.5 -> 0.5 >= 0.5
    assert judge_key_points(point, "average rating", "", min_term_ratio=0.5).success is True


def test_no_key_points_is_none() -> None:
    r = judge_key_points(["", " "], "answer", "")
    assert r.success is None and r.to_details().total == 0
