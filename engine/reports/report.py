"""The run report as plain data, read from the store only (so a finished run needs no engine).

``build_report`` returns the JSON report: ``run``, ``trials`` and ``notes`` as before, plus
``arms`` (per arm × model aggregates, comparisons against the baseline, judge variance),
``ranking``, ``judges`` (models, labels, panel agreement), ``anchors`` and ``tool_usage`` (per arm
× model and tool: calls, errors, p50/p95 latency, result bytes, and the tools offered but never
called; definitions in engine/reports/tool_usage.py and under its ``definitions``). The Markdown and CSV
renderings are made from this same dictionary, so the three formats never disagree. The offline
agent and the offline judge are labelled wherever they were used.

Reads are built for large runs: event fields are decoded as plain JSON where that reads the same
as the event (``StoreReader.extract``). ``report_json`` is the CLI's encoding.
"""

from __future__ import annotations

import gc
from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from proctor.engine.judges.panel import is_human, panel_summary
from proctor.engine.reports.aggregate import (
    ReportInputs,
    TrialUsage,
    Verdicts,
    judged_coverage,
    summarize_scores,
    with_usage,
)
from proctor.engine.reports.arm_comparisons import (
    JudgeVariance,
    baseline_comparisons,
    cost_frontier,
    fairness_ranking,
    variance_by_judge,
)
from proctor.engine.reports.report_sections import anchors_section, arm_rows, judges_section, ranking_section
from proctor.engine.reports.tool_usage import latency_recorded, read_tool_usage, tool_usage_section
from proctor.scenarios.loader import SuiteError, load_suite
from proctor.store.events import OperatorCommand
from proctor.store.reader import (
    JudgeUsage,
    JudgmentRecord,
    ModelCallUsage,
    ScoreRecord,
    StoredEvent,
    StoreReader,
    TrialRecord,
)
from proctor.store.scores import ScoreName

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


def _tool_usage(reader: StoreReader, trials: list[TrialRecord], config: dict[str, Any]) -> dict[str, Any]:
    recorded = latency_recorded(config)
    return tool_usage_section(read_tool_usage(reader, trials, recorded), latency_recorded=recorded)


def _phases() -> dict[str, float]:
    return {"reasoning": 0, "tool_io": 0, "output": 0, "judge": 0, "judge_usd": 0.0}


def _usage(
    trials: list[TrialRecord],
    responses: Iterable[tuple[int | None, int, bool, ModelCallUsage]],
    judged: Iterable[tuple[int | None, int, bool, JudgeUsage]],
) -> dict[int, TrialUsage]:
    """Tokens by phase per trial: the current attempt's model calls, and every judge call."""
    attempt = {t.id: t.attempt for t in trials}
    phases: dict[int, dict[str, float]] = {}
    unpriced: set[int] = set()
    for trial_id, call_attempt, abandoned, (input_tokens, tool_io_tokens, output_tokens) in responses:
        if trial_id is None or abandoned:
            continue
        if attempt.get(trial_id) != call_attempt:
            continue
        p = phases.get(trial_id)
        if p is None:
            p = phases[trial_id] = _phases()
        p["reasoning"] += max(0, input_tokens - tool_io_tokens)
        p["tool_io"] += tool_io_tokens
        p["output"] += output_tokens
    for t in trials:
        if t.id not in phases and t.input_tokens is not None:
            phases[t.id] = _phases() | {"reasoning": t.input_tokens, "output": t.output_tokens or 0}
    for trial_id, _attempt, _abandoned, (input_tokens, output_tokens, cost_usd) in judged:
        if trial_id is None:
            continue
        p = phases.setdefault(trial_id, _phases())
        p["judge"] += input_tokens + output_tokens
        if cost_usd is None:
            unpriced.add(trial_id)
        else:
            p["judge_usd"] += cost_usd
    return {
        tid: TrialUsage(
            reasoning=int(p["reasoning"]),
            tool_io=int(p["tool_io"]),
            output=int(p["output"]),
            judge=int(p["judge"]),
            judge_cost_usd=None if tid in unpriced else p["judge_usd"],
        )
        for tid, p in phases.items()
    }


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
    config: dict[str, Any], trials: list[TrialRecord], judgments: list[JudgmentRecord], scored: set[int]
) -> list[str]:
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
    return notes


@contextmanager
def _gc_paused() -> Iterator[None]:
    """The cyclic collector off while the report is built, as it was before on the way out.

    A report holds every trial's records, scores and verdicts alive at once: hundreds of thousands
    of containers that every generation-2 collection walks again, which tripled the time of a
    10k-trial report. The report keeps all of them until it returns, so a collection before then
    finds next to nothing; any cycle left behind is collected once the collector is back on.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def report_json(data: dict[str, Any]) -> bytes:
    """The report as ``proctor report --format json`` writes it: UTF-8 JSON, two-space indent,
    keys in the report's order (orjson; ``json.dumps(indent=2)`` took seconds on a large run).

    As with ``json.dumps``, keys that are not strings are written as strings and numpy numbers
    as numbers; unlike it, text is written as UTF-8 rather than ``\\u`` escapes, and a
    non-finite float as null (json.dumps wrote NaN or Infinity, which strict JSON readers refuse).
    """
    return (
        orjson.dumps(data, default=_json_default, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS)
        + b"\n"
    )


def _json_default(value: object) -> object:
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def build_report(db: Path) -> dict[str, Any]:
    with _gc_paused():
        return _build_report(db)


@dataclass(frozen=True)
class _Side:
    """Sections that need nothing else the report computes: tokens by phase per trial and tool
    usage (read from the run's events), and judge variance."""

    usage: dict[int, TrialUsage]
    tools: dict[str, Any]
    variance: list[JudgeVariance]


def _settings(config: dict[str, Any]) -> tuple[float, float]:
    """The run's variance floor and claims pass threshold."""
    raw_scoring = config.get("scoring")
    scoring: dict[str, Any] = raw_scoring if isinstance(raw_scoring, dict) else {}
    return (
        float(scoring.get("variance_floor", DEFAULT_FLOOR)),
        float(scoring.get("claims_pass_threshold", DEFAULT_CLAIMS_THRESHOLD)),
    )


def _side_sections(db: Path) -> Generator[object, None, None]:
    """The sections built from the events and judgments alone: first the judged claims coverage
    per trial (``judged_coverage``, which the arms' summaries need), then ``_Side``."""
    with StoreReader(db) as reader:
        run = reader.run()
        trials = reader.trials()
        judgments = reader.judgments()
        verdicts = Verdicts()
        yield judged_coverage([j for j in judgments if not is_human(j.source)], verdicts)
        upper = reader.max_event_id()
        usage = _usage(trials, reader.model_call_usage(upper), reader.judge_usage(upper))
        tools = _tool_usage(reader, trials, run.config if run is not None else {})
    floor, _threshold = _settings(run.config if run is not None else {})
    yield _Side(usage, tools, variance_by_judge(trials, judgments, floor, verdicts))


def _build_report(db: Path) -> dict[str, Any]:
    side = _side_sections(db)
    try:
        return _assemble(db, side)
    finally:
        side.close()


def _assemble(db: Path, side: Generator[object, None, None]) -> dict[str, Any]:
    with StoreReader(db) as reader:
        run = reader.run()
        trials = reader.trials()
        scores = reader.scores()
        judgments = reader.judgments()
        anchor_rows = reader.anchors()
        upper = reader.max_event_id()
        commands = [
            e for e in _of_kind(reader, "operator_command", upper) if isinstance(e.event, OperatorCommand)
        ]
    config = run.config if run is not None else {}
    floor, threshold = _settings(config)
    by_trial: dict[int, dict[str, Any]] = {}
    score_map: dict[int, dict[ScoreName, ScoreRecord]] = {}
    for s in scores:
        by_trial.setdefault(s.trial_id, {})[s.name] = {"value": s.value, "details": s.details}
        score_map.setdefault(s.trial_id, {})[s.name] = s
    passes: dict[int, list[dict[str, Any]]] = {}
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
    # Every section is a pure function of what was read: those the side sections do not feed
    # first, while a child may still be building them.
    trial_rows = [_trial(t, by_trial.get(t.id, {}), passes.get(t.id, [])) for t in trials]
    ranking = fairness_ranking(trials, score_map, floor)
    comparisons = baseline_comparisons(trials, score_map)
    machine_judges = sorted({j.judge for j in judgments if not is_human(j.source)})
    panel = panel_summary(
        trials, judgments, claims_threshold=threshold, scenario_labels=_scenario_labels(config)
    )
    judged = next(side)
    assert isinstance(judged, dict)
    scored = summarize_scores(
        ReportInputs(trials, score_map, judgments, {}, threshold, judged_coverage=judged)
    )
    done = next(side)
    assert isinstance(done, _Side)
    summaries = with_usage(scored, trials, done.usage)
    return {
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
        "notes": _notes(config, trials, judgments, set(score_map)),
        "trials": trial_rows,
        "arms": arm_rows(
            summaries, ranking, comparisons, cost_frontier(summaries), done.variance, machine_judges
        ),
        "ranking": ranking_section(ranking),
        "judges": judges_section(machine_judges, panel, floor, threshold),
        "anchors": anchors_section(config, anchor_rows, commands),
        "tool_usage": done.tools,
    }


def _trial(t: TrialRecord, scores: dict[str, Any], judgments: list[dict[str, Any]]) -> dict[str, Any]:
    row: dict[str, Any] = {
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
    }
    if scores:
        row["scores"] = scores
    row["judgments"] = judgments
    return row
