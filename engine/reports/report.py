"""The run report as plain data, read from the store only (so a finished run needs no engine).

``build_report`` returns the JSON report: ``run``, ``trials`` and ``notes`` as before, plus
``arms`` (per arm × model aggregates, comparisons against the baseline, judge variance),
``ranking``, ``judges`` (models, labels, panel agreement), ``anchors`` and ``tool_usage`` (per arm
× model and tool: calls, errors, p50/p95 latency, result bytes, and the tools offered but never
called; definitions in engine/reports/tool_usage.py and under its ``definitions``). The Markdown and CSV
renderings are made from this same dictionary, so the three formats never disagree. The offline
agent and the offline judge are labelled wherever they were used.

Reads are built for large runs: each table is read once and each verdict validated once; the
events are decoded into msgspec Structs and read for a few fields (engine/reports/event_sections.py),
and the bootstrap intervals are drawn in a thread (numpy lets go of the GIL) while this one builds
the other sections. ``report_json`` is the CLI's encoding.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson

from proctor.engine.judges.panel import is_human, panel_summary
from proctor.engine.reports.aggregate import (
    ReportInputs,
    TrialUsage,
    judged_coverage,
    layer_columns,
    summarize_scores,
    with_usage,
)
from proctor.engine.reports.arm_comparisons import (
    baseline_comparisons,
    bootstrap_requests,
    cost_frontier,
    fairness_ranking,
    variance_by_judge,
)
from proctor.engine.reports.collector import collector_paused
from proctor.engine.reports.drift_section import drift_section
from proctor.engine.reports.error_causes import ErrorCause, group_errors
from proctor.engine.reports.event_sections import read_event_sections
from proctor.engine.reports.report_model import ErrorGroup, JudgmentPass, Report, StoredScore, TrialEntry
from proctor.engine.reports.report_sections import anchors_section, arm_rows, judges_section, ranking_section
from proctor.engine.reports.result_notes import result_notes
from proctor.engine.reports.run_progress import is_in_progress, run_progress
from proctor.engine.reports.tool_surface import surface_report
from proctor.engine.reports.verdicts import Verdicts, unreadable_notes
from proctor.engine.stats import intervals_ahead, sd_convention
from proctor.engine.suites import load_suite
from proctor.engine.tools.supervise import killed_notes
from proctor.scenarios.loader import SuiteError
from proctor.store.events import OperatorCommand, RunFinished
from proctor.store.read.reader import (
    JudgmentRecord,
    RunRecord,
    ScoreRecord,
    StoredEvent,
    StoreReader,
    TrialRecord,
)
from proctor.store.run_files import logs_dir
from proctor.store.scores import PassedDetails, ScoreName, UnreadableScore
from proctor.store.stored_json import StoredJson

OFFLINE_NOTE = "offline agent: token counts are estimates, cost is zero"
OFFLINE_JUDGE_NOTE = (
    "offline judge (offline:lexical): claims, key points and rubric matched lexically, no model; "
    "its passes agree exactly, so its σ = 0 says nothing about judging"
)
DEFAULT_FLOOR = 0.05
DEFAULT_CLAIMS_THRESHOLD = 0.75


def trial_status(t: TrialRecord) -> str:
    """queued, running, finished or error (the JSON report's vocabulary)."""
    return t.status if t.status in ("queued", "running", "finished", "error") else "error"


def _of_kind(reader: StoreReader, kind: str, upper: int) -> Iterator[StoredEvent]:
    """Events of one kind in id order, read 5,000 at a time (never all at once)."""
    after = 0
    while True:
        chunk = reader.events_of_kind(kind, after_id=after, up_to_id=upper, limit=5000)
        yield from chunk
        if len(chunk) < 5000:
            return
        after = chunk[-1].id


def _scenario_labels(config: dict[str, Any]) -> dict[str, dict[str, bool]]:
    """Human labels from the suite's scenarios, when the suite folder is still there."""
    suite_dir = config.get("suite_dir")
    if not isinstance(suite_dir, str):
        return {}
    try:
        loaded = load_suite(suite_dir)
    except (SuiteError, OSError):
        return {}
    return {s.id: dict(s.human_labels) for s in loaded.scenarios if s.human_labels}


def _notes(
    config: dict[str, Any],
    trials: list[TrialRecord],
    judgments: list[JudgmentRecord],
    scores: dict[int, dict[ScoreName, ScoreRecord]],
) -> list[str]:
    scored = set(scores)
    notes = []
    imported = config.get("imported")
    if isinstance(imported, dict):
        tokens = imported.get("tokens", "estimated from text length")
        wall = imported.get("wall_s", "not recorded (0)")
        notes.append(
            f"imported from {imported.get('format', '?')}: tokens {tokens}; time {wall}; "
            f"cost {imported.get('cost_usd', 'not recorded (0)')}"
        )
    if any(t.model.startswith("offline:") for t in trials):
        notes.append(OFFLINE_NOTE)
    if any(j.judge.startswith("offline:") for j in judgments):
        notes.append(OFFLINE_JUDGE_NOTE)
    unscored = sum(t.status == "finished" and t.id not in scored for t in trials)
    if unscored:
        notes.append(
            f"{unscored} finished trial(s) have no proctor score, so they count in no pass rate or mean; "
            "run proctor judge on this database to score them"
        )
    return notes + verdictless_notes(trials, scores)


def verdictless_notes(
    trials: list[TrialRecord], scores: dict[int, dict[ScoreName, ScoreRecord]]
) -> list[str]:
    """Trials without an answer, and trials no check gave a verdict, counted per arm with why."""
    arm_of = {t.id: t.arm for t in trials}
    no_answer: dict[str, int] = {}
    unchecked: dict[tuple[str, str], int] = {}
    not_offered: dict[str, int] = {}
    unjudged: dict[tuple[str, str], int] = {}
    cut: dict[tuple[str, str], int] = {}
    for trial_id, by_name in scores.items():
        passed = by_name.get(ScoreName.PASSED)
        if passed is None or passed.value is not None or trial_id not in arm_of:
            continue
        try:
            details = passed.parsed(PassedDetails)
        except UnreadableScore:
            continue
        arm = arm_of[trial_id]
        if details.no_answer:
            no_answer[arm] = no_answer.get(arm, 0) + 1
        elif details.tools_not_offered:
            not_offered[arm] = not_offered.get(arm, 0) + 1
        elif details.no_check:
            key = (arm, details.rule.removeprefix("no verdict from a check: "))
            unchecked[key] = unchecked.get(key, 0) + 1
        elif details.judge_failed:
            key = (arm, details.rule.removeprefix("no judge verdict: "))
            unjudged[key] = unjudged.get(key, 0) + 1
        elif details.outcome:
            key = (arm, details.rule.removeprefix("not judged: "))
            cut[key] = cut.get(key, 0) + 1
    notes = [
        f"{n} {arm} trial(s) have no final answer: imported reference trajectories that end on a tool "
        'result. They are "no answer", neither passed nor failed, and not judged; their tool calls '
        "still score TFS/TEFS"
        for arm, n in sorted(no_answer.items())
    ]
    notes += [
        f"{n} {arm} trial(s) have no verdict from a check ({why}): their fairness rests on a judge's "
        "opinion of the prose alone, so proctor gate fails every arm paired with them"
        for (arm, why), n in sorted(unchecked.items())
    ]
    notes += [
        f"{n} {arm} trial(s) cannot make their scenario's gold calls, its only check: the arm does not "
        "offer their tools. They have no verdict and no fairness, so no arm is compared with them (no Δ "
        "on those scenarios); add claims or a rubric an arm without the tools can be judged on"
        for arm, n in sorted(not_offered.items())
    ]
    notes += [
        f"{n} {arm} trial(s) were not judged ({why}): no llm_quality, no fairness, neither passed nor "
        "failed, and proctor gate fails their arm; fix the judge and run proctor judge on this database"
        for (arm, why), n in sorted(unjudged.items())
    ]
    notes += [
        f"{n} {arm} trial(s) were not judged, their answer {why}: stored and shown, never judged as "
        "a complete answer; no fairness, neither passed nor failed, and proctor gate fails their arm"
        for (arm, why), n in sorted(cut.items())
    ]
    return notes


def report_json(data: Report) -> bytes:
    """The report as ``proctor report --format json`` writes it: UTF-8 JSON, two-space indent,
    keys in the report's order (orjson; ``json.dumps(indent=2)`` took seconds on a large run).

    As with ``json.dumps``, keys that are not strings are written as strings and numpy numbers
    as numbers; unlike it, text is written as UTF-8 rather than ``\\u`` escapes, and a
    non-finite float as null (json.dumps wrote NaN or Infinity, which strict JSON readers refuse).
    """
    # The newline by orjson: appending it here copied the whole encoding (258 MB on 10,000 trials).
    return orjson.dumps(
        data,
        default=_json_default,
        option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE,
    )


def _json_default(value: object) -> object:
    if type(value) is StoredJson:
        return orjson.Fragment(value.text)
    np = sys.modules.get("numpy")  # a numpy number can only come from a loaded numpy
    if np is None:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def build_report(db: Path) -> Report:
    with collector_paused():
        with StoreReader(db) as reader:
            report = _assemble(reader, reader.max_event_id(), is_in_progress(db, reader.run()))
        report["notes"] += killed_notes(logs_dir(db))  # named by the supervisors
        run = report["run"]
        drift = drift_section(db, run["config"] if run is not None else {})
        if drift is not None:  # a replay run: its calls against the recording
            report["drift"] = drift
        return report


def _settings(config: dict[str, Any]) -> tuple[float, float]:
    """The run's variance floor and claims pass threshold."""
    raw_scoring = config.get("scoring")
    scoring: dict[str, Any] = raw_scoring if isinstance(raw_scoring, dict) else {}
    return (
        float(scoring.get("variance_floor", DEFAULT_FLOOR)),
        float(scoring.get("claims_pass_threshold", DEFAULT_CLAIMS_THRESHOLD)),
    )


def _assemble(reader: StoreReader, upper: int, in_progress: bool = False) -> Report:
    """Every table is read once and every verdict validated once; each section is a pure
    function of what was read. The bootstrap intervals are drawn ahead in a thread (numpy lets go
    of the GIL) while this one builds the sections that do not need them."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        run = reader.run()
        trials = reader.trials()
        scores = reader.scores()
        judgments = reader.judgments()
        anchor_rows = reader.anchors()
        commands = [
            e for e in _of_kind(reader, "operator_command", upper) if isinstance(e.event, OperatorCommand)
        ]
        stopped = ""
        if run is not None and run.status == "error":
            ends = [
                e.event for e in _of_kind(reader, "run_finished", upper) if isinstance(e.event, RunFinished)
            ]
            stopped = ends[-1].message if ends else ""
        config = run.config if run is not None else {}
        floor, threshold = _settings(config)
        sd = sd_convention(config)
        score_map: dict[int, dict[ScoreName, ScoreRecord]] = {}
        for s in scores:
            of_trial = score_map.get(s.trial_id)
            if of_trial is None:  # not setdefault: it would build a dict per score to throw away
                of_trial = score_map[s.trial_id] = {}
            of_trial[s.name] = s
        columns = layer_columns(trials, score_map)  # read once for the four sections below
        with intervals_ahead(pool, bootstrap_requests(trials, score_map, columns)):
            trial_rows = _trial_rows(trials, score_map, judgments)
            machine = [j for j in judgments if not is_human(j.source)]
            machine_judges = sorted({j.judge for j in machine})
            verdicts = Verdicts()
            parsed = verdicts.by_judge_and_trial(judgments)
            # Without human judgments the machine judges' are all of them, parsed once for both.
            judged = judged_coverage(machine, verdicts, parsed if len(machine) == len(judgments) else None)
            ranking = fairness_ranking(trials, score_map, floor, columns)
            panel = panel_summary(
                trials,
                judgments,
                claims_threshold=threshold,
                scenario_labels=_scenario_labels(config),
                verdicts=parsed,
            )
            variance = variance_by_judge(trials, judgments, floor, verdicts, sd)
            read = read_event_sections(reader, run, trials, upper)
            # Last, those that take the intervals: by now they are drawn.
            scored = summarize_scores(
                ReportInputs(
                    trials, score_map, judgments, {}, threshold, judged_coverage=judged, columns=columns
                )
            )
            comparisons = baseline_comparisons(trials, score_map, columns)
    summaries = with_usage(scored, trials, {tid: TrialUsage(*phases) for tid, phases in read.usage.items()})
    errors = (
        [_error_group(c) for c in group_errors((t.arm, t.error) for t in trials if t.status == "error")]
        if any(t.status == "error" for t in trials)
        else None
    )
    report: Report = {
        "run": None
        if run is None
        else {
            "id": run.id,
            "suite": run.suite,
            "config": run.config,
            "status": run.status,
            "started": run.started_at,
            "finished": run.finished_at,
        },
        "progress": run_progress(in_progress, config, trials),
        "notes": _notes(config, trials, judgments, score_map)
        + result_notes(trials, score_map)
        + unreadable_notes(judgments, verdicts)
        + run_stop_notes(run, stopped, trials),
        "errors": [] if errors is None else errors,
        "trials": trial_rows,
        "arms": arm_rows(summaries, ranking, comparisons, cost_frontier(summaries), variance, machine_judges),
        "ranking": ranking_section(ranking),
        "judges": judges_section(machine_judges, panel, floor, threshold, sd),
        "anchors": anchors_section(config, anchor_rows, commands),
        "tool_usage": read.tools,
        "tool_surface": surface_report(reader, upper, trials, config),
    }
    if errors is None:
        # Only present when trials errored, so a report without errors reads as it always did.
        del report["errors"]
    return report


def _error_group(c: ErrorCause) -> ErrorGroup:
    return {"cause": c.cause, "trials": c.trials, "arms": c.arms, "first": c.first}


def run_stop_notes(run: RunRecord | None, message: str, trials: list[TrialRecord]) -> list[str]:
    """A run that stopped on an error (a missing API key, a suite the engine refused) says why."""
    if run is None or run.status != "error":
        return []
    never = sum(t.status in ("queued", "running") for t in trials)
    why = f": {message}" if message else " (no message recorded)"
    return [
        f"the run stopped with an error before its trials finished{why}; {never} of {len(trials)} trial(s) never ran"
    ]


def _trial_rows(
    trials: list[TrialRecord],
    scores: dict[int, dict[ScoreName, ScoreRecord]],
    judgments: list[JudgmentRecord],
) -> list[TrialEntry]:
    """Each trial as the report lists it; ``scores`` by trial as ``_assemble`` grouped them."""
    by_trial: dict[int, dict[str, StoredScore]] = {
        trial_id: {
            name: {"value": s.value, "details": s.details if s.stored is None else s.stored}
            for name, s in of_trial.items()
        }
        for trial_id, of_trial in scores.items()
    }
    passes: dict[int, list[JudgmentPass]] = {}
    for j in judgments:
        passes.setdefault(j.trial_id, []).append(
            {
                "pass": j.pass_no,
                "judge": j.judge,
                "source": j.source,
                "verdict": j.verdict,
                "error": j.error or None,
            }
        )
    return [_trial(t, by_trial.get(t.id, {}), passes.get(t.id, [])) for t in trials]


def _trial(t: TrialRecord, scores: dict[str, StoredScore], judgments: list[JudgmentPass]) -> TrialEntry:
    row: TrialEntry = {
        "id": t.id,
        "scenario": t.scenario,
        "arm": t.arm,
        "model": t.model,
        "epoch": t.epoch,
        "seed": t.seed,
        "attempt": t.attempt,
        "status": trial_status(t),
        "stop": t.stop,
        "passed": t.passed,
        "final_answer": t.final_answer,
        "tool_calls": t.tool_calls,
        "tokens": {
            "input": t.input_tokens,
            "output": t.output_tokens,
            "cache_read": t.cache_read_tokens,
            "cache_write": t.cache_write_tokens,
            "estimated": t.tokens_estimated,
        },
        "cost_usd": t.cost_usd,
        "wall_s": t.wall_s,
        "error": t.error or None,
        "scores": scores,
        "judgments": judgments,
    }
    if not scores:
        del row["scores"]
    return row
