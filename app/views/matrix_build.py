"""The dashboard matrix from the console state: one row per scenario and epoch, or folded.

Folded (the default when a run has several epochs), a row is a scenario and a cell says what
it means over the epochs: how many passed of how many, and the mean fairness, under the
status that most needs attention (an error before a failure before work in progress).

When the run has a baseline arm, every other cell also carries Δ: its fairness minus the
baseline's for the same scenario and model, paired by epoch (the epochs both sides have scored),
so a row reads as promptfoo's grid does against its baseline column.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from proctor.store.scores import ScoreName
from proctor.widgets.trial_matrix import MatrixCell, MatrixModel

if TYPE_CHECKING:
    from proctor.app.views.state import ConsoleState, Filters

# Most urgent first: the status a folded cell shows, and the epoch its Enter opens.
URGENCY = ("error", "failed", "running", "scoring", "queued", "not judged", "passed")


def fairness_of(state: ConsoleState, trial_id: int) -> float | None:
    record = state.scores.get(trial_id, {}).get(ScoreName.FAIRNESS)
    return None if record is None else record.value


def cell_of(state: ConsoleState, trial_id: int) -> MatrixCell:
    fairness = fairness_of(state, trial_id)
    return MatrixCell(
        trial_id, state.statuses.get(trial_id, "queued"), "" if fairness is None else f"{fairness:.2f}"
    )


def fold_cell(members: Sequence[tuple[int, str, float | None]]) -> MatrixCell:
    """One cell for a scenario's epochs, from (trial id, status, fairness) per epoch."""
    status = min((s for _, s, _ in members), key=lambda s: URGENCY.index(s) if s in URGENCY else 0)
    shown = next(t for t, s, _ in members if s == status)
    passed = sum(s == "passed" for _, s, _ in members)
    scores = [f for _, _, f in members if f is not None]
    mean = f" {statistics.fmean(scores):.2f}" if scores else ""
    return MatrixCell(shown, status, f"{passed}/{len(members)}{mean}", folded=True)


def folded_cell_of(state: ConsoleState, trial_ids: Sequence[int]) -> MatrixCell:
    return fold_cell([(t, state.statuses.get(t, "queued"), fairness_of(state, t)) for t in trial_ids])


def paired_delta(state: ConsoleState, ids: Sequence[int], base_ids: Sequence[int]) -> float | None:
    """Mean over shared epochs of fairness(arm) - fairness(baseline); None without a scored pair."""
    base = {state.trials[t].epoch: f for t in base_ids if (f := fairness_of(state, t)) is not None}
    diffs = [
        f - base[epoch]
        for t in ids
        if (f := fairness_of(state, t)) is not None and (epoch := state.trials[t].epoch) in base
    ]
    return statistics.fmean(diffs) if diffs else None


def cell_at(state: ConsoleState, model: MatrixModel, pos: tuple[int, int], *, fold: bool) -> MatrixCell:
    """The cell at ``pos`` from the state as it is now, Δ against the baseline included."""
    ids = model.members[pos]
    cell = folded_cell_of(state, ids) if fold else cell_of(state, ids[0])
    row, col = pos
    arm, llm = model.columns[col]
    if model.baseline is None or arm == model.baseline or (model.baseline, llm) not in model.columns:
        return cell
    base_ids = model.members.get((row, model.columns.index((model.baseline, llm))), ())
    return replace(cell, delta=paired_delta(state, ids, base_ids))


def build_matrix(state: ConsoleState, filters: Filters, *, fold: bool) -> MatrixModel:
    columns = [
        (a, m)
        for a in state.arms()
        for m in state.models()
        if (filters.arm is None or a == filters.arm) and (filters.model is None or m == filters.model)
    ]
    col_index = {c: i for i, c in enumerate(columns)}
    rows: dict[tuple[str, int], dict[int, list[int]]] = {}
    needle = filters.scenario.lower()
    for t in state.trials.values():
        col = col_index.get((t.arm, t.model))
        if col is None or (needle and needle not in t.scenario.lower()):
            continue
        if not filters.keeps_status(state.statuses.get(t.id)):
            continue
        rows.setdefault((t.scenario, -1 if fold else t.epoch), {}).setdefault(col, []).append(t.id)
    ordered = sorted(rows)
    model = MatrixModel(
        rows=ordered,
        columns=columns,
        marked_scenarios=frozenset(state.held_out),
        show_epoch=not fold and len({e for _, e in ordered}) > 1,
        folded=fold,
    )
    baseline = state.baseline_arm()
    if baseline is not None and any(arm == baseline for arm, _ in columns):
        model.baseline = baseline
    for r, key in enumerate(ordered):
        for c, ids in rows[key].items():
            ids.sort(key=lambda i: state.trials[i].epoch)
            model.members[(r, c)] = tuple(ids)
    for pos in model.members:
        model.cells[pos] = cell_at(state, model, pos, fold=fold)
    return model


__all__ = ["URGENCY", "build_matrix", "cell_at", "cell_of", "fold_cell", "folded_cell_of", "paired_delta"]
