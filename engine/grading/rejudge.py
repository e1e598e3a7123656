"""Re-judging: more judge passes over finished trials, without running any agent again.

The trial's events are read back from the store and scored by the same functions the live run
uses (engine/grading/evaluation.py), so a re-judged score means what a live one means. New passes are
numbered after the highest pass that judge already has on that trial; llm_quality, fairness
and passed are then re-emitted from every pass of the judges in use, old and new, so variance
figures and pass/fail follow the added evidence.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from proctor.engine.drift.runs_diff import REPLAY_KEY
from proctor.engine.grading.evaluation import (
    TrialInput,
    deterministic_scores,
    digest_of,
    is_judged,
    judged_event,
    layer_scores,
)
from proctor.engine.grading.score_trial import tool_schemas
from proctor.engine.judges.base import Judge, JudgeOutcome, JudgeSubject, Verdict, can_judge, judge_answer
from proctor.engine.judges.panel import latest_per_pass
from proctor.engine.judges.registry import close_judges, make_suite_judges
from proctor.engine.suites import load_suite
from proctor.scenarios.loader import LoadedSuite, SuiteError
from proctor.scenarios.schema import ArmSpec
from proctor.scenarios.workspace import Workspace
from proctor.store.events import Event, ListedTool, Scored, ToolCall, ToolResult, ToolsListed
from proctor.store.read.reader import JudgmentRecord, ScoreRecord, StoreReader, TrialRecord
from proctor.store.records import JudgmentMeta
from proctor.store.scores import DETERMINISTIC, FailureModeDetails, PassedDetails, ScoreName
from proctor.store.tool_origin import is_builtin
from proctor.store.write.writer import StoreWriter

DEFAULT_CONCURRENCY = 8


class RejudgeError(Exception):
    """Re-judging cannot start (no run in the database, its suite cannot be loaded, ...)."""


@dataclass(frozen=True)
class RejudgeResult:
    """What one trial got: the new pass numbers per judge, and its scores afterwards."""

    trial_id: int
    new_passes: dict[str, tuple[int, ...]]
    errors: int
    llm_quality: float | None
    passed: bool | None
    skipped: str = ""
    no_answer: bool = False
    """The trial has no final answer: not judged, neither passed nor failed."""


@dataclass(frozen=True)
class RejudgeTarget:
    """The store, the run and the suite that re-judged events go to and are scored against."""

    db: Path
    writer: StoreWriter
    run_id: str
    loaded: LoadedSuite
    workspace: Workspace


def next_pass_numbers(
    judgments: Sequence[JudgmentRecord], judge_id: str, count: int, *, top_up: bool = False
) -> list[int]:
    """``count`` pass numbers after the highest this judge already has on the trial.

    With ``top_up`` (finishing an interrupted scoring) only the passes up to ``count`` in all.
    """
    top = max((j.pass_no for j in judgments if j.judge == judge_id), default=0)
    return list(range(top + 1, (count if top_up else top + count) + 1))


def stored_verdicts(judgments: Sequence[JudgmentRecord], judge_id: str) -> list[Verdict]:
    """The judge's earlier verdicts on the trial (judge errors and unreadable rows left out)."""
    out: list[Verdict] = []
    for j in latest_per_pass(judgments):
        if j.judge != judge_id or j.verdict is None:
            continue
        try:
            out.append(Verdict.model_validate(j.verdict))
        except ValidationError:
            continue
    return out


def stored_errors(judgments: Sequence[JudgmentRecord], judge_id: str) -> list[str]:
    """The judge's earlier passes on the trial that gave no verdict, by their errors."""
    return [j.error for j in latest_per_pass(judgments) if j.judge == judge_id and j.verdict is None]


def _stored_deterministic(scores: Sequence[ScoreRecord]) -> dict[ScoreName, Scored]:
    return {
        s.name: Scored(name=s.name, value=s.value, details=s.details)
        for s in scores
        if s.name in DETERMINISTIC
    }


async def rejudge_trials(
    target: RejudgeTarget,
    judges: Sequence[Judge],
    *,
    passes: int,
    trial_ids: Sequence[int] | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    top_up: bool = False,
) -> list[RejudgeResult]:
    """Add ``passes`` passes of every judge to each finished trial (all finished trials by default).

    With ``top_up`` each judge is brought to ``passes`` passes in all (scoring what an
    interruption left unscored) instead of getting ``passes`` more.
    """
    if passes < 1:
        raise RejudgeError(f"--passes must be at least 1, got {passes}")
    with StoreReader(target.db) as reader:
        trials = {t.id: t for t in reader.trials()}
    wanted = list(trial_ids) if trial_ids is not None else sorted(trials)
    unknown = [i for i in wanted if i not in trials]
    if unknown:
        raise RejudgeError(f"no trial with id {', '.join(map(str, unknown))} in {target.db}")
    limit = asyncio.Semaphore(max(1, concurrency))
    results = [await _rejudge_one(target, trials[i], judges, passes, limit, top_up) for i in wanted]
    await target.writer.flush()
    return results


def _arm_from_trace(name: str, events: Sequence[Event]) -> ArmSpec:
    """An arm the suite does not define (an imported trajectory's): the MCP servers its calls used
    or its tool list offered (built-in calls have none). One without is a baseline."""
    tools: list[ToolCall | ToolResult | ListedTool] = [
        e for e in events if isinstance(e, ToolCall | ToolResult)
    ]
    tools += [t for e in events if isinstance(e, ToolsListed) for t in e.tools]
    servers = sorted({t.server for t in tools if t.server and not is_builtin(t)})
    if not servers:
        return ArmSpec(baseline=True, description=f"{name}: not in the suite; no MCP tool recorded")
    return ArmSpec(
        servers=servers, description=f"{name}: not in the suite; MCP servers seen in its calls and tools"
    )


async def _rejudge_one(
    target: RejudgeTarget,
    trial: TrialRecord,
    judges: Sequence[Judge],
    passes: int,
    limit: asyncio.Semaphore,
    top_up: bool,
) -> RejudgeResult:
    if trial.status not in ("finished", "error"):
        return RejudgeResult(trial.id, {}, 0, None, None, skipped=f"trial is {trial.status}, not finished")
    try:
        scenario = target.loaded.scenario(trial.scenario)
    except KeyError as exc:
        return RejudgeResult(
            trial.id, {}, 0, None, None, skipped=f"{exc.args[0]!r} is no longer in the suite"
        )
    with StoreReader(target.db) as reader:
        events: list[Event] = [e.event for e in reader.trial_events(trial.id) if not e.abandoned]
        judgments = reader.judgments(trial.id)
        scores = reader.scores(trial.id)
    arm = target.loaded.suite.arms.get(trial.arm) or _arm_from_trace(trial.arm, events)

    def emit(event: Event, meta: JudgmentMeta | None = None) -> None:
        target.writer.emit(target.run_id, event, trial_id=trial.id, attempt=trial.attempt, judgment=meta)

    item = TrialInput(
        scenario=scenario,
        arm_name=trial.arm,
        arm=arm,
        model=trial.model,
        events=events,
        repo=target.workspace.repo_for(scenario),
        scoring=target.loaded.suite.scoring,
        tool_schemas=tool_schemas(events),
        judge_sd=target.loaded.suite.judge.sd,
    )
    digest = digest_of(events)
    det = _stored_deterministic(scores)
    if ScoreName.KEYWORDS not in det:
        det = deterministic_scores(item, digest)
        for s in det.values():
            emit(s)
    subject = JudgeSubject(scenario, digest.answer_text, digest.audit_text, trial.arm, trial.model)
    judges = [j for j in judges if can_judge(j, scenario)]
    jobs = (
        [(j, p) for j in judges for p in next_pass_numbers(judgments, j.judge_id, passes, top_up=top_up)]
        if is_judged(item)
        else []
    )

    async def one(judge: Judge, pass_no: int) -> JudgeOutcome:
        async with limit:
            return await judge_answer(judge, subject, pass_no)

    outcomes = await asyncio.gather(*(one(j, p) for j, p in jobs))
    by_judge = {j.judge_id: stored_verdicts(judgments, j.judge_id) for j in judges}
    failures = [e for j in judges for e in stored_errors(judgments, j.judge_id)]
    new: dict[str, list[int]] = {j.judge_id: [] for j in judges}
    errors = 0
    for (judge, pass_no), outcome in zip(jobs, outcomes, strict=True):
        emit(judged_event(outcome, pass_no, judge.judge_id), outcome.meta)
        new[judge.judge_id].append(pass_no)
        if outcome.verdict is None:
            errors += 1
            failures.append(outcome.error)
        else:
            by_judge[judge.judge_id].append(outcome.verdict)
    verdicts = [v for vs in by_judge.values() for v in vs]
    layers = layer_scores(item, digest, det, verdicts, by_judge, failures)
    if ScoreName.FAILURE_MODE not in layers and any(s.name == ScoreName.FAILURE_MODE for s in scores):
        layers[ScoreName.FAILURE_MODE] = Scored.of(
            ScoreName.FAILURE_MODE, None, FailureModeDetails(evidence="no longer a failure after re-judging")
        )
    for s in layers.values():
        emit(s)
    passed = layers[ScoreName.PASSED].value
    return RejudgeResult(
        trial.id,
        {k: tuple(v) for k, v in new.items()},
        errors,
        layers[ScoreName.LLM_QUALITY].value,
        None if passed is None else passed >= 0.5,
        no_answer=layers[ScoreName.PASSED].parsed(PassedDetails).no_answer,
    )


def refuse_replay(db: Path, config: Mapping[str, Any]) -> None:
    """A replay run (``proctor replay``) is not judged: its trials are the recorded calls made
    again, with no model and no answer, so a judge would pass them on their calls alone."""
    info = config.get(REPLAY_KEY)
    if not isinstance(info, dict):
        return
    source = info.get("source_db") or "?"
    raise RejudgeError(
        f"{db}: the run is a replay of run {info.get('source_run') or '?'} in {source}; its trials "
        "replay recorded tool calls without a model, so they have no answer to judge. Judging "
        f"applies to the recording: 'proctor judge {source}'. For what changed since the "
        f"recording, read 'proctor report {db}' (its drift section) or gate it with "
        f"'proctor gate {db} --max-changed N'"
    )


def load_run_suite(db: Path) -> tuple[str, LoadedSuite]:
    """The run id and the suite it was run from (``runs.config["suite_dir"]``)."""
    with StoreReader(db) as reader:
        run = reader.run()
    if run is None:
        raise RejudgeError(f"{db} holds no run")
    suite_dir = run.config.get("suite_dir")
    if not isinstance(suite_dir, str) or not suite_dir:
        raise RejudgeError(f"{db}: the run's config names no suite_dir, so its scenarios cannot be found")
    try:
        return run.id, load_suite(suite_dir)
    except SuiteError as exc:
        raise RejudgeError(f"{db}: the run's suite cannot be loaded: {exc}") from exc


async def rejudge_db(
    db: Path,
    *,
    passes: int = 1,
    judge_model: str | None = None,
    trial_ids: Sequence[int] | None = None,
) -> list[RejudgeResult]:
    """``proctor judge DB``: load the run's suite, add passes, write them to the same database."""
    with StoreReader(db) as reader:
        run = reader.run()
    if run is not None:
        refuse_replay(db, run.config)
    run_id, loaded = load_run_suite(db)
    workspace = Workspace.prepare(loaded)
    judges = make_suite_judges(loaded.suite, judge_model)
    try:
        async with await StoreWriter.open(db) as writer:
            target = RejudgeTarget(db, writer, run_id, loaded, workspace)
            return await rejudge_trials(target, judges, passes=passes, trial_ids=trial_ids)
    finally:
        await close_judges(judges)


__all__ = [
    "RejudgeError",
    "RejudgeResult",
    "RejudgeTarget",
    "load_run_suite",
    "next_pass_numbers",
    "refuse_replay",
    "rejudge_db",
    "rejudge_trials",
    "stored_verdicts",
]
