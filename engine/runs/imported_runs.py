"""Imported trajectories as a run database, and the staged write of an import's folder.

A benchmark's trajectories become trials of one finished run in ``DIR/imported.db``: each
assistant message is a ``ModelResponse`` (calls requested together stay one parallel step),
its prose an ``AssistantMessage``, its calls and their outputs ``ToolCall``/``ToolResult``, the
answer a ``FinalAnswer``; human labels and third-party verdicts become ``Judged`` events whose
judgment rows record where they came from. Where the source records neither tokens nor time,
token counts are estimated from text length (and marked estimated) and wall time is zero; a
source that records them (OpenTelemetry traces) keeps its own usage, latencies and trial
status. Cost is zero; the run config says all this.

The suite files and the database are written into a staging folder that replaces ``DIR`` only
when everything succeeded.
"""

from __future__ import annotations

import asyncio
import json
import math
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proctor.engine.scoring.toolmatch import match_tool_calls
from proctor.scenarios.importers.common import ImportedSuite, ImportedTrajectory, ImportedTurn
from proctor.scenarios.importers.suite_files import staged_dir, write_suite_files
from proctor.scenarios.schema import Scenario, Suite
from proctor.store.events import (
    AssistantMessage,
    Event,
    FinalAnswer,
    Judged,
    ListedTool,
    ModelResponse,
    RunFinished,
    RunStarted,
    Scored,
    ToolCall,
    ToolCallRequest,
    ToolResult,
    ToolsListed,
    TrialFinished,
    TrialStarted,
    Usage,
)
from proctor.store.read.reader import StoreReader
from proctor.store.records import JudgmentMeta
from proctor.store.redaction import redact
from proctor.store.scores import ScoreName
from proctor.store.tool_origin import BUILTIN_SERVER
from proctor.store.write.writer import StoreWriter, TrialRow

DB_NAME = "imported.db"
CHARS_PER_TOKEN = 4
ATTEMPT = 1


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def trajectory_events(t: ImportedTrajectory) -> list[Event]:
    """The trial's events, from ``TrialStarted`` to ``TrialFinished`` (judgments excluded)."""
    events: list[Event] = [
        TrialStarted(scenario=t.scenario, arm=t.arm, model=t.model, epoch=t.epoch, seed=0, attempt=ATTEMPT)
    ]
    if t.tools:  # the offered tools, when the source recorded them (scoring checks calls against them)
        listed = [
            ListedTool(
                name=x.name,
                server=_label(x.server, x.builtin),
                description=x.description,
                input_schema=x.input_schema,
                annotations=x.annotations,
                builtin=x.builtin is True,
            )
            for x in t.tools
        ]
        events.append(ToolsListed(tools=listed))
    cost = 0.0
    output_tokens = input_tokens = calls = 0
    estimated = False
    for turn_no, turn in enumerate(t.turns):
        usage = _recorded_usage(turn)
        if usage is None:
            requested = json.dumps([c.arguments for c in turn.calls], ensure_ascii=False, default=str)
            usage = Usage(
                output_tokens=estimate_tokens(turn.text) + (estimate_tokens(requested) if turn.calls else 0),
                estimated=True,
            )
            input_tokens += sum(estimate_tokens(r.content) for r in turn.results)
        else:
            input_tokens += usage.input_tokens
        output_tokens += usage.output_tokens
        cost += turn.cost_usd or 0.0
        estimated = estimated or usage.estimated
        events.append(
            ModelResponse(
                turn=turn_no,
                model=t.model,
                text=redact(turn.text),
                tool_calls=[
                    ToolCallRequest(call_id=c.call_id, name=c.tool, arguments=c.arguments) for c in turn.calls
                ],
                stop_reason="tool_use" if turn.calls else "end_turn",
                usage=usage,
                cost_usd=turn.cost_usd or 0.0,  # recorded cost; none recorded stays 0 as before
                latency_s=turn.latency_s,
            )
        )
        if turn.text:
            events.append(AssistantMessage(turn=turn_no, text=redact(turn.text)))
        for c in turn.calls:
            calls += 1
            events.append(
                ToolCall(
                    call_id=c.call_id,
                    server=_label(c.server, c.builtin),
                    tool=c.tool,
                    arguments=c.arguments,
                    builtin=c.builtin is True,
                )
            )
        for r in turn.results:
            events.append(
                ToolResult(
                    call_id=r.call_id,
                    server=_label(r.server, r.builtin),
                    tool=r.tool,
                    content=redact(r.content),
                    is_error=r.is_error,
                    error_type="tool_error" if r.is_error else "",
                    latency_s=r.latency_s,
                    builtin=r.builtin is True,
                )
            )
    final = redact(t.final_answer)
    if final:
        events.append(FinalAnswer(text=final))
    events.append(
        TrialFinished(
            status="error" if t.error else "finished",
            # A reference trajectory that ends on a tool result has no answer to judge; a source
            # may say itself why the trial ended (Inspect's limits).
            stop=t.stop or ("error" if t.error else "answer" if final.strip() else "no_answer"),
            final_answer=final,
            tool_calls=calls,
            usage=Usage(
                input_tokens=input_tokens, output_tokens=output_tokens, estimated=estimated or not t.turns
            ),
            cost_usd=cost,
            wall_s=t.wall_s,
            error=redact(t.error),
        )
    )
    return events


def _label(server: str, builtin: bool | None) -> str:
    """A built-in call's server is only a label: the baseline's, where the source gave none."""
    return server or (BUILTIN_SERVER if builtin is True else "")


def _recorded_usage(turn: ImportedTurn) -> Usage | None:
    """The model call's usage as the source recorded it, or None when it recorded none."""
    if turn.input_tokens is None and turn.output_tokens is None:
        return None
    return Usage(
        input_tokens=turn.input_tokens or 0,
        output_tokens=turn.output_tokens or 0,
        estimated=turn.tokens_estimated,
    )


def tool_match_scores(t: ImportedTrajectory, scenario: Scenario, suite: Suite) -> list[Scored]:
    """TFS and TEFS of an imported trial whose task has gold calls, in the suite's match mode.

    Computed at import, since they need only the recorded calls: a benchmark's published
    results can then be compared with proctor's reading of them without re-running anything.
    """
    if not scenario.gold_tool_calls:
        return []
    m = match_tool_calls(
        scenario.gold_tool_calls,
        [mcp for turn in t.turns if (mcp := [c for c in turn.calls if c.builtin is not True])],
        mode=suite.scoring.tool_match,
        names_only=suite.scoring.names_only_tools,
    )
    details = m.to_details()
    return [
        Scored.of(ScoreName.TFS, float(m.finished), details),
        Scored.of(ScoreName.TEFS, float(m.efficiently_finished), details),
    ]


def judgment_events(t: ImportedTrajectory) -> list[tuple[Judged, JudgmentMeta]]:
    return [
        (
            Judged(pass_no=j.pass_no, judge=j.judge, verdict=_redacted(j.verdict), error=j.error),
            JudgmentMeta(source=j.source),
        )
        for j in t.judgments
    ]


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return value


def run_config(imported: ImportedSuite, suite_dir: Path) -> dict[str, Any]:
    """What the runner would record for a run of this suite, plus where the trials came from."""
    suite = Suite.model_validate(imported.suite)
    ts = imported.trajectories
    return {
        "suite": suite.name,
        "suite_dir": str(suite_dir),
        "models": sorted({t.model for t in ts}),
        "arms": sorted({t.arm for t in ts}),
        "epochs": max((t.epoch for t in ts), default=0) + 1,
        "base_seed": 0,
        "held_out": [],
        "scoring": suite.scoring.model_dump(),
        "judge": suite.judge.model_dump(),
        "imported": {
            "format": imported.source_format,
            "sources": list(imported.sources),
            "tokens": _tokens_note(ts),
            "wall_s": "recorded by the source" if any(t.wall_s for t in ts) else "not recorded (0)",
            "cost_usd": _cost_note(ts),
        },
    }


def _cost_note(trajectories: Sequence[ImportedTrajectory]) -> str:
    turns = [turn for t in trajectories for turn in t.turns]
    priced = sum(turn.cost_usd is not None for turn in turns)
    if not priced:
        return "not recorded (0)"
    return (
        "recorded by the source"
        if priced == len(turns)
        else f"recorded for {priced} of {len(turns)} model calls (0 for the rest)"
    )


def _tokens_note(trajectories: Sequence[ImportedTrajectory]) -> str:
    turns = [turn for t in trajectories for turn in t.turns]
    recorded = sum(_recorded_usage(turn) is not None for turn in turns)
    estimated = f"estimated from text length ({CHARS_PER_TOKEN} characters per token)"
    if not turns or not recorded:
        return estimated
    if recorded == len(turns):
        return "recorded by the source"
    return f"recorded by the source for {recorded} of {len(turns)} model calls, the others {estimated}"


async def write_imported_run(db: Path, imported: ImportedSuite, suite_dir: Path) -> int:
    """Write every trajectory of ``imported`` as a trial of one finished run; return the trial count."""
    trajectories: Sequence[ImportedTrajectory] = imported.trajectories
    run_id = f"imported-{uuid.uuid4().hex[:8]}"
    config = run_config(imported, suite_dir)
    writer = await StoreWriter.open(db)
    try:
        await writer.create_run(run_id, config["suite"], config)
        await writer.add_trials(
            run_id, [TrialRow(t.scenario, t.arm, t.model, t.epoch, 0) for t in trajectories]
        )
        with StoreReader(db) as reader:
            ids = {r.key: r.id for r in reader.trials()}
        writer.emit(
            run_id, RunStarted(run_id=run_id, suite=config["suite"], config=config, trials=len(trajectories))
        )
        suite = Suite.model_validate(imported.suite)
        scenarios = {sc["id"]: Scenario.model_validate(sc) for sc in imported.scenarios}
        for t in trajectories:
            trial_id = ids[(t.scenario, t.arm, t.model, t.epoch)]
            for ev in trajectory_events(t):
                writer.emit(run_id, ev, trial_id=trial_id, attempt=ATTEMPT)
            for scored in tool_match_scores(t, scenarios[t.scenario], suite):
                writer.emit(run_id, scored, trial_id=trial_id, attempt=ATTEMPT)
            for judged, meta in judgment_events(t):
                writer.emit(run_id, judged, trial_id=trial_id, attempt=ATTEMPT, judgment=meta)
        writer.emit(
            run_id,
            RunFinished(run_id=run_id, status="finished", message=f"imported from {imported.source_format}"),
        )
    finally:
        await writer.close()
    return len(trajectories)


@dataclass(frozen=True)
class SavedImport:
    out_dir: Path
    scenarios: int
    arms: list[str]
    db: Path | None
    trials: int
    judgments: int


def save_import(imported: ImportedSuite, out_dir: Path, *, force: bool = False) -> SavedImport:
    """Write the suite (and ``imported.db`` when there are trajectories) to ``out_dir``, all or nothing.

    Synchronous (it runs its own event loop for the database): call it from plain code.
    """
    final = out_dir.absolute()
    trials = 0
    with staged_dir(final, force=force) as stage:
        write_suite_files(imported, stage)
        if imported.trajectories:
            trials = asyncio.run(write_imported_run(stage / DB_NAME, imported, final))
    return SavedImport(
        out_dir=final,
        scenarios=len(imported.scenarios),
        arms=imported.arms,
        db=final / DB_NAME if imported.trajectories else None,
        trials=trials,
        judgments=sum(len(t.judgments) for t in imported.trajectories),
    )


__all__ = [
    "DB_NAME",
    "SavedImport",
    "estimate_tokens",
    "judgment_events",
    "run_config",
    "save_import",
    "tool_match_scores",
    "trajectory_events",
    "write_imported_run",
]
