"""The matrix's Δ against the baseline: paired by scenario, model and epoch, and kept current."""

from __future__ import annotations

import re

import pytest

from proctor.app.views.feed import Snapshot, TailBatch
from proctor.app.views.matrix_build import build_matrix
from proctor.app.views.state import ConsoleState, Filters
from proctor.store.events import Scored
from proctor.store.read.reader import RunRecord
from proctor.store.scores import AdoptionDetails, FairnessDetails, ScoreName
from proctor.widgets.trial_matrix import TrialMatrix, delta_text
from tests.app.events_factory import stored, trial
from tests.app.fixture_store import Fixture
from tests.app.helpers import console, screen_text

RUN = RunRecord("r1", "suite", {}, 0.0, 0.0, None, "running")


def fairness(trial_id: int, value: float) -> TailBatch:
    return TailBatch(
        events=[stored(Scored.of(ScoreName.FAIRNESS, value, FairnessDetails()), trial_id=trial_id)]
    )


def two_arms_two_epochs(base_arm: str = "baseline") -> ConsoleState:
    state = ConsoleState(clock=lambda: 0.0)
    rows = [
        trial(1, arm=base_arm, epoch=0, status="finished", passed=True),
        trial(2, arm=base_arm, epoch=1, status="finished", passed=False),
        trial(3, arm="mcp", epoch=0, status="finished", passed=True),
        trial(4, arm="mcp", epoch=1, status="running"),
    ]
    state.apply_snapshot(Snapshot(RUN, rows, start_id=0))
    for trial_id, value in ((1, 0.5), (2, 0.3), (3, 0.9)):
        state.apply_batch(fairness(trial_id, value))
    return state


def test_folded_and_unfolded_cells_carry_fairness_minus_the_baselines_paired_by_epoch() -> None:
    state = two_arms_two_epochs()
    folded = build_matrix(state, Filters(), fold=True)
    assert folded.baseline == "baseline" and folded.columns[0][0] == "baseline"
    base, mcp = folded.cells[(0, 0)], folded.cells[(0, 1)]
    assert base.delta is None, "the baseline column is the reference"
    # Epoch 1 of mcp has no score yet, so only epoch 0 is paired: 0.9 - 0.5, not 0.9 - mean(0.5, 0.3).
    assert mcp.delta == pytest.approx(0.4) and mcp.note == "1/2 0.90"
    unfolded = build_matrix(state, Filters(), fold=False)
    assert unfolded.cells[(0, 1)].delta == pytest.approx(0.4) and unfolded.cells[(1, 1)].delta is None
    state.apply_batch(fairness(4, 0.1))
    assert build_matrix(state, Filters(), fold=True).cells[(0, 1)].delta == pytest.approx((0.4 - 0.2) / 2)


def test_the_baseline_is_the_arm_scored_as_one_whatever_its_name_and_none_without_one() -> None:
    state = two_arms_two_epochs(base_arm="builtin")
    assert build_matrix(state, Filters(), fold=True).baseline is None, "no arm is called or scored baseline"
    adoption = Scored.of(ScoreName.ADOPTION, None, AdoptionDetails(na="baseline"))
    state.apply_batch(TailBatch(events=[stored(adoption, trial_id=1)]))
    model = build_matrix(state, Filters(), fold=False)
    assert model.baseline == "builtin" and model.cells[(0, 1)].delta == pytest.approx(0.4)
    only_mcp = build_matrix(state, Filters(arm="mcp"), fold=False)
    assert only_mcp.baseline is None, "a filter that hides the baseline hides the deltas"


def test_delta_text_is_signed_with_two_decimals() -> None:
    assert [delta_text(d) for d in (0.1, -0.25, 0.0, None)] == ["+0.10", "-0.25", "±0.00", ""]


def test_a_delta_that_rounds_to_nothing_is_never_negative_zero() -> None:
    assert [delta_text(d) for d in (-0.004, 0.004, -0.0)] == ["±0.00", "±0.00", "±0.00"]


async def test_the_dashboard_shows_the_delta_column_and_names_the_baseline_for_the_selected_cell(
    fx: Fixture,
) -> None:
    async with console(fx.db) as (app, pilot):
        text = screen_text(app)
        assert re.search(r"✓ passed  0\.70 +\+0\.10", text), (
            "mcp-good's s1-intro: 0.70 against the baseline's 0.60"
        )
        header = next(
            line for line in text.splitlines() if re.search("offline:default +offline:default", line)
        )
        assert "Δ" in header
        app.screen.query_one(TrialMatrix).move_to(0, 1)
        await pilot.pause()
        assert "Δ +0.10 vs baseline" in screen_text(app)
