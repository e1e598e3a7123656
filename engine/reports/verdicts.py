"""Each judgment's verdict validated once, and what the report reads of verdicts before anything
else: the judged claims coverage of each trial, which the arms' summaries need.

A report reads the verdicts in several sections (coverage, the judge panel, judge variance); they
share one ``Verdicts``, so each is validated once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from proctor.engine.judges.panel import latest_per_pass
from proctor.engine.judges.verdict_read import VerdictRead, read_verdict
from proctor.engine.stats import fmean
from proctor.store.read.reader import JudgmentRecord

CLAIM_VALUE = {"fulfilled": 1.0, "partially": 0.5, "not": 0.0}
MAX_TRIALS_NAMED = 10


class Verdicts:
    """Each stored verdict validated once: a report reads them in several sections, and the
    records of a judge's agreeing passes share one verdict (``queries.judgments``)."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[object, VerdictRead | None]] = {}  # by id(verdict), kept alive
        self._latest: tuple[Iterable[JudgmentRecord], list[JudgmentRecord]] | None = None

    def latest(self, judgments: Iterable[JudgmentRecord]) -> list[JudgmentRecord]:
        """``latest_per_pass(judgments)``, kept for the next section that asks for the same list."""
        if self._latest is None or self._latest[0] is not judgments:
            self._latest = (judgments, latest_per_pass(judgments))
        return self._latest[1]

    def of(self, j: JudgmentRecord) -> VerdictRead | None:
        """The verdict, or None for a judge error or a verdict this proctor cannot read."""
        stored = j.verdict
        if stored is None:
            return None
        seen = self._seen.get(id(stored))
        if seen is not None:
            return seen[1]
        verdict = read_verdict(stored)
        self._seen[id(stored)] = (stored, verdict)
        return verdict

    def by_judge_and_trial(
        self, judgments: Iterable[JudgmentRecord]
    ) -> dict[tuple[str, int], list[VerdictRead]]:
        """``panel.parsed_verdicts(judgments)``, validating each verdict once."""
        out: dict[tuple[str, int], list[VerdictRead]] = defaultdict(list)
        for j in self.latest(judgments):
            verdict = self.of(j)
            if verdict is not None:
                out[(j.judge, j.trial_id)].append(verdict)
        return dict(out)


def unreadable_notes(judgments: Iterable[JudgmentRecord], verdicts: Verdicts) -> list[str]:
    """Per judge, the verdicts stored but unreadable (not JSON, or not a verdict's shape): they
    count nowhere, so the report says how many and where, rather than a smaller count in silence."""
    trials: dict[str, list[int]] = defaultdict(list)
    for j in verdicts.latest(judgments):
        if j.verdict is not None and verdicts.of(j) is None:
            trials[j.judge].append(j.trial_id)
    notes = []
    for judge, ids in sorted(trials.items()):
        distinct = sorted(set(ids))
        shown = ",".join(map(str, distinct[:MAX_TRIALS_NAMED]))
        more = f" and {len(distinct) - MAX_TRIALS_NAMED} more" if len(distinct) > MAX_TRIALS_NAMED else ""
        notes.append(
            f"{len(ids)} stored verdict(s) of judge {judge} cannot be read (not JSON, or not a verdict's "
            f"shape), on trial(s) {shown}{more}: they count in no claims coverage, panel vote or judge "
            f"variance; proctor judge DB --judge {judge} --trials {shown} adds passes that do"
        )
    return notes


def judged_coverage(
    machine: Iterable[JudgmentRecord],
    verdicts: Verdicts | None = None,
    parsed: Mapping[tuple[str, int], Sequence[VerdictRead]] | None = None,
) -> dict[int, float]:
    """Per trial, the judged claims coverage ``claims_coverage`` prefers, from the machine judges'
    judgments: the mean over passes that judged claims (a trial with none is left out).
    ``parsed`` is ``verdicts.by_judge_and_trial(machine)`` when the caller has it already."""
    if parsed is None:
        parsed = (verdicts or Verdicts()).by_judge_and_trial(machine)
    # One pass over the (judge, trial) entries; a trial's passes are averaged with fsum, in any
    # order the same. Agreeing passes share their verdict (``Verdicts``): its claims read once.
    per_trial: dict[int, list[float]] = {}
    last: VerdictRead | None = None
    last_mean = 0.0
    for (_judge, trial_id), vs in parsed.items():
        means = per_trial.get(trial_id)
        if means is None:
            means = per_trial[trial_id] = []
        for v in vs:
            if v.claims:
                if v is not last:
                    last, last_mean = v, fmean([CLAIM_VALUE[c.verdict] for c in v.claims])
                means.append(last_mean)
    return {trial_id: fmean(means) for trial_id, means in per_trial.items() if means}


__all__ = ["CLAIM_VALUE", "Verdicts", "judged_coverage", "unreadable_notes"]
