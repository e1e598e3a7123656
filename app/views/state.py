"""Console state: store rows and tailed events folded into plain data the screens read.

Nothing here touches Textual, so the folding is tested directly. The app applies batches as
they arrive and screens read the state when they flush (~10 times a second); ``version``
says whether anything changed, ``structure_version`` whether the set of trials changed, and
``take_changed`` which trials changed status since the last flush.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from proctor.app.views.cost_fold import UsageBook, cost_rows
from proctor.app.views.feed import Details, Snapshot, TailBatch
from proctor.app.views.judgment_fold import JudgmentBook
from proctor.app.views.score_views import arm_rows, grounding_rows, is_not_judged, verdict_line
from proctor.engine.drift.runs_diff import REPLAYED_STOP
from proctor.engine.reports.attribution import is_baseline
from proctor.engine.stats import DEFAULT_SD, SdConvention, sd_convention
from proctor.store.events import ErrorEvent, OperatorCommand, Scored, ServersStarting, TrialStarted
from proctor.store.read.reader import (
    AnchorRecord,
    RunRecord,
    ScoreRecord,
    StoredEvent,
    TrialRecord,
    UnreadableScoreRow,
)
from proctor.store.scores import ScoreName, UnreadableScore
from proctor.widgets.arms_panel import ArmRow
from proctor.widgets.cost_panel import CostRow
from proctor.widgets.grounding_panel import GroundingRow
from proctor.widgets.series_panel import Series
from proctor.widgets.variance_panel import VarianceRow

DEFAULT_FLOOR = 0.05
SPARK_BUCKETS = 40
RATE_WINDOW_S = 60.0


def display_status(
    trial: TrialRecord, scores: Mapping[ScoreName, ScoreRecord] | None = None, *, scoring_over: bool = False
) -> str:
    """queued, running, scoring (finished, not yet scored), passed, failed, not judged or error.

    "not judged": nothing gave a verdict: the trial's scenario defines no check (see
    Scenario.has_checks), or none that applies, or the trial has no answer, or every judge pass
    failed, or it was replayed (``proctor replay``: calls made again, no model, nothing to judge),
    or its scoring is over (``scoring_over``: it raised, or the run ended) without a ``passed``
    score. The line under the matrix and the trial header say which (``verdict_line``).
    """
    if trial.status == "finished" and trial.stop == REPLAYED_STOP:
        return "not judged"
    if trial.status == "finished":
        if trial.passed is None:
            passed = (scores or {}).get(ScoreName.PASSED)
            if passed is None:
                return "not judged" if scoring_over else "scoring"
            return "not judged" if passed.value is None or is_not_judged(passed) else "scoring"
        return "passed" if trial.passed else "failed"
    if trial.status in ("queued", "running", "error"):
        return trial.status
    return trial.status or "queued"


@dataclass(frozen=True)
class Filters:
    status: str | None = None
    arm: str | None = None
    model: str | None = None
    scenario: str = ""

    @property
    def active(self) -> bool:
        return bool(self.status or self.arm or self.model or self.scenario)

    def keeps_status(self, status: str | None) -> bool:
        """``failures`` keeps failed and errored trials; any other value keeps that status only."""
        if self.status is None:
            return True
        return status in FAILURES if self.status == "failures" else status == self.status

    def describe(self) -> str:
        parts = [
            f"{k}={v}" for k, v in (("status", self.status), ("arm", self.arm), ("model", self.model)) if v
        ]
        if self.scenario:
            parts.append(f"scenario~{self.scenario}")
        return ", ".join(parts) or "none"


FAILURES = frozenset({"failed", "error"})


@dataclass(frozen=True)
class OperatorCommandOutcome:
    command: str
    status: str
    message: str
    event_id: int


class ConsoleState:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.run: RunRecord | None = None
        self.trials: dict[int, TrialRecord] = {}
        self.statuses: dict[int, str] = {}
        self.scores: dict[int, dict[ScoreName, ScoreRecord]] = {}
        self.unreadable: dict[int, dict[str, str]] = {}
        self.judgments = JudgmentBook()
        self.usage = UsageBook()
        self.anchors: list[AnchorRecord] = []
        self.commands: dict[str, OperatorCommandOutcome] = {}
        self.loaded = False
        self.details_loaded = False
        self.start_id = 0
        self.last_event_id = 0
        self.version = 0
        self.structure_version = 0
        self._changed: set[int] = set()
        self._arrivals: deque[tuple[int, int]] = deque(maxlen=120)
        self._variance_cache: tuple[tuple[int, SdConvention], list[VarianceRow]] | None = None
        self.status_version = 0
        self._by_key: tuple[int, dict[tuple[str, str, str, int], int]] = (-1, {})
        self._counts_cache: tuple[object, Counter[str]] | None = None
        self._rate_cache: tuple[object, tuple[int, float]] | None = None
        self.servers: ServersStarting | None = None  # the engine's startup, until trials run
        self._grounding_cache: tuple[int, list[GroundingRow]] | None = None
        self._arms_cache: tuple[tuple[int, int], list[ArmRow]] | None = None
        self._baseline_cache: tuple[int, str | None, bool] | None = None
        self.scores_version = 0
        self.scoring_errors: dict[int, tuple[int, str]] = {}  # trial -> (attempt, message)

    # -- folding ------------------------------------------------------------------------------

    def apply_snapshot(self, snap: Snapshot) -> None:
        self.run = snap.run
        self.start_id = self.last_event_id = snap.start_id
        self._set_trials(snap.trials, replace=True)
        self.loaded = True

    def apply_details(self, details: Details) -> None:
        self._fold_scoring_errors(details.errors)
        self._put_scores(details.scores, details.unreadable_scores)
        self.judgments.add_records(details.judgments)
        self.anchors = details.anchors
        self._fold_operator_commands(details.commands)
        self.details_loaded = True
        self._restatus(self.trials)  # the snapshot's statuses were set before any score was known
        self.scores_version += 1
        self.version += 1

    def apply_batch(self, batch: TailBatch) -> int:
        """Fold one poll's worth; returns how many new events it carried."""
        if batch.run is not None:
            self.run = batch.run
        if batch.trials:
            self._set_trials(batch.trials, replace=batch.run is not None)
        elif batch.run is not None:
            self._restatus(self.trials)  # the run ended: trials it never scored have no verdict
        if batch.anchors is not None:
            self.anchors = batch.anchors
        self.usage.add(batch.backfill)
        self.usage.backfill_done = batch.backfill_done
        events = batch.events
        if events:
            self.last_event_id = events[-1].id
            self._fold_events(events)
            second = int(self.clock())
            if self._arrivals and self._arrivals[-1][0] == second:
                self._arrivals[-1] = (second, self._arrivals[-1][1] + len(events))
            else:
                self._arrivals.append((second, len(events)))
        if batch:
            self.version += 1
        return len(events)

    def _set_trials(self, rows: list[TrialRecord], *, replace: bool) -> None:
        if replace:
            fresh = {t.id: t for t in rows}
            if fresh.keys() != self.trials.keys():
                self.structure_version += 1
            self.trials = fresh
        else:
            for t in rows:
                if t.id not in self.trials:
                    self.structure_version += 1
                self.trials[t.id] = t
        self._restatus(t.id for t in rows)
        if replace:
            self.statuses = {tid: self.statuses[tid] for tid in self.trials}

    def _restatus(self, trial_ids: Iterable[int]) -> None:
        for trial_id in trial_ids:
            t = self.trials.get(trial_id)
            if t is None:
                continue
            status = display_status(t, self.scores.get(t.id), scoring_over=self._scoring_over(t))
            if self.statuses.get(t.id) != status:
                self._changed.add(t.id)
                self.status_version += 1
            self.statuses[t.id] = status

    def _scoring_over(self, t: TrialRecord) -> bool:
        """Whether a finished trial without a ``passed`` score will get none: its scoring raised,
        or the run ended after it finished (a trial re-run since is still being scored)."""
        error = self.scoring_errors.get(t.id)
        if error is not None and error[0] == t.attempt:
            return True
        run = self.run
        if run is None or run.status == "running" or run.finished_at is None:
            return False
        return t.finished_at is None or t.finished_at <= run.finished_at

    def _fold_events(self, events: list[StoredEvent]) -> None:
        self.usage.add(events)
        if self.judgments.add_events(events):
            self.version += 1
        for stored in events:
            ev = stored.event
            if isinstance(ev, ServersStarting):
                self.servers = ev
            if isinstance(ev, TrialStarted) and stored.trial_id is not None:
                self._forget_scores(stored.trial_id)
                self.scoring_errors.pop(stored.trial_id, None)
            if isinstance(ev, Scored) and stored.trial_id is not None:
                self._put_scores([ScoreRecord(stored.trial_id, ev.name, ev.value, ev.details)])
        if self._fold_scoring_errors(events):
            self.version += 1
        self._fold_operator_commands(events)

    def _fold_scoring_errors(self, events: Sequence[StoredEvent]) -> bool:
        """Errors raised while scoring a trial: it will get no verdict, and this says why."""
        found = [
            s
            for s in events
            if isinstance(s.event, ErrorEvent) and s.event.where == "scoring" and s.trial_id is not None
        ]
        for s in found:
            assert isinstance(s.event, ErrorEvent) and s.trial_id is not None
            self.scoring_errors[s.trial_id] = (s.attempt, f"{s.event.error_type}: {s.event.message}")
        self._restatus(s.trial_id for s in found if s.trial_id is not None)
        return bool(found)

    def add_loaded_scores(self, records: list[ScoreRecord], unreadable: list[UnreadableScoreRow]) -> None:
        """Scores read with one trial's transcript; they fill in only what the tail has not
        delivered, since a loaded row can be older than a live event folded meanwhile."""
        self._put_scores(
            [r for r in records if r.name not in self.scores.get(r.trial_id, {})],
            [u for u in unreadable if u.name not in self.scores.get(u.trial_id, {})],
        )
        self.version += 1

    def _forget_scores(self, trial_id: int) -> None:
        """A new attempt starts: the old scores judged another answer."""
        had = self.scores.pop(trial_id, None), self.unreadable.pop(trial_id, None)
        if any(had):
            self._changed.add(trial_id)
            self.scores_version += 1

    def _put_scores(self, records: list[ScoreRecord], unreadable: Sequence[UnreadableScoreRow] = ()) -> None:
        """The one way scores enter the state: validated against the score vocabulary, so a
        panel never reads a malformed row, and counted in ``scores_version`` for the caches."""
        for u in unreadable:
            self.unreadable.setdefault(u.trial_id, {})[u.name] = u.problem
            self._changed.add(u.trial_id)
        for r in records:
            try:
                _ = r.typed
            except UnreadableScore as err:
                self.scores.get(r.trial_id, {}).pop(r.name, None)
                self.unreadable.setdefault(r.trial_id, {})[r.name] = str(err)
            else:
                self.scores.setdefault(r.trial_id, {})[r.name] = r
                self.unreadable.get(r.trial_id, {}).pop(r.name, None)
            self._changed.add(r.trial_id)
        if records or unreadable:
            self.scores_version += 1
        # A trial's status rests on its ``passed`` score, whichever way the score arrived.
        self._restatus({r.trial_id for r in records if r.name == ScoreName.PASSED})

    def _fold_operator_commands(self, events: list[StoredEvent]) -> None:
        for stored in events:
            if isinstance(stored.event, OperatorCommand):
                ev = stored.event
                self.commands[ev.command] = OperatorCommandOutcome(
                    ev.command, ev.status, ev.message, stored.id
                )

    def take_changed(self) -> set[int]:
        changed, self._changed = self._changed, set()
        return changed

    # -- derived views --------------------------------------------------------------------------

    @property
    def held_out(self) -> list[str]:
        raw = self.run.config.get("held_out") if self.run is not None else None
        return [str(x) for x in raw] if isinstance(raw, list) else []

    @property
    def variance_floor(self) -> float:
        scoring = self.run.config.get("scoring") if self.run is not None else None
        raw = scoring.get("variance_floor") if isinstance(scoring, dict) else None
        return float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else DEFAULT_FLOOR

    @property
    def variance_sd(self) -> SdConvention:
        """The run's σ convention (``judge.sd``): the report's, so both show the same σ."""
        return sd_convention(self.run.config) if self.run is not None else DEFAULT_SD

    def counts(self) -> Counter[str]:
        key = (self.structure_version, self.status_version)
        if self._counts_cache is None or self._counts_cache[0] != key:
            self._counts_cache = (key, Counter(self.statuses.values()))
        return self._counts_cache[1]

    def progress(self) -> tuple[int, int]:
        c = self.counts()
        return len(self.statuses) - c["queued"] - c["running"], len(self.statuses)

    def _window_end(self) -> float:
        c = self.counts()
        finished = [t.finished_at for t in self.trials.values() if t.finished_at is not None]
        if c["running"] or (c["queued"] and finished) or not finished:
            return self.clock()
        return max(finished)

    def rate_per_min(self) -> float:
        """Trials finished per minute over the trailing minute (recomputed at most once a second)."""
        done, window = self.rate_basis()
        return done * 60.0 / window if window > 0 else 0.0

    def rate_basis(self) -> tuple[int, float]:
        """(trials finished in the trailing window, the window in seconds): what a rate rests on."""
        key = (self.structure_version, self.status_version, int(self.clock()))
        if self._rate_cache is None or self._rate_cache[0] != key:
            self._rate_cache = (key, self._rate_basis())
        return self._rate_cache[1]

    def _rate_basis(self) -> tuple[int, float]:
        end = self._window_end()
        starts = [t.started_at for t in self.trials.values() if t.started_at is not None]
        if not starts:
            return 0, 0.0
        window = min(RATE_WINDOW_S, max(1e-6, end - min(starts)))
        done = sum(
            1
            for t in self.trials.values()
            if t.finished_at is not None and end - window <= t.finished_at <= end
        )
        return done, window

    def series(self) -> list[Series]:
        end = self._window_end()
        starts = [t.started_at for t in self.trials.values() if t.started_at is not None]
        start = min(starts) if starts else end
        width = max(1e-6, (end - start) / SPARK_BUCKETS)
        done = [0.0] * SPARK_BUCKETS
        cost = [0.0] * SPARK_BUCKETS
        for t in self.trials.values():
            if t.finished_at is None or t.finished_at < start:
                continue
            i = min(SPARK_BUCKETS - 1, int((t.finished_at - start) / width))
            done[i] += 1
            cost[i] += t.cost_usd or 0.0
        now = int(self.clock())
        per_second = dict(self._arrivals)
        events = [float(per_second.get(s, 0)) for s in range(now - 59, now + 1)]
        span = f"over {end - start:.0f}s"
        return [
            Series("throughput", "trials done", done, f"{sum(done):.0f} {span}"),
            Series("cost", "cost", cost, f"${sum(cost):.4f}"),
            Series("events", "events/s", events, f"now {events[-1]:.0f}"),
        ]

    def cost_rows(self) -> list[CostRow]:
        return cost_rows(self.trials, self.statuses, self.usage)

    def variance_rows(self) -> list[VarianceRow]:
        version = (self.judgments.version, self.variance_sd)
        if self._variance_cache is None or self._variance_cache[0] != version:
            scenario_of = {tid: t.scenario for tid, t in self.trials.items()}
            self._variance_cache = (version, self.judgments.variance_rows(scenario_of, self.variance_sd))
        return self._variance_cache[1]

    def arm_rows(self) -> list[ArmRow]:
        key = (self.scores_version, self.status_version)
        if self._arms_cache is None or self._arms_cache[0] != key:
            self._arms_cache = (key, arm_rows(self.trials, self.scores, self.arms()))
        return self._arms_cache[1]

    def grounding_rows(self) -> list[GroundingRow]:
        if self._grounding_cache is None or self._grounding_cache[0] != self.scores_version:
            self._grounding_cache = (
                self.scores_version,
                grounding_rows(self.trials, self.scores, self.unreadable),
            )
        return self._grounding_cache[1]

    # -- the matrix -------------------------------------------------------------------------------

    def arms(self) -> list[str]:
        arms = list(dict.fromkeys(t.arm for t in self.trials.values()))
        return sorted(arms, key=lambda a: (a != "baseline", arms.index(a)))

    def models(self) -> list[str]:
        return list(dict.fromkeys(t.model for t in self.trials.values()))

    def baseline_arm(self) -> str | None:
        """The arm others are measured against: the one scored as a baseline (no MCP tools), else
        the arm named "baseline", as in the report's comparisons."""
        cached = self._baseline_cache
        if cached is not None and (cached[2] or cached[0] == self.scores_version):
            return cached[1]
        arms = self.arms()
        found: str | None = None
        seen: set[str] = set()
        for t in self.trials.values():
            scores = self.scores.get(t.id)
            if t.arm in seen or not scores or ScoreName.ADOPTION not in scores:
                continue
            seen.add(t.arm)
            if is_baseline(scores):
                found = t.arm
                break
            if len(seen) == len(arms):
                break
        if found is None and "baseline" in arms:
            found = "baseline"
        # One scored as a baseline stays so: arms do not change kind during a run.
        self._baseline_cache = (self.scores_version, found, found in seen)
        return found

    def verdict_line(self, trial_id: int) -> str | None:
        """Why the trial has the verdict its status shows, with the numbers (None while it runs)."""
        trial = self.trials.get(trial_id)
        status = self.statuses.get(trial_id)
        if trial is None or status is None:
            return None
        error = self.scoring_errors.get(trial_id)
        return verdict_line(
            trial,
            status,
            self.scores.get(trial_id, {}),
            judge_errors=[v.error for v in self.judgments.verdicts(trial_id) if v.error],
            scoring_error=error[1] if error is not None and error[0] == trial.attempt else None,
        )

    def find_trial(self, scenario: str, arm: str, model: str, epoch: int) -> TrialRecord | None:
        if self._by_key[0] != self.structure_version:
            self._by_key = (self.structure_version, {t.key: t.id for t in self.trials.values()})
        trial_id = self._by_key[1].get((scenario, arm, model, epoch))
        return None if trial_id is None else self.trials.get(trial_id)


__all__ = ["DEFAULT_FLOOR", "ConsoleState", "Filters", "OperatorCommandOutcome", "display_status"]
