"""The layer columns a report reads once are what each section would read of the scores alone."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

import pytest

from proctor.engine.reports.aggregate import (
    ReportInputs,
    is_baseline,
    layer_columns,
    summarize_scores,
    value,
)
from proctor.engine.reports.arm_comparisons import baseline_comparisons, bootstrap_requests, fairness_ranking
from proctor.store.read.reader import ScoreRecord, StoreReader, TrialRecord
from proctor.store.scores import ScoreName
from tests.engine.judging_fixture import build_run

Scores = Mapping[int, Mapping[ScoreName, ScoreRecord]]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[TrialRecord], Scores]:
    fx = asyncio.run(build_run(tmp_path_factory.mktemp("aggregate")))
    with StoreReader(Path(fx.db)) as r:
        trials = r.trials()
        scores: dict[int, dict[ScoreName, ScoreRecord]] = {}
        for s in r.scores():
            scores.setdefault(s.trial_id, {})[s.name] = s
    return trials, scores


def test_layer_columns_hold_each_trials_finite_layer_values_and_baseline_flag(
    run: tuple[list[TrialRecord], Scores],
) -> None:
    trials, scores = run
    columns = layer_columns(trials, scores)
    for name, column in (
        (ScoreName.FAIRNESS, columns.fairness),
        (ScoreName.ADOPTION, columns.adoption),
        (ScoreName.LLM_QUALITY, columns.llm_quality),
    ):
        assert {t.id: v for t in trials if (v := value(scores.get(t.id, {}), name)) is not None} == column
    assert columns.baseline == {t.id for t in trials if is_baseline(scores.get(t.id, {}))}
    assert columns.baseline and columns.fairness  # the fixture has a baseline arm and scored trials


def test_sections_given_the_shared_columns_give_what_they_compute_alone(
    run: tuple[list[TrialRecord], Scores],
) -> None:
    trials, scores = run
    columns = layer_columns(trials, scores)
    assert bootstrap_requests(trials, scores, columns) == bootstrap_requests(trials, scores)
    assert fairness_ranking(trials, scores, 0.05, columns) == fairness_ranking(trials, scores, 0.05)
    compared = baseline_comparisons(trials, scores)
    assert compared and baseline_comparisons(trials, scores, columns) == compared
    alone = summarize_scores(ReportInputs(trials, scores, [], {}))
    assert summarize_scores(ReportInputs(trials, scores, [], {}, columns=columns)) == alone
    assert [s.baseline for s in alone].count(True) == 1
