"""Judge verdicts per trial and pass, and their spread (population σ) by layer.

Layers: *criterion* (one criterion of one trial across passes), *step* (when a verdict scores
steps), *trial* (the overall score of one trial across passes) and *scenario* (the mean over a
scenario's trials, per pass, across passes). Per-trial spreads are cached and recomputed only
for trials whose verdicts changed, so live judgments cost little per flush.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from proctor.store.events import Judged, TrialStarted
from proctor.store.read.reader import JudgmentRecord, StoredEvent
from proctor.widgets.variance_panel import VarianceRow

LAYERS: tuple[str, ...] = ("criterion", "step", "trial", "scenario")


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


def population_sigma(values: Sequence[float]) -> float | None:
    """Population standard deviation; None for fewer than two values."""
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


@dataclass
class _TrialSpread:
    criterion: list[float] = field(default_factory=list)
    step: list[float] = field(default_factory=list)
    trial: list[float] = field(default_factory=list)


def is_deterministic(judge: str) -> bool:
    """The offline judges: no model, no sampling, so their passes agree by construction."""
    return judge.startswith("offline:")


class JudgmentBook:
    """Every verdict, keyed by (trial, judge, pass); re-reads of the same pass replace it."""

    def __init__(self) -> None:
        self.by_trial: dict[int, dict[tuple[str, int], Verdict]] = {}
        self._spread: dict[int, _TrialSpread] = {}
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

    def _spread_of(self, trial_id: int) -> _TrialSpread:
        if trial_id in self._dirty or trial_id not in self._spread:
            self._dirty.discard(trial_id)
            measured = [v for v in self.verdicts(trial_id) if not is_deterministic(v.judge)]
            self._spread[trial_id] = _compute_spread(measured)
        return self._spread[trial_id]

    def criterion_sigmas(self, trial_id: int) -> dict[tuple[str, str], float | None]:
        """σ per (judge, criterion) of one trial, for the judge view."""
        values: dict[tuple[str, str], list[float]] = defaultdict(list)
        for v in self.verdicts(trial_id):
            for name, score in v.part_scores("criteria").items():
                values[(v.judge, name)].append(score)
        return {k: population_sigma(xs) for k, xs in values.items()}

    def variance_rows(self, scenario_of: Mapping[int, str]) -> list[VarianceRow]:
        per_layer: dict[str, list[float]] = {"criterion": [], "step": [], "trial": []}
        for trial_id in self.by_trial:
            spread = self._spread_of(trial_id)
            per_layer["criterion"].extend(spread.criterion)
            per_layer["step"].extend(spread.step)
            per_layer["trial"].extend(spread.trial)
        per_layer["scenario"] = self._scenario_sigmas(scenario_of)
        return [
            VarianceRow(
                layer,
                sum(xs) / len(xs) if xs else None,
                max(xs) if xs else None,
                len(xs),
            )
            for layer, xs in ((layer, per_layer[layer]) for layer in LAYERS)
        ]

    def _scenario_sigmas(self, scenario_of: Mapping[int, str]) -> list[float]:
        by_pass: dict[tuple[str, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
        for trial_id, verdicts in self.by_trial.items():
            scenario = scenario_of.get(trial_id)
            if scenario is None:
                continue
            for (judge, pass_no), v in verdicts.items():
                if is_deterministic(judge):
                    continue
                score = v.score
                if score is not None:
                    by_pass[(scenario, judge)][pass_no].append(score)
        out: list[float] = []
        for passes in by_pass.values():
            sigma = population_sigma([sum(xs) / len(xs) for xs in passes.values()])
            if sigma is not None:
                out.append(sigma)
        return out


def _compute_spread(verdicts: Sequence[Verdict]) -> _TrialSpread:
    spread = _TrialSpread()
    by_judge: dict[str, list[Verdict]] = defaultdict(list)
    for v in verdicts:
        if v.verdict is not None:
            by_judge[v.judge].append(v)
    for passes in by_judge.values():
        for key, target in (("criteria", spread.criterion), ("steps", spread.step)):
            values: dict[str, list[float]] = defaultdict(list)
            for v in passes:
                for name, score in v.part_scores(key).items():
                    values[name].append(score)
            target.extend(s for s in map(population_sigma, values.values()) if s is not None)
        sigma = population_sigma([s for s in (v.score for v in passes) if s is not None])
        if sigma is not None:
            spread.trial.append(sigma)
    return spread


__all__ = ["LAYERS", "JudgmentBook", "Verdict", "population_sigma"]
