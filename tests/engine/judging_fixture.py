"""A small suite folder and a scored run database for judge, anchor and report tests.

Trials are written with the real StoreWriter and scored with the real scoring path
(``score_trial``), so what re-judging, anchors and reports read is what a live run writes.
Answer quality (how many of a scenario's three facts the answer states) varies with scenario,
arm and epoch, so scores are spread out and rank correlations are defined.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from proctor.engine.grading.evaluation import TrialInput
from proctor.engine.grading.score_trial import score_trial, tool_schemas
from proctor.engine.judges.base import Judge, JudgeOutcome, JudgeSubject, Verdict
from proctor.engine.judges.offline import OfflineJudge
from proctor.scenarios.loader import LoadedSuite, load_suite
from proctor.store.events import (
    AssistantMessage,
    Event,
    FinalAnswer,
    ListedTool,
    ModelRequest,
    ModelResponse,
    RunFinished,
    RunStarted,
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
from proctor.store.write.writer import StoreWriter, TrialRow

RUN_ID = "fixture-run"
SCENARIOS = ("s1", "s2", "s3", "s4")
HELD_OUT = ("s3", "s4")
ARMS = ("baseline", "mcp")
MODEL = "offline:default"


def facts(scenario: str) -> list[str]:
    return [f"alpha_{scenario}", f"beta_{scenario}", f"gamma_{scenario}"]


def scenario_doc(scenario: str, rubric_terms: Sequence[str] | None = None) -> dict[str, object]:
    a, b, c = facts(scenario)
    terms = list(rubric_terms) if rubric_terms is not None else [a, b, c]
    return {
        "id": scenario,
        "prompt": f"What computes the {scenario} value, where does it live, and what does it call?",
        "claims": [f"The value is computed by {a}.", f"It lives in {b}.", f"It calls {c}."],
        "keywords": {"required": [a, b], "bonus": [c]},
        "rubric": [{"name": f"names-{t}", "question": f"Does the answer name {t}?"} for t in terms],
        "held_out": scenario in HELD_OUT,
        "human_labels": {f"mcp/{MODEL}": True, f"baseline/{MODEL}/0": False} if scenario == "s1" else {},
    }


def write_suite(
    root: Path,
    *,
    panel: Sequence[str] = (),
    epochs: int = 2,
    settings: Mapping[str, Mapping[str, object]] = {},
) -> Path:
    """``settings`` adds fields to the suite's sections (``{"judge": {"sd": "population"}}``)."""
    (root / "scenarios").mkdir(parents=True, exist_ok=True)
    judge: dict[str, object] = {"model": "offline:lexical", "passes": 2} | dict(settings.get("judge", {}))
    if panel:
        judge["panel"] = list(panel)
    suite = {
        "name": "judging-fixture",
        "mcpServers": {"dummy": {"command": "true", "description": "never started by these tests"}},
        "arms": {"baseline": {"baseline": True}, "mcp": {"servers": ["dummy"]}},
        "models": [MODEL],
        "epochs": epochs,
        "judge": judge,
        "scoring": {"variance_floor": 0.05} | dict(settings.get("scoring", {})),
    }
    (root / "suite.yaml").write_text("# fixture suite\n" + yaml.safe_dump(suite, sort_keys=False))
    for s in SCENARIOS:
        (root / "scenarios" / f"{s}.yaml").write_text(yaml.safe_dump(scenario_doc(s), sort_keys=False))
    return root


def quality(scenario: str, arm: str, epoch: int) -> int:
    return (SCENARIOS.index(scenario) + 2 * ARMS.index(arm) + epoch) % 4


def answer(scenario: str, q: int) -> str:
    if q == 0:
        return f"Not sure; maybe delta_{scenario} is involved."
    return "Found it: " + ", ".join(facts(scenario)[:q]) + "."


def trial_events(scenario: str, arm: str, epoch: int, seed: int) -> list[Event]:
    text = answer(scenario, quality(scenario, arm, epoch))
    events: list[Event] = [
        TrialStarted(scenario=scenario, arm=arm, model=MODEL, epoch=epoch, seed=seed, attempt=1),
    ]
    calls: list[ToolCallRequest] = []
    if arm == "mcp":
        events.append(
            ToolsListed(
                tools=[
                    ListedTool(
                        name="lookup", server="dummy", description="look up", input_schema={"type": "object"}
                    )
                ]
            )
        )
        calls = [ToolCallRequest(call_id="c1", name="lookup", arguments={"q": scenario})]
    events.append(ModelRequest(turn=1, messages=1, tools=len(calls)))
    events.append(
        ModelResponse(
            turn=1,
            model=MODEL,
            text="",
            tool_calls=calls,
            stop_reason="tool_use" if calls else "end_turn",
            usage=Usage(input_tokens=800, output_tokens=50, estimated=True),
            tool_io_tokens=0,
            cost_usd=0.0,
            latency_s=0.01,
        )
    )
    if calls:
        events.append(ToolCall(call_id="c1", server="dummy", tool="lookup", arguments={"q": scenario}))
        events.append(
            ToolResult(
                call_id="c1", server="dummy", tool="lookup", content=text, is_error=False, latency_s=0.01
            )
        )
        events.append(
            ModelResponse(
                turn=2,
                model=MODEL,
                text=text,
                tool_calls=[],
                stop_reason="end_turn",
                usage=Usage(input_tokens=1000, output_tokens=60, estimated=True),
                tool_io_tokens=300,
                cost_usd=0.0,
                latency_s=0.01,
            )
        )
    events.append(AssistantMessage(turn=len(calls) + 1, text=text))
    events.append(FinalAnswer(text=text))
    usage = Usage(input_tokens=1800 if calls else 800, output_tokens=110 if calls else 50, estimated=True)
    events.append(
        TrialFinished(
            status="finished",
            stop="answer",
            final_answer=text,
            tool_calls=len(calls),
            usage=usage,
            cost_usd=0.0,
            wall_s=1.0 + quality(scenario, arm, epoch),
        )
    )
    return events


class NoisyJudge:
    """A deterministic judge whose score moves with the pass number (for variance tests)."""

    def __init__(self, judge_id: str = "test:noisy", step: float = 0.1) -> None:
        self.judge_id = judge_id
        self.step = step
        self.calls: list[tuple[str, int]] = []

    async def judge(self, subject: JudgeSubject, pass_no: int) -> JudgeOutcome:
        self.calls.append((subject.scenario.id, pass_no))
        score = min(1.0, 0.2 + self.step * pass_no)
        verdict = Verdict(score=score, criteria=[], rationale=f"pass {pass_no}")
        return JudgeOutcome(verdict=verdict, error="", meta=JudgmentMeta(source=f"test:{self.judge_id}"))


class PricedJudge:
    """The offline judge's verdicts, reported as if an LLM had spent tokens and money on them (a
    little more each pass), so judge usage and cost are recorded."""

    judge_id = "anthropic:claude-test"

    async def judge(self, subject: JudgeSubject, pass_no: int) -> JudgeOutcome:
        verdict = OfflineJudge().verdict(subject)
        usage = Usage(input_tokens=100 + pass_no, output_tokens=20)
        return JudgeOutcome(
            verdict, "", JudgmentMeta(source="proctor:test"), usage=usage, cost_usd=0.001 * pass_no
        )


@dataclass(frozen=True)
class Fixture:
    suite_dir: Path
    db: Path
    loaded: LoadedSuite


async def build_run(
    tmp: Path,
    *,
    judges: Sequence[Judge] | None = None,
    epochs: int = 2,
    panel: Sequence[str] = (),
    settings: Mapping[str, Mapping[str, object]] = {},
) -> Fixture:
    """Write the suite and a finished, scored run of every trial to ``tmp/run.db``."""
    suite_dir = write_suite(tmp / "suite", panel=panel, epochs=epochs, settings=settings)
    loaded = load_suite(suite_dir)
    db = tmp / "run.db"
    active: list[Judge] = list(judges) if judges is not None else [OfflineJudge()]
    config = {
        "suite": loaded.suite.name,
        "suite_dir": str(suite_dir),
        "suite_hash": loaded.content_hash,
        "models": [MODEL],
        "arms": list(ARMS),
        "epochs": epochs,
        "base_seed": 0,
        "held_out": list(HELD_OUT),
        "scoring": loaded.suite.scoring.model_dump(),
        "judge": loaded.suite.judge.model_dump(),
    }
    rows = [TrialRow(s, a, MODEL, e, 100 + e) for e in range(epochs) for s in SCENARIOS for a in ARMS]
    async with await StoreWriter.open(db) as writer:
        await writer.create_run(RUN_ID, loaded.suite.name, config)
        await writer.add_trials(RUN_ID, rows)
        writer.emit(
            RUN_ID, RunStarted(run_id=RUN_ID, suite=loaded.suite.name, config=config, trials=len(rows))
        )
        await writer.flush()
        with StoreReader(db) as reader:
            ids = {t.key: t.id for t in reader.trials()}
        for row in rows:
            trial_id = ids[(row.scenario, row.arm, row.model, row.epoch)]
            events = trial_events(row.scenario, row.arm, row.epoch, row.seed)

            def emit(event: Event, meta: JudgmentMeta | None = None, trial_id: int = trial_id) -> None:
                writer.emit(RUN_ID, event, trial_id=trial_id, attempt=1, judgment=meta)

            for ev in events:
                emit(ev)
            item = TrialInput(
                scenario=loaded.scenario(row.scenario),
                arm_name=row.arm,
                arm=loaded.suite.arms[row.arm],
                model=MODEL,
                events=events,
                repo=None,
                scoring=loaded.suite.scoring,
                tool_schemas=tool_schemas(events),
            )
            await score_trial(item, active, [1, 2], emit)
        writer.emit(RUN_ID, RunFinished(run_id=RUN_ID, status="finished"))
    return Fixture(suite_dir, db, loaded)
