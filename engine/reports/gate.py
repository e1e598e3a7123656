"""The CI gate: does each MCP arm beat the baseline's fairness by at least a margin?

Trials are paired on (scenario, model, epoch): an arm's trial counts only when the baseline's
trial of the same scenario, model and epoch was scored too, so both means cover the same tasks
and seeds. Per arm, ``delta`` is the mean of the paired differences (arm − baseline), which
equals the difference of the two paired means. An arm passes when ``delta >= min_delta``
(so ``--min-delta 0`` lets a tie pass; give a small positive margin to demand an improvement,
a negative one to allow a bounded regression). An arm with no pair fails: a gate that cannot
measure must not pass. So does an arm with a pair in which either trial has no verdict from a
check (claims, key points, a rubric or the gold tool calls): its fairness there rests on a
judge's opinion of the prose alone. A trial whose arm cannot make its scenario's gold calls (the
only check there) has no fairness and pairs with nothing; when the baseline has no other trial,
the gate cannot be evaluated and says why. A 95 % paired-bootstrap interval is shown beside each
delta, for reading the result; it does not change the decision.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from proctor.engine.reports.error_causes import ErrorCause, group_errors, run_stop_message
from proctor.engine.stats.paired import paired_bootstrap_ci
from proctor.store.display_text import one_line
from proctor.store.read.reader import ScoreRecord, StoreReader
from proctor.store.scores import PassedDetails, ScoreName, UnreadableScore, parse_details

TOLERANCE = 1e-9
NO_VERDICT_PREFIX = "no verdict from a check: "
TOOLS_NOT_OFFERED_CAUSE = (
    "the arm does not offer the tools of the scenario's gold calls, its only check, so it has no "
    "verdict and no fairness there"
)


@dataclass(frozen=True)
class FairnessSample:
    scenario: str
    arm: str
    model: str
    epoch: int
    fairness: float
    unchecked: str | None = None
    """Why the trial has no verdict from a check (its ``passed`` rule), or None when it has one."""


@dataclass(frozen=True)
class ArmResult:
    arm: str
    pairs: int
    baseline_mean: float | None
    arm_mean: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    passed: bool
    reason: str


@dataclass(frozen=True)
class FairnessGateResult:
    baseline: str
    min_delta: float
    arms: tuple[ArmResult, ...]

    @property
    def passed(self) -> bool:
        return bool(self.arms) and all(a.passed for a in self.arms)


class GateInputError(ValueError):
    """The gate cannot be evaluated (no scored trials, unknown arm); the CLI exits 2."""


def decide(
    samples: Iterable[FairnessSample],
    *,
    baseline: str,
    min_delta: float,
    arms: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    errored: Mapping[str, int] | None = None,
    causes: Sequence[ErrorCause] = (),
    unjudged: Mapping[str, Sequence[str]] | None = None,
) -> FairnessGateResult:
    """The gate's verdict per MCP arm (every non-baseline arm, or only ``arms``).

    ``errored`` counts trials that ended in error per arm: they have no fairness, so a mean
    without them would flatter the arm; an arm with any, or a baseline with any, fails.
    ``causes`` says why they errored (``error_causes``), in the verdict and in a refusal.
    ``unjudged`` lists, per arm, why finished trials got no verdict at all (every judge pass
    failed: ``unjudged_trials``); they have no fairness either, so such an arm fails too.
    """
    chosen = [s for s in samples if not models or s.model in models]
    why = _why(causes) + _why_unjudged(unjudged or {})
    if not chosen:
        which = f" for model(s) {', '.join(models)}" if models else ""
        raise GateInputError(f"no scored trials{which}: the run has no 'fairness' scores to compare{why}")
    present = sorted({s.arm for s in chosen})
    if baseline not in present:
        raise GateInputError(
            f"baseline arm {baseline!r} has no scored trials; arms with scores: {', '.join(present)}{why}"
        )
    unknown = [a for a in arms or () if a not in present]
    if unknown:
        raise GateInputError(
            f"arm(s) {', '.join(unknown)} have no scored trials; arms with scores: {', '.join(present)}{why}"
        )
    targets = [a for a in (arms or present) if a != baseline]
    if not targets:
        raise GateInputError(f"only the baseline arm {baseline!r} has scored trials; nothing to compare{why}")
    base = {(s.scenario, s.model, s.epoch): s for s in chosen if s.arm == baseline}
    results = []
    for arm in targets:
        own = {(s.scenario, s.model, s.epoch): s for s in chosen if s.arm == arm}
        paired = [(base[k], own[k]) for k in sorted(own) if k in base]
        result = _arm_result(arm, [(b.fairness, a.fairness) for b, a in paired], min_delta)
        unchecked = _unchecked(paired)
        if unchecked:
            result = replace(result, passed=False, reason=f"{unchecked}; {result.reason}")
        lost = [(a, n) for a in (arm, baseline) if (n := (errored or {}).get(a, 0))]
        if lost:
            why = "; ".join(f"{n} {a} trial(s) errored{_why_arm(causes, a)}" for a, n in lost)
            result = replace(
                result, passed=False, reason=f"{why} (errored trials have no fairness); {result.reason}"
            )
        missing = [(a, reasons) for a in (arm, baseline) if (reasons := (unjudged or {}).get(a))]
        if missing:
            said = "; ".join(
                f"{len(r)} {a} trial(s) not judged ({'; '.join(dict.fromkeys(r))})" for a, r in missing
            )
            result = replace(result, passed=False, reason=f"{said} (no fairness); {result.reason}")
        results.append(result)
    return FairnessGateResult(baseline=baseline, min_delta=min_delta, arms=tuple(results))


def _why(causes: Sequence[ErrorCause]) -> str:
    """``; trials ended in error: 4 trials: server 'fs' did not start: …`` ("" without errors)."""
    if not causes:
        return ""
    return "; trials without a score: " + "; ".join(f"{c.line()} (arms {', '.join(c.arms)})" for c in causes)


def _why_unjudged(unjudged: Mapping[str, Sequence[str]]) -> str:
    """``; trials not judged: 4 mcp trial(s) (judge failed on 2 of 2 passes: …)`` ("" without)."""
    if not unjudged:
        return ""
    return "; trials not judged: " + "; ".join(
        f"{len(r)} {arm} trial(s) ({'; '.join(dict.fromkeys(r))})" for arm, r in sorted(unjudged.items())
    )


def _why_arm(causes: Sequence[ErrorCause], arm: str) -> str:
    """Why ``arm``'s trials errored (a trial without the gold calls' tools did not error)."""
    mine = [c for c in causes if arm in c.arms and c.cause != TOOLS_NOT_OFFERED_CAUSE]
    return f" ({'; '.join(c.cause for c in mine)})" if mine else ""


def _unchecked(paired: Sequence[tuple[FairnessSample, FairnessSample]]) -> str:
    """Why pairs have no verdict from a check, grouped by side and cause ("" when all have)."""
    causes: dict[tuple[str, str], int] = {}
    for base, arm in paired:
        for sample in (arm, base):
            if sample.unchecked is not None:
                key = (sample.arm, sample.unchecked.removeprefix(NO_VERDICT_PREFIX))
                causes[key] = causes.get(key, 0) + 1
    if not causes:
        return ""
    lacking = sum(1 for b, a in paired if b.unchecked is not None or a.unchecked is not None)
    why = "; ".join(f"{n} {arm} trial(s): {cause}" for (arm, cause), n in causes.items())
    return f"{lacking} of {len(paired)} pair(s) have no verdict from a check ({why})"


def _arm_result(arm: str, pairs: list[tuple[float, float]], min_delta: float) -> ArmResult:
    if not pairs:
        return ArmResult(arm, 0, None, None, None, None, None, False, "no trial paired with the baseline")
    n = len(pairs)
    base_mean = sum(b for b, _ in pairs) / n
    arm_mean = sum(a for _, a in pairs) / n
    delta = sum(a - b for b, a in pairs) / n
    ci = paired_bootstrap_ci(pairs, seed=0)
    passed = delta >= min_delta - TOLERANCE
    reason = f"delta {delta:+.3f} {'>=' if passed else '<'} {min_delta:+.3f}"
    return ArmResult(arm, n, base_mean, arm_mean, delta, ci.low, ci.high, passed, reason)


def errored_trials(db: Path, models: Sequence[str] | None = None) -> dict[str, int]:
    """Trials that ended in error, per arm (only ``models``' when given)."""
    with StoreReader(db) as reader:
        trials = reader.trials()
    out: dict[str, int] = {}
    for t in trials:
        if t.status == "error" and (not models or t.model in models):
            out[t.arm] = out.get(t.arm, 0) + 1
    return out


def error_causes(db: Path, models: Sequence[str] | None = None) -> list[ErrorCause]:
    """Why trials ended in error (only ``models``' when given), grouped by cause."""
    with StoreReader(db) as reader:
        trials = [t for t in reader.trials() if not models or t.model in models]
        stopped = run_stop_message(reader)
        not_offered = {s.trial_id for s in reader.scores() if s.name == ScoreName.PASSED and _not_offered(s)}
    causes = group_errors((t.arm, t.error) for t in trials if t.status == "error")
    chosen = {t.id: t.arm for t in trials}
    unmakeable = sorted(arm for trial_id, arm in chosen.items() if trial_id in not_offered)
    if unmakeable:
        causes.append(
            ErrorCause(
                TOOLS_NOT_OFFERED_CAUSE,
                len(unmakeable),
                tuple(sorted(set(unmakeable))),
                TOOLS_NOT_OFFERED_CAUSE,
            )
        )
    never = [t.arm for t in trials if t.status in ("queued", "running")]
    if stopped is not None and never:
        message = f"the run stopped before they ran: {stopped or 'no message recorded'}"
        causes.append(ErrorCause(message, len(never), tuple(sorted(set(never))), stopped))
    return causes


def unjudged_trials(db: Path, models: Sequence[str] | None = None) -> dict[str, list[str]]:
    """Per arm, why its finished trials have no verdict at all: every judge pass failed, or the
    answer was truncated or refused (store/outcomes.py)."""
    with StoreReader(db) as reader:
        trials = {t.id: t for t in reader.trials() if not models or t.model in models}
        rows = [s for s in reader.scores() if s.name == ScoreName.PASSED and s.value is None]
    out: dict[str, list[str]] = {}
    for s in rows:
        t = trials.get(s.trial_id)
        if t is None:
            continue
        try:
            details = parse_details(ScoreName.PASSED, s.details, PassedDetails)
        except UnreadableScore:
            continue
        if details.judge_failed or details.outcome:
            out.setdefault(t.arm, []).append(
                details.rule.removeprefix("no judge verdict: ").removeprefix("not judged: ")
            )
    return out


def load_fairness(db: Path) -> list[FairnessSample]:
    """Every trial's ``fairness`` score with its trial's scenario, arm, model and epoch, and why
    its ``passed`` has no verdict from a check when it has none."""
    with StoreReader(db) as reader:
        trials = {t.id: t for t in reader.trials()}
        rows = reader.scores()
    scores = [s for s in rows if s.name == ScoreName.FAIRNESS and s.value is not None]
    unchecked = {s.trial_id: _no_verdict(s) for s in rows if s.name == ScoreName.PASSED}
    out = []
    for s in scores:
        t = trials.get(s.trial_id)
        if t is not None and s.value is not None:
            out.append(
                FairnessSample(t.scenario, t.arm, t.model, t.epoch, float(s.value), unchecked.get(s.trial_id))
            )
    return out


def _not_offered(passed: ScoreRecord) -> bool:
    try:
        return parse_details(ScoreName.PASSED, passed.details, PassedDetails).tools_not_offered
    except UnreadableScore:
        return False


def _no_verdict(passed: ScoreRecord) -> str | None:
    """The rule of a ``passed`` score that has no value (no check gave a verdict), else None."""
    if passed.value is not None:
        return None
    try:
        rule = parse_details(ScoreName.PASSED, passed.details, PassedDetails).rule
    except UnreadableScore:
        rule = ""
    return rule or "no verdict"


def _num(v: float | None, fmt: str = "{:.3f}") -> str:
    return "-" if v is None else fmt.format(v)


def format_table(result: FairnessGateResult) -> str:
    """The verdict as a plain-text table (one line per arm), for a CI log."""
    header = ("arm", "pairs", "baseline", "arm mean", "delta", "95% CI", "verdict")
    rows = [
        (
            one_line(a.arm),
            str(a.pairs),
            _num(a.baseline_mean),
            _num(a.arm_mean),
            _num(a.delta, "{:+.3f}"),
            "-" if a.ci_low is None or a.ci_high is None else f"[{a.ci_low:+.3f}, {a.ci_high:+.3f}]",
            ("pass" if a.passed else "FAIL") + f" ({a.reason})",
        )
        for a in result.arms
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [f"fairness gate: baseline {result.baseline!r}, min delta {result.min_delta:+.3f}"]
    for r in [header, *rows]:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip())
    lines.append("gate: " + ("passed" if result.passed else "FAILED"))
    return "\n".join(lines)


__all__ = [
    "ArmResult",
    "FairnessGateResult",
    "FairnessSample",
    "GateInputError",
    "decide",
    "error_causes",
    "errored_trials",
    "format_table",
    "load_fairness",
    "unjudged_trials",
]
