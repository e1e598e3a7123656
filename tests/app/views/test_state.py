from __future__ import annotations

import math
from dataclasses import replace

import pytest

from proctor.app.views.feed import Details, Snapshot, TailBatch
from proctor.app.views.matrix_build import build_matrix, cell_of, fold_cell
from proctor.app.views.state import ConsoleState, Filters, display_status
from proctor.store.events import (
    ErrorEvent,
    Judged,
    ModelResponse,
    OperatorCommand,
    Scored,
    TrialStarted,
    Usage,
)
from proctor.store.read.reader import JudgmentRecord, RunRecord, ScoreRecord, UnreadableScoreRow
from proctor.store.scores import (
    FairnessDetails,
    GroundingCounts,
    GroundingDetails,
    PassedDetails,
    ScoreName,
    dump_details,
)
from proctor.store.verdict_reason import NOT_SCORED
from tests.app.events_factory import stored, trial

# The config as the runner records it: the suite's scoring and judge sections.
CONFIG = {"held_out": ["s2"], "scoring": {"variance_floor": 0.1}, "judge": {"sd": "population"}}
RUN = RunRecord("r1", "suite", CONFIG, 0.0, 0.0, None, "running")


def response(tokens: int, tool_io: int, cost: float = 0.01, estimated: bool = False) -> ModelResponse:
    return ModelResponse(
        turn=1, model="m", text="", tool_calls=[], stop_reason="end_turn",
        usage=Usage(input_tokens=tokens, output_tokens=5, estimated=estimated),
        tool_io_tokens=tool_io, cost_usd=cost, latency_s=0.1,
    )  # fmt: skip


def judged(pass_no: int, score: float, criteria: dict[str, float]) -> Judged:
    verdict = {
        "score": score,
        "criteria": [{"name": k, "score": v, "rationale": ""} for k, v in criteria.items()],
    }
    return Judged(pass_no=pass_no, judge="j", verdict=verdict)


@pytest.mark.parametrize(
    ("status", "passed", "shown"),
    [("queued", None, "queued"), ("running", None, "running"), ("finished", None, "scoring"),
     ("finished", True, "passed"), ("finished", False, "failed"), ("error", None, "error")],
)  # fmt: skip
def test_display_status(status: str, passed: bool | None, shown: str) -> None:
    assert display_status(trial(status=status, passed=passed)) == shown


@pytest.mark.parametrize(
    "details",
    [PassedDetails(rule="no answer", no_answer=True), PassedDetails(rule="no verdict", no_check=True)],
)
def test_a_scored_trial_without_a_verdict_is_not_left_scoring(details: PassedDetails) -> None:
    passed = ScoreRecord(1, ScoreName.PASSED, None, dump_details(ScoreName.PASSED, details))
    assert display_status(trial(status="finished", passed=None), {ScoreName.PASSED: passed}) == "not judged"


def loaded_state() -> ConsoleState:
    state = ConsoleState(clock=lambda: 1000.0)
    trials = [
        trial(1, status="finished", passed=True, started_at=900.0, finished_at=960.0, input_tokens=100,
              output_tokens=10, cost_usd=0.5, attempt=1),
        trial(2, arm="mcp", status="finished", passed=False, started_at=900.0, finished_at=990.0,
              input_tokens=200, output_tokens=20, cost_usd=1.5, tokens_estimated=True, attempt=1),
        trial(3, scenario="s2", status="running", started_at=950.0, attempt=1),
        trial(4, scenario="s2", arm="mcp", status="queued"),
    ]  # fmt: skip
    state.apply_snapshot(Snapshot(RUN, trials, start_id=100))
    return state


def test_snapshot_sets_statuses_progress_and_structure() -> None:
    state = loaded_state()
    assert state.statuses == {1: "passed", 2: "failed", 3: "running", 4: "queued"}
    assert state.progress() == (2, 4)
    assert state.structure_version == 1
    assert state.held_out == ["s2"] and state.variance_floor == 0.1
    assert state.take_changed() == {1, 2, 3, 4} and state.take_changed() == set()


def test_rate_counts_trials_finished_in_the_trailing_window() -> None:
    state = loaded_state()
    assert state.rate_per_min() == pytest.approx(2.0)


def test_batch_updates_changed_trials_and_scores() -> None:
    state = loaded_state()
    state.take_changed()
    version = state.version
    batch = TailBatch(
        events=[stored(Scored(name="fairness", value=0.7, details={}), trial_id=1, event_id=101)],
        trials=[trial(3, scenario="s2", status="finished", passed=True, attempt=1, finished_at=999.0)],
    )
    assert state.apply_batch(batch) == 1
    assert state.version > version and state.last_event_id == 101
    assert state.take_changed() == {1, 3}
    assert state.statuses[3] == "passed"
    assert state.scores[1]["fairness"].value == 0.7
    assert cell_of(state, 1).note == "0.70"


def test_cost_rows_use_rows_for_finished_and_events_for_running_trials() -> None:
    state = loaded_state()
    state.apply_batch(
        TailBatch(
            backfill=[stored(response(100, 40), trial_id=1, attempt=1, event_id=5)], backfill_done=False
        )
    )
    (row,) = state.cost_rows()
    assert row.tool_io_in is None, "tool_io is unknown until the backfill is complete"
    state.apply_batch(
        TailBatch(
            events=[stored(response(30, 10, cost=0.25, estimated=True), trial_id=3, attempt=1, event_id=101)],
            backfill=[stored(response(200, 60), trial_id=2, attempt=1, event_id=6)],
            backfill_done=True,
        )
    )
    (row,) = state.cost_rows()
    assert (row.trials, row.passed) == (3, 1)
    assert row.input_tokens == 100 + 200 + 30
    assert row.tool_io_in == 40 + 60 + 10
    assert row.reasoning_in == 330 - 110
    assert row.cost_usd == pytest.approx(0.5 + 1.5 + 0.25)
    assert row.cost_per_pass == pytest.approx(2.25)
    assert row.estimated is True


def test_a_model_with_an_unpriced_trial_shows_no_dollar_total_rather_than_a_partial_one() -> None:
    state = ConsoleState(clock=lambda: 1000.0)
    trials = [
        trial(1, status="finished", input_tokens=100, output_tokens=10, cost_usd=0.5, attempt=1),
        trial(2, status="running", attempt=1),
    ]
    state.apply_snapshot(Snapshot(RUN, trials, start_id=100))
    state.apply_batch(
        TailBatch(events=[stored(response(30, 10, cost=0.25), trial_id=2, attempt=1, event_id=101)])
    )
    assert state.cost_rows()[0].cost_usd == pytest.approx(0.75)
    unpriced = response(30, 10).model_copy(update={"cost_usd": None})
    state.apply_batch(TailBatch(events=[stored(unpriced, trial_id=2, attempt=1, event_id=102)]))
    assert state.cost_rows()[0].cost_usd is None


def test_the_floor_and_the_sd_convention_are_read_where_a_run_records_them() -> None:
    state = loaded_state()
    assert (state.variance_floor, state.variance_sd) == (0.1, "population")
    default = ConsoleState(clock=lambda: 1000.0)
    default.apply_snapshot(Snapshot(replace(RUN, config={"scoring": {}}), [trial(1)], start_id=100))
    assert (default.variance_floor, default.variance_sd) == (0.05, "sample")


def test_variance_by_layer_is_in_the_runs_convention_and_updates_live() -> None:
    state = loaded_state()
    state.apply_details(
        Details(
            scores=[],
            unreadable_scores=[],
            judgments=[
                JudgmentRecord(
                    1,
                    1,
                    1,
                    "j",
                    "p",
                    "",
                    "",
                    "",
                    None,
                    {"score": 0.5, "criteria": [{"name": "c", "score": 0.2}]},
                    "",
                    0.0,
                ),
                JudgmentRecord(
                    2,
                    1,
                    2,
                    "j",
                    "p",
                    "",
                    "",
                    "",
                    None,
                    {"score": 0.7, "criteria": [{"name": "c", "score": 0.6}]},
                    "",
                    0.0,
                ),
                JudgmentRecord(3, 2, 1, "j", "p", "", "", "", None, None, "unparseable", 0.0),
            ],
            anchors=[],
            commands=[],
        )
    )
    rows = {r.layer: r for r in state.variance_rows()}
    assert rows["criterion"].mean_sigma == pytest.approx(0.2)
    assert rows["trial"].mean_sigma == pytest.approx(0.1)
    assert rows["step"].mean_sigma is None
    assert rows["scenario"].mean_sigma == pytest.approx(0.1)
    state.apply_batch(TailBatch(events=[stored(judged(3, 0.6, {"c": 0.4}), trial_id=1, event_id=101)]))
    rows = {r.layer: r for r in state.variance_rows()}
    assert rows["trial"].mean_sigma == pytest.approx(math.sqrt(((0.5 - 0.6) ** 2 + (0.7 - 0.6) ** 2) / 3))
    assert rows["criterion"].groups == 1


def test_grounding_rows_sum_counts_per_arm() -> None:
    state = loaded_state()
    details = {"counts": {"grounded": 2, "unresolved": 1, "hallucinated": 1}, "citations": []}
    state.apply_details(
        Details(
            scores=[
                ScoreRecord(1, ScoreName.GROUNDING, 0.5, details),
                ScoreRecord(2, ScoreName.GROUNDING, None, {"counts": {}}),
            ],
            unreadable_scores=[],
            judgments=[],
            anchors=[],
            commands=[],
        )
    )
    rows = {r.arm: r for r in state.grounding_rows()}
    assert rows["baseline"].counts == GroundingCounts(grounded=2, unresolved=1, hallucinated=1)
    assert rows["mcp"].counts.rate is None and rows["mcp"].without_citations == 1


def test_a_malformed_score_row_is_kept_apart_and_named_not_shown_blank() -> None:
    state = loaded_state()
    state.apply_details(
        Details(
            scores=[
                ScoreRecord(1, ScoreName.GROUNDING, 0.5, {"counts": {"grounded": "two"}}),
                ScoreRecord(1, ScoreName.FAIRNESS, 0.7, {"layer": "fairness"}),
            ],
            unreadable_scores=[],
            judgments=[],
            anchors=[],
            commands=[],
        )
    )
    assert ScoreName.GROUNDING not in state.scores[1] and state.scores[1][ScoreName.FAIRNESS].value == 0.7
    assert "counts.grounded" in state.unreadable[1][ScoreName.GROUNDING]
    assert state.grounding_rows()[0].unreadable == 1
    # A valid row for the same score (re-scoring) replaces the unreadable one.
    fixed = Scored.of(ScoreName.GROUNDING, 1.0, GroundingDetails(counts=GroundingCounts(grounded=2)))
    state.apply_batch(TailBatch(events=[stored(fixed, trial_id=1, event_id=101)]))
    assert not state.unreadable[1] and state.grounding_rows()[0].counts.grounded == 2


def test_a_score_this_proctor_does_not_know_is_shown_unreadable_not_fatal() -> None:
    state = loaded_state()
    problem = "trial 1: unknown score name 'vibes' in the scores table"
    state.apply_details(
        Details(
            scores=[ScoreRecord(1, ScoreName.FAIRNESS, 0.7, {"layer": "fairness"})],
            unreadable_scores=[UnreadableScoreRow(1, "vibes", problem)],
            judgments=[],
            anchors=[],
            commands=[],
        )
    )
    assert state.scores[1][ScoreName.FAIRNESS].value == 0.7
    assert state.unreadable[1] == {"vibes": problem}


def test_scores_loaded_with_a_transcript_never_replace_newer_live_ones() -> None:
    state = loaded_state()
    live = Scored.of(ScoreName.FAIRNESS, 0.9, FairnessDetails(layer="fairness", value=0.9))
    state.apply_batch(TailBatch(events=[stored(live, trial_id=1, event_id=101)]))
    before = state.scores_version
    state.add_loaded_scores(
        [ScoreRecord(1, ScoreName.FAIRNESS, 0.1, {}), ScoreRecord(1, ScoreName.KEYWORDS, 1.0, {})], []
    )
    assert (
        state.scores[1][ScoreName.FAIRNESS].value == 0.9 and state.scores[1][ScoreName.KEYWORDS].value == 1.0
    )
    assert state.scores_version > before


def test_matrix_filters_by_status_arm_model_and_scenario() -> None:
    state = loaded_state()
    full = build_matrix(state, Filters(), fold=False)
    assert full.rows == [("s1", 0), ("s2", 0)] and full.columns == [
        ("baseline", "offline:a"),
        ("mcp", "offline:a"),
    ]
    assert full.cells[(1, 1)].trial_id == 4 and full.marked_scenarios == frozenset({"s2"})
    by_status = build_matrix(state, Filters(status="failed"), fold=False)
    assert by_status.rows == [("s1", 0)] and next(iter(by_status.cells.values())).trial_id == 2
    by_arm = build_matrix(state, Filters(arm="mcp"), fold=False)
    assert by_arm.columns == [("mcp", "offline:a")]
    assert build_matrix(state, Filters(scenario="S2"), fold=False).rows == [("s2", 0)]
    assert build_matrix(state, Filters(model="other"), fold=False).columns == []


def test_operator_command_outcomes_keep_the_latest_per_command() -> None:
    state = loaded_state()
    state.apply_batch(
        TailBatch(
            events=[
                stored(
                    OperatorCommand(command="verify_anchors", args={}, status="received"),
                    trial_id=None,
                    event_id=101,
                ),
                stored(
                    OperatorCommand(
                        command="verify_anchors", args={}, status="failed", message="ρ=0.2 < 0.85"
                    ),
                    trial_id=None,
                    event_id=102,
                ),
            ]
        )
    )
    outcome = state.commands["verify_anchors"]
    assert (outcome.status, outcome.message) == ("failed", "ρ=0.2 < 0.85")


def test_series_buckets_finished_trials_and_cost() -> None:
    state = loaded_state()
    series = {s.key: s for s in state.series()}
    assert sum(series["throughput"].values) == 2
    assert sum(series["cost"].values) == pytest.approx(2.0)
    assert len(series["events"].values) == 60


def test_a_new_attempt_clears_the_trials_scores_and_verdicts() -> None:
    state = loaded_state()
    state.apply_batch(
        TailBatch(
            events=[
                stored(Scored(name="fairness", value=0.7, details={}), trial_id=1, event_id=201),
                stored(judged(1, 0.8, {"c": 0.8}), trial_id=1, event_id=202),
            ]
        )
    )
    assert state.scores[1]["fairness"].value == 0.7 and state.judgments.verdicts(1)
    started = TrialStarted(scenario="s1", arm="a", model="m", epoch=0, seed=1, attempt=2)
    state.apply_batch(TailBatch(events=[stored(started, trial_id=1, attempt=2, event_id=203)]))
    assert 1 not in state.scores and state.judgments.verdicts(1) == []


def test_the_failures_filter_keeps_failed_and_errored_trials() -> None:
    failures = Filters(status="failures")
    assert [failures.keeps_status(s) for s in ("failed", "error", "passed", None)] == [
        True,
        True,
        False,
        False,
    ]
    assert Filters(status="passed").keeps_status("passed") and not Filters(status="passed").keeps_status(
        "failed"
    )
    assert Filters().keeps_status(None)


def test_epochs_fold_into_one_cell_that_says_k_of_n_and_the_mean() -> None:
    cell = fold_cell([(1, "passed", 0.8), (2, "failed", 0.4), (3, "passed", None)])
    assert (cell.trial_id, cell.status, cell.note, cell.folded) == (2, "failed", "2/3 0.60", True)
    assert fold_cell([(5, "passed", None), (6, "running", None)]).status == "running"
    assert fold_cell([(7, "error", None), (8, "failed", 0.1)]).trial_id == 7, "errors come first"
    state = loaded_state()
    folded = build_matrix(state, Filters(), fold=True)
    assert folded.rows == [("s1", -1), ("s2", -1)] and not folded.show_epoch
    assert all(len(ids) == 1 for ids in folded.members.values())


JUDGE_DOWN = (
    "judge call failed: anthropic: connection failed to http://127.0.0.1:9/v1 (gave up after 5 attempts)"
)
FINISHED_RUN = RunRecord("r1", "suite", {}, 0.0, 0.0, 1000.0, "finished")


def _judge_error(judgment_id: int, pass_no: int) -> JudgmentRecord:
    return JudgmentRecord(
        judgment_id, 1, pass_no, "anthropic:x", "p", "", "", "", None, None, JUDGE_DOWN, 0.0
    )


def test_a_trial_whose_every_judge_pass_failed_says_no_verdict_and_why_not_scoring() -> None:
    # The run database as it is read on opening: the trial row first, its scores afterwards.
    state = ConsoleState(clock=lambda: 1000.0)
    state.apply_snapshot(
        Snapshot(FINISHED_RUN, [trial(1, status="finished", attempt=1, finished_at=990.0)], start_id=10)
    )
    rule = "no judge verdict: every judge pass was an error, which is neither a pass nor a fail"
    passed = ScoreRecord(1, ScoreName.PASSED, None, dump_details(ScoreName.PASSED, PassedDetails(rule=rule)))
    state.apply_details(
        Details(
            scores=[passed],
            unreadable_scores=[],
            judgments=[_judge_error(1, 1), _judge_error(2, 2)],
            anchors=[],
            commands=[],
        )
    )
    assert state.statuses[1] == "not judged"
    assert state.verdict_line(1) == (
        "no verdict: every judge pass was an error, which is neither a pass nor a fail; "
        f"judge error on 2 pass(es): {JUDGE_DOWN}"
    )


def test_a_trial_whose_scoring_raised_or_that_a_finished_run_never_scored_has_no_verdict() -> None:
    state = ConsoleState(clock=lambda: 1000.0)
    running = RunRecord("r1", "suite", {}, 0.0, 0.0, None, "running")
    rows = [trial(i, status="finished", attempt=1, finished_at=990.0) for i in (1, 2)]
    state.apply_snapshot(Snapshot(running, rows, start_id=10))
    broken = ErrorEvent(where="scoring", error_type="KeyError", message="'claims'")
    state.apply_details(
        Details(
            scores=[], unreadable_scores=[], judgments=[], anchors=[], commands=[],
            errors=[stored(broken, trial_id=1, attempt=1, event_id=5)],
        )
    )  # fmt: skip
    assert state.statuses == {1: "not judged", 2: "scoring"}  # 2 may still be scored: the run runs
    assert state.verdict_line(1) == "no verdict: scoring failed: KeyError: 'claims'"
    assert state.verdict_line(2) is None
    state.apply_batch(TailBatch(run=FINISHED_RUN, trials=rows))
    assert state.statuses[2] == "not judged"
    assert state.verdict_line(2) == f"no verdict: {NOT_SCORED}"
    # A trial re-run after the run ended is being scored again, not left without a verdict.
    rerun = trial(2, status="finished", attempt=2, finished_at=1500.0)
    state.apply_batch(TailBatch(trials=[rerun]))
    assert state.statuses[2] == "scoring"


def test_a_failed_trial_says_which_rule_failed_it_with_its_numbers() -> None:
    state = loaded_state()
    rule = (
        "judged claims coverage 1.00 >= 0.75; failed on grounding: 7 of 27 citations grounded (26%) "
        "< scoring.pass_requires_grounding 80%"
    )
    details = dump_details(ScoreName.PASSED, PassedDetails(rule=rule, ungrounded=True))
    state.apply_batch(
        TailBatch(events=[stored(Scored(name="passed", value=0.0, details=details), trial_id=2)])
    )
    assert state.verdict_line(2) == (
        "failed on grounding: 7 of 27 citations grounded (26%) < scoring.pass_requires_grounding 80%"
    )
    assert state.verdict_line(3) is None  # running


def test_the_console_takes_the_sample_sd_by_default_as_the_report_does() -> None:
    state = ConsoleState(clock=lambda: 1000.0)
    state.apply_snapshot(Snapshot(replace(RUN, config={}), [trial(1, status="finished")], start_id=100))
    verdicts = [
        {"score": 0.70, "criteria": [{"name": "c", "score": 0.7}]},
        {"score": 0.74, "criteria": [{"name": "c", "score": 0.7}]},
    ]
    judgments = [
        JudgmentRecord(i, 1, i, "j", "p", "", "", "", None, v, "", 0.0) for i, v in enumerate(verdicts, 1)
    ]
    state.apply_details(
        Details(scores=[], unreadable_scores=[], judgments=judgments, anchors=[], commands=[])
    )
    rows = {r.layer: r for r in state.variance_rows()}
    assert rows["criterion"].mean_sigma == 0.0
    assert rows["trial"].mean_sigma == pytest.approx(0.04 / math.sqrt(2))
    assert rows["scenario"].mean_sigma == pytest.approx(0.04 / math.sqrt(2))
