"""The score vocabulary: one name list, one details model per score, checked on write and read."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from proctor.store.events import Scored
from proctor.store.read.reader import StoreReader
from proctor.store.scores import (
    DETERMINISTIC,
    DISPLAY_ORDER,
    ClaimsDetails,
    FairnessDetails,
    GroundingCounts,
    GroundingDetails,
    LayerDetails,
    PassedDetails,
    ScoreDetails,
    ScoreName,
    ToolMatchDetails,
    UnreadableScore,
    details_model,
    parse_details,
)
from proctor.store.write.writer import StoreWriter, TrialRow


def test_every_score_has_a_details_model_and_the_lists_use_the_vocabulary() -> None:
    assert all(issubclass(details_model(name), ScoreDetails) for name in ScoreName)
    assert set(ScoreName) >= DETERMINISTIC and set(DISPLAY_ORDER) <= set(ScoreName)
    assert ScoreName.PASSED not in DETERMINISTIC and ScoreName.FAILURE_MODE not in DISPLAY_ORDER


def test_a_score_refuses_another_scores_details() -> None:
    with pytest.raises(TypeError, match="fairness takes FairnessDetails, not GroundingDetails"):
        Scored.of(ScoreName.FAIRNESS, 0.5, GroundingDetails())
    # tfs and tefs share one match, so either takes the tool-match model.
    assert Scored.of(ScoreName.TEFS, 1.0, ToolMatchDetails(gold_calls=2)).details["gold_calls"] == 2


def test_stored_form_keeps_the_published_keys() -> None:
    """Export readers see the same JSON as before the vocabulary: aliases kept, no null ``na``."""
    stored = Scored.of(ScoreName.CLAIMS, 1.0, ClaimsDetails(passed_at_half=True, coverage=1.0)).details
    assert stored["passed_at_0.5"] is True and "na" not in stored and "passed_at_half" not in stored
    na = Scored.of(ScoreName.FAIRNESS, None, FairnessDetails(na="not judged")).details
    assert na["na"] == "not judged"
    assert parse_details(ScoreName.CLAIMS, stored, ClaimsDetails).passed_at_half is True


def test_reshaped_details_name_the_score_and_field() -> None:
    with pytest.raises(UnreadableScore, match=r"score grounding: details field counts\.grounded"):
        parse_details(ScoreName.GROUNDING, {"counts": {"grounded": "three"}}, GroundingDetails)
    with pytest.raises(UnreadableScore, match=r"citations\.0\.status"):
        parse_details(
            ScoreName.GROUNDING,
            {"citations": [{"raw": "a.py:1", "path": "a.py", "status": "maybe"}]},
            GroundingDetails,
        )


def test_a_base_model_reads_any_score_that_has_its_fields() -> None:
    adoption = {"layer": "adoption", "value": 0.5, "label": "0.500", "arm_calls": 3}
    assert parse_details(ScoreName.ADOPTION, adoption, LayerDetails).label == "0.500"
    assert parse_details(ScoreName.PASSED, {"rule": "r", "na": "why"}, ScoreDetails).na == "why"
    with pytest.raises(TypeError, match="passed has PassedDetails details, not GroundingDetails"):
        parse_details(ScoreName.PASSED, {}, GroundingDetails)


def test_details_written_before_the_vocabulary_still_read() -> None:
    """Rows of older runs: claims carried a duplicate ``pass`` key, layers an ``na``-only form."""
    old_claims = {"judge": "offline:lexical", "coverage": 0.5, "threshold": 0.75, "passed": False,
                  "passed_at_0.5": True, "verdicts": [], "pass": False}  # fmt: skip
    assert parse_details(ScoreName.CLAIMS, old_claims, ClaimsDetails).passed is False
    assert parse_details(ScoreName.FAIRNESS, {"na": "errored"}, FairnessDetails).components == {}


async def test_round_trip_through_a_real_database_and_an_unknown_name(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    writer = await StoreWriter.open(db, flush_interval_s=0.01)
    await writer.create_run("r1", "suite", {})
    await writer.add_trials("r1", [TrialRow("s", "arm", "m", 0, 1)])
    details = GroundingDetails(counts=GroundingCounts(grounded=2), label="100.0% grounded")
    writer.emit("r1", Scored.of(ScoreName.GROUNDING, 1.0, details), trial_id=1)
    writer.emit(
        "r1", Scored.of(ScoreName.PASSED, 1.0, PassedDetails(rule="judge mean score >= 0.5")), trial_id=1
    )
    await writer.close()
    with StoreReader(db) as reader:
        by_name = {s.name: s for s in reader.scores(1)}
        trial = reader.trial(1)
    assert trial is not None and trial.passed is True
    assert by_name[ScoreName.GROUNDING].parsed(GroundingDetails) == details
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO scores (trial_id, name, value, details, created_at) VALUES (?, ?, ?, ?, 0)",
            (1, "vibes", 0.9, json.dumps({})),
        )
    with StoreReader(db) as reader, pytest.raises(UnreadableScore, match="unknown score name 'vibes'"):
        reader.scores()


def test_grounding_counts_tally_statuses_and_rate_is_grounded_over_all_citations() -> None:
    counts = GroundingCounts.of(["grounded", "hallucinated", "grounded", "unresolved"])
    assert (counts.grounded, counts.unresolved, counts.hallucinated, counts.total) == (2, 1, 1, 4)
    assert counts.rate == 0.5 and counts.label == "50.0% grounded"


def test_no_citations_have_no_rate_not_a_rate_of_zero() -> None:
    assert GroundingCounts().rate is None and GroundingCounts().label == "no citations"
    assert GroundingCounts(hallucinated=3).rate == 0.0


def test_grounding_counts_of_several_trials_add_up() -> None:
    trials = [GroundingCounts(grounded=2, unresolved=1), GroundingCounts(hallucinated=1), GroundingCounts()]
    total = GroundingCounts.summed(trials)
    assert total == GroundingCounts(grounded=2, unresolved=1, hallucinated=1)
    assert total.rate == 0.5 and GroundingCounts.summed([]) == GroundingCounts()


def test_the_rate_is_derived_never_stored() -> None:
    """A stored grounding score keeps its three counts only: the rate is the score's value."""
    stored = Scored.of(
        ScoreName.GROUNDING, 0.5, GroundingDetails(counts=GroundingCounts(grounded=1, unresolved=1))
    )
    assert stored.details["counts"] == {"grounded": 1, "unresolved": 1, "hallucinated": 0}
