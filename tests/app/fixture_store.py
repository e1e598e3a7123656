"""A small, fixed run database for console tests (written with the real StoreWriter).

Six trials over three scenarios and two arms cover every status; tool output, answers and
error text carry markup and escape-sequence injections; timestamps are pinned afterwards so
what the screens show does not depend on the clock.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from proctor.scenarios.repo import materialize
from proctor.store.events import (
    AssistantMessage,
    ErrorEvent,
    Event,
    FinalAnswer,
    Judged,
    ModelRequest,
    ModelResponse,
    RunStarted,
    Scored,
    ToolCall,
    ToolCallRequest,
    ToolResult,
    TrialFinished,
    TrialStarted,
    Usage,
)
from proctor.store.write.writer import StoreWriter, TrialRow

RUN = "run-fixture"
MODEL = "offline:default"
CLICK = "[@click=app.quit]x[/]"
CLOSE = "x [/] y"
OSC = "\x1b]0;pwned-title\x07"
CSI = "\x1b[2J\x1b[31m"
BIDI = "\u202eevil"
INJECTIONS = f"{CLICK} | {CLOSE} | {OSC}title-gone | {CSI}red | {BIDI}"
BIG_LINES = 5000

REPO_FILE = "\n".join(
    ["class Job:", '    """A unit of work."""', ""]
    + [f"    def step_{i}(self) -> int:\n        return {i}" for i in range(1, 15)]
)


@dataclass(frozen=True)
class Fixture:
    db: Path
    repo: Path
    commit: str
    passed_baseline: int = 1
    passed_mcp: int = 2
    failed: int = 3
    errored: int = 4
    running: int = 5
    queued: int = 6


def make_repo(root: Path) -> tuple[Path, str]:
    src = root / "repo-src"
    (src / "tinyq").mkdir(parents=True, exist_ok=True)
    (src / "tinyq" / "job.py").write_text(REPO_FILE + "\n")
    dest = root / "repo"
    return dest, materialize(src, dest)


def _response(turn: int, text: str, calls: list[ToolCallRequest], tool_io: int = 0) -> ModelResponse:
    return ModelResponse(
        turn=turn,
        model=MODEL,
        text=text,
        tool_calls=calls,
        stop_reason="tool_use" if calls else "end_turn",
        usage=Usage(input_tokens=100 + tool_io, output_tokens=20, estimated=True),
        tool_io_tokens=tool_io,
        cost_usd=0.0,
        latency_s=0.5,
    )


def _finished(answer: str, status: str = "finished", error: str = "") -> TrialFinished:
    return TrialFinished(
        status=status,  # type: ignore[arg-type]
        stop="answer" if status == "finished" else "error",
        final_answer=answer,
        tool_calls=1,
        usage=Usage(input_tokens=300, output_tokens=40, estimated=True),
        cost_usd=0.0,
        wall_s=2.5,
        error=error,
    )


def _grounding(repo: Path, commit: str, good: bool) -> Scored:
    citations = [
        {"raw": "tinyq/job.py:4", "path": "tinyq/job.py", "line": 4, "line_end": None, "symbol": None,
         "status": "grounded", "reason": "line 4 exists"},
        {"raw": "tinyq/job.py:999", "path": "tinyq/job.py", "line": 999, "line_end": None, "symbol": None,
         "status": "hallucinated", "reason": "past end of file"},
        {"raw": "tinyq/missing.py:3", "path": "tinyq/missing.py", "line": 3, "line_end": None, "symbol": None,
         "status": "unresolved", "reason": "not in commit"},
    ]  # fmt: skip
    chosen = citations[:1] if good else citations
    counts = {
        s: sum(1 for c in chosen if c["status"] == s) for s in ("grounded", "unresolved", "hallucinated")
    }
    return Scored(
        name="grounding",
        value=counts["grounded"] / len(chosen),
        details={"counts": counts, "citations": chosen, "commit": commit, "repo": str(repo)},
    )


def _verdict(score: float, spread: float) -> dict[str, object]:
    return {
        "score": score,
        "criteria": [
            {"name": "correctness", "score": score, "rationale": f"cites the job class {CLICK}"},
            {"name": "completeness", "score": min(1.0, score + spread), "rationale": "covers steps"},
        ],
    }


async def build(root: Path) -> Fixture:
    repo, commit = make_repo(root)
    db = root / "run.db"
    w = await StoreWriter.open(db, flush_interval_s=0.001)
    await w.create_run(RUN, "demo-suite", {"held_out": ["s3-anchor"], "variance_floor": 0.05})
    rows = [
        TrialRow("s1-intro", "baseline", MODEL, 0, 1),
        TrialRow("s1-intro", "mcp-good", MODEL, 0, 2),
        TrialRow("s2-search", "baseline", MODEL, 0, 3),
        TrialRow("s2-search", "mcp-good", MODEL, 0, 4),
        TrialRow("s3-anchor", "baseline", MODEL, 0, 5),
        TrialRow("s3-anchor", "mcp-good", MODEL, 0, 6),
    ]
    await w.add_trials(RUN, rows)
    w.emit(RUN, RunStarted(run_id=RUN, suite="demo-suite", config={}, trials=6))
    answers = {
        1: "The job class is at tinyq/job.py:4 as expected.",
        2: "See tinyq/job.py:4 and tinyq/job.py:999 and tinyq/missing.py:3 for details.",
    }
    for tid, row in enumerate(rows[:5], start=1):
        emit = _emitter(w, tid)
        emit(TrialStarted(scenario=row.scenario, arm=row.arm, model=MODEL, epoch=0, seed=row.seed, attempt=1))
        emit(ModelRequest(turn=1, messages=1, tools=3))
        if tid == 5:
            continue
        call = ToolCallRequest(call_id=f"c{tid}", name="grep", arguments={"pattern": "Job"})
        emit(_response(1, "Let me look for the job class.", [call]))
        emit(ToolCall(call_id=f"c{tid}", server=row.arm, tool="grep", arguments={"pattern": "Job"}))
        content = f"tinyq/job.py:1:class Job:\n{INJECTIONS}\n" if tid != 2 else "tinyq/job.py:1:class Job:\n"
        if tid == 1:
            content += "\n".join(f"filler line {i}" for i in range(BIG_LINES))
        emit(
            ToolResult(
                call_id=f"c{tid}",
                server=row.arm,
                tool="grep",
                content=content,
                is_error=tid == 3,
                error_type="ToolError" if tid == 3 else "",
                latency_s=0.012,
            )
        )
        if tid == 4:
            emit(ErrorEvent(where="agent", error_type="RuntimeError", message=f"boom {CLICK}", fatal=True))
            emit(_finished("", status="error", error=f"agent crashed {CLOSE}"))
            continue
        answer = answers.get(tid, f"I could not find it. {INJECTIONS}")
        emit(_response(2, answer, [], tool_io=50))
        emit(AssistantMessage(turn=2, text=answer))
        emit(FinalAnswer(text=answer))
        emit(_finished(answer))
        emit(Scored(name="passed", value=0.0 if tid == 3 else 1.0, details={}))
        emit(Scored(name="fairness", value=0.5 + 0.1 * tid, details={"components": {}, "weights": {}}))
        emit(
            Scored(
                name="adoption",
                value=None if row.arm == "baseline" else 0.8,
                details={"na": "baseline"} if row.arm == "baseline" else {},
            )
        )
        if tid in (1, 2):
            emit(_grounding(repo, commit, good=tid == 1))
        if tid == 3:
            emit(
                Scored(
                    name="failure_mode",
                    value=None,
                    details={
                        "mode": "tool_misuse",
                        "evidence": f"grep failed {CLICK}",
                        "first_failing_call_id": "c3",
                    },
                )
            )
        for pass_no, spread in ((1, 0.0), (2, 0.2)):
            emit(
                Judged(
                    pass_no=pass_no, judge="openai:gpt-4o-mini", verdict=_verdict(0.6 + 0.1 * pass_no, spread)
                )
            )
    await w.close()
    _pin_times(db)
    return Fixture(db, repo, commit)


def _emitter(w: StoreWriter, tid: int) -> Callable[[Event], None]:
    def emit(event: Event) -> None:
        w.emit(RUN, event, trial_id=tid, attempt=1)

    return emit


def _pin_times(db: Path) -> None:
    conn = sqlite3.connect(db)
    with conn:
        for tid in range(1, 7):
            started = 1_700_000_000.0 + tid * 10 if tid <= 5 else None
            finished = started + 5 if started is not None and tid <= 4 else None
            conn.execute(
                "UPDATE trials SET started_at = ?, finished_at = ? WHERE id = ?", (started, finished, tid)
            )
        conn.execute("UPDATE runs SET created_at = 1700000000, started_at = 1700000000")
    conn.close()


__all__ = ["BIG_LINES", "CLICK", "CLOSE", "INJECTIONS", "MODEL", "RUN", "Fixture", "build"]
