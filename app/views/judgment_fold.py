"""Judge verdicts per trial and pass, and their spread (σ, in the run's convention) by layer.

Layers: *criterion* (one criterion of one trial across passes), *step* (when a verdict scores
steps), *trial* (the overall score of one trial across passes: the number llm_quality, fairness
and the ranking are made of) and *scenario* (the mean over a scenario's trials of that score,
per pass, across passes), each per judge. The cells are the console's; their
σ and each layer's summary are the report's functions (engine/stats/variance.py). Per-trial
spreads are cached and recomputed only for trials whose verdicts changed, so live judgments
cost little per flush.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from proctor.engine.stats import (
    DEFAULT_SD,
    CellSpread,
    SdConvention,
    cell_spread,
    layer_variance,
    means_by_pass,
    standard_deviation,
)
from proctor.store.events import Judged, TrialStarted
from proctor.store.read.reader import JudgmentRecord, StoredEvent
from proctor.widgets.variance_panel import VarianceRow


@dataclass(frozen=True)
class Verdict:
    trial_id: int
    pass_no: int
    judge: str
    verdict: dict[str, Any] | None
    error: str

    @property
    def score(self) -> float | None:
        return _number(self.verdict.get("score")) if self.verdict else None

    def part_scores(self, key: str) -> dict[str, float]:
        """Named numeric parts of the verdict: ``criteria`` by name, ``steps`` by step."""
        out: dict[str, float] = {}
        items = self.verdict.get(key) if self.verdict else None
        if not isinstance(items, list):
            return out
        for i, item in enumerate(items):
            if isinstance(item, dict):
                name = str(item.get("name", item.get("step", i)))
                value = _number(item.get("score"))
                if value is not None:
                    out[name] = value
        return out

    def rationales(self) -> list[tuple[str, float | None, str]]:
        items = self.verdict.get("criteria") if self.verdict else None
        if not isinstance(items, list):
            return []
        return [
            (str(c.get("name", "")), _number(c.get("score")), str(c.get("rationale", "")))
            for c in items
            if isinstance(c, dict)
        ]


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


@dataclass(frozen=True)
class _TrialSpread:
    """One trial's cells at the layers a verdict scores itself (per judge)."""

    criterion: list[CellSpread]
    step: list[CellSpread]
    trial: list[CellSpread]


def is_deterministic(judge: str) -> bool:
    """The offline judges: no model, no sampling, so their passes agree by construction."""
    return judge.startswith("offline:")


class JudgmentBook:
    """Every verdict, keyed by (trial, judge, pass); re-reads of the same pass replace it."""

    def __init__(self) -> None:
        self.by_trial: dict[int, dict[tuple[str, int], Verdict]] = {}
        self._spread: dict[int, _TrialSpread] = {}
        self._spread_sd: SdConvention = DEFAULT_SD
        self._dirty: set[int] = set()
        self.version = 0

    def add_records(self, records: Iterable[JudgmentRecord]) -> None:
        for r in records:
            self._put(Verdict(r.trial_id, r.pass_no, r.judge, r.verdict, r.error))

    def add_events(self, events: Iterable[StoredEvent]) -> bool:
        changed = False
        for stored in events:
            ev = stored.event
            if isinstance(ev, TrialStarted) and stored.trial_id in self.by_trial:
                del self.by_trial[stored.trial_id]  # a new attempt: earlier verdicts judged another answer
                self._dirty.add(stored.trial_id)
                self.version += 1
                changed = True
            if isinstance(ev, Judged) and stored.trial_id is not None:
                self._put(Verdict(stored.trial_id, ev.pass_no, ev.judge, ev.verdict, ev.error))
                changed = True
        return changed

    def _put(self, verdict: Verdict) -> None:
        self.by_trial.setdefault(verdict.trial_id, {})[(verdict.judge, verdict.pass_no)] = verdict
        self._dirty.add(verdict.trial_id)
        self.version += 1

    def verdicts(self, trial_id: int) -> list[Verdict]:
        return sorted(self.by_trial.get(trial_id, {}).values(), key=lambda v: (v.judge, v.pass_no))

    def judges(self) -> list[str]:
        return sorted({judge for verdicts in self.by_trial.values() for judge, _ in verdicts})

    def deterministic_judges(self) -> list[str]:
        """Judges whose passes agree by construction (no model, no sampling): the offline ones."""
        return [j for j in self.judges() if is_deterministic(j)]

    def max_passes(self) -> int:
        return max((len(v) for v in self.by_trial.values()), default=0)

    def _spread_of(self, trial_id: int, sd: SdConvention) -> _TrialSpread:
        if sd != self._spread_sd:  # another convention: every cached spread is in the old one
            self._spread.clear()
            self._spread_sd = sd
        if trial_id in self._dirty or trial_id not in self._spread:
            self._dirty.discard(trial_id)
            measured = [v for v in self.verdicts(trial_id) if not is_deterministic(v.judge)]
            self._spread[trial_id] = _compute_spread(measured, sd)
        return self._spread[trial_id]

    def criterion_sigmas(
        self, trial_id: int, sd: SdConvention = DEFAULT_SD
    ) -> dict[tuple[str, str], float | None]:
        """σ per (judge, criterion) of one trial, for the judge view."""
        return {
            (judge, name): standard_deviation(list(by_pass.values()), sd)
            for (judge, name), by_pass in _part_cells(self.verdicts(trial_id), "criteria").items()
        }

    def variance_rows(
        self, scenario_of: Mapping[int, str], sd: SdConvention = DEFAULT_SD
    ) -> list[VarianceRow]:
        spreads = [self._spread_of(trial_id, sd) for trial_id in self.by_trial]
        layers = (
            layer_variance("criterion", (c for s in spreads for c in s.criterion)),
            layer_variance("step", (c for s in spreads for c in s.step)),
            layer_variance("trial", (c for s in spreads for c in s.trial)),
            layer_variance("scenario", self._scenario_cells(scenario_of, sd)),
        )
        return [VarianceRow(v.layer, v.mean_sd, v.max_sd, v.measured) for v in layers]

    def _scenario_cells(self, scenario_of: Mapping[int, str], sd: SdConvention) -> list[CellSpread]:
        """Per scenario and judge, each pass's mean over the scenario's trials, across passes."""
        trials: dict[tuple[str | int, ...], dict[int, float]] = {}
        for trial_id, verdicts in self.by_trial.items():
            scenario = scenario_of.get(trial_id)
            if scenario is None:
                continue
            for (judge, pass_no), v in verdicts.items():
                score = v.score
                if score is not None and not is_deterministic(judge):
                    trials.setdefault((scenario, judge, trial_id), {})[pass_no] = score
        return [cell_spread(key, by_pass, sd) for key, by_pass in means_by_pass(trials.items(), 2).items()]


def _part_cells(verdicts: Sequence[Verdict], key: str) -> dict[tuple[str, str], dict[int, float]]:
    """Per (judge, part) — ``criteria`` by name, ``steps`` by step — the score of each pass."""
    cells: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
    for v in verdicts:
        for name, score in v.part_scores(key).items():
            cells[(v.judge, name)][v.pass_no] = score
    return cells


def _compute_spread(verdicts: Sequence[Verdict], sd: SdConvention) -> _TrialSpread:
    overall: dict[tuple[str, ...], dict[int, float]] = defaultdict(dict)
    for v in verdicts:
        score = v.score
        if score is not None:
            overall[(v.judge,)][v.pass_no] = score
    return _TrialSpread(
        criterion=[cell_spread(k, p, sd) for k, p in _part_cells(verdicts, "criteria").items()],
        step=[cell_spread(k, p, sd) for k, p in _part_cells(verdicts, "steps").items()],
        trial=[cell_spread(k, p, sd) for k, p in overall.items()],
    )


__all__ = ["JudgmentBook", "Verdict"]
