"""The bundled demo tells its story: a server that helps, one that hurts, distractors that cost.

One run of the whole demo (all arms, the demo's own seeds, the offline agent and judge) is shared
by the tests of this module; it is deterministic, so the numbers below are the demo's headline.
"""

from __future__ import annotations

import asyncio
import statistics
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.session import run_suite
from proctor.scenarios.demo import SUITE_DIR
from proctor.scenarios.loader import load_suite
from proctor.store.read.reader import StoreReader
from proctor.store.records import JudgmentRecord, ScoreRecord, TrialRecord
from proctor.store.scores import (
    ADOPTION_BASELINE,
    AdoptionDetails,
    FailureModeDetails,
    GroundingDetails,
    PassedDetails,
    ScoreName,
    details_model,
)

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class DemoRun:
    trials: list[TrialRecord]
    scores: list[ScoreRecord]
    judgments: list[JudgmentRecord]
    tools_called: dict[tuple[str, str], set[str]]

    def per_arm(self, name: ScoreName) -> dict[str, list[float]]:
        arm_of = {t.id: t.arm for t in self.trials}
        out: dict[str, list[float]] = defaultdict(list)
        for s in self.scores:
            if s.name == name and s.value is not None:
                out[arm_of[s.trial_id]].append(s.value)
        return out

    def tokens(self) -> dict[str, float]:
        by_arm: dict[str, list[int]] = defaultdict(list)
        for t in self.trials:
            by_arm[t.arm].append((t.input_tokens or 0) + (t.output_tokens or 0))
        return {arm: statistics.fmean(v) for arm, v in by_arm.items()}


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoRun]:
    db: Path = tmp_path_factory.mktemp("demo") / "demo.db"
    status = asyncio.run(run_suite(load_suite(SUITE_DIR), RunOptions(db=db)))
    assert status == "finished"
    with StoreReader(db) as r:
        trials = r.trials()
        tools: dict[tuple[str, str], set[str]] = defaultdict(set)
        for t in trials:
            for e in r.trial_events(t.id):
                if e.kind == "tool_call":
                    tool = str(e.event.tool)  # type: ignore[union-attr]
                    args = e.event.arguments  # type: ignore[union-attr]
                    tools[(t.scenario, t.arm)].add(str(args.get("tool", tool)) if tool == "execute" else tool)
        yield DemoRun(trials, r.scores(), r.judgments(), tools)


def test_demo_headline_helps_hurts_and_costs(demo: DemoRun) -> None:
    """codeintel clearly beats the baseline; the stale index's hallucinated citations cost it
    passes; distractors cost tokens at about the same quality."""
    passed = {arm: statistics.fmean(v) for arm, v in demo.per_arm(ScoreName.PASSED).items()}
    assert passed["codeintel"] >= 0.7 and passed["baseline"] <= 0.3, passed
    assert passed["codeintel_stale"] <= passed["codeintel"] - 0.4, passed
    assert abs(passed["codeintel+distractors"] - passed["codeintel"]) <= 0.1, passed
    tokens = demo.tokens()
    assert tokens["codeintel+distractors"] >= 1.2 * tokens["codeintel"], tokens
    # The stale arm fails on grounding, and its passed details say so.
    stale = {t.id for t in demo.trials if t.arm == "codeintel_stale"}
    ungrounded = [
        s.parsed(PassedDetails)
        for s in demo.scores
        if s.name == ScoreName.PASSED and s.trial_id in stale and s.parsed(PassedDetails).ungrounded
    ]
    assert len(ungrounded) >= 4 and all("pass_requires_grounding" in d.rule for d in ungrounded)


def test_demo_scores_separate_good_stale_and_baseline(demo: DemoRun) -> None:
    arm_of = {t.id: t.arm for t in demo.trials}
    mean = {arm: statistics.fmean(v) for arm, v in demo.per_arm(ScoreName.FAIRNESS).items()}
    assert len({round(v, 3) for v in mean.values()}) == 4, mean
    assert mean["codeintel"] > mean["baseline"] > mean["codeintel_stale"], mean
    hallucinated: dict[str, int] = defaultdict(int)
    for s in demo.scores:
        if s.name == ScoreName.GROUNDING:
            hallucinated[arm_of[s.trial_id]] += s.parsed(GroundingDetails).counts.hallucinated
    assert hallucinated["codeintel_stale"] > 10 and hallucinated["codeintel"] == 0
    assert len(demo.judgments) == 2 * len(arm_of)
    assert all(j.judge == "offline:lexical" and j.prompt_version and j.rubric_hash for j in demo.judgments)
    modes = [
        s.parsed(FailureModeDetails).mode
        for s in demo.scores
        if s.name == ScoreName.FAILURE_MODE and arm_of[s.trial_id] == "baseline"
    ]
    assert modes and "wrong_tool" not in modes, modes  # the baseline does not offer the gold tools
    adoption = {s.trial_id: s for s in demo.scores if s.name == ScoreName.ADOPTION}
    for tid, arm in arm_of.items():
        if arm == "baseline":
            assert (
                adoption[tid].value is None and adoption[tid].parsed(AdoptionDetails).na == ADOPTION_BASELINE
            )
        else:
            assert adoption[tid].value is not None
    # Every score of a real run fits its score's details model, and the run writes each kind.
    for s in demo.scores:
        s.parsed(details_model(s.name))
    assert {s.name for s in demo.scores} == set(ScoreName) - {ScoreName.KEY_POINTS}


GOLD_TOOLS = {
    "retry-delay-cap": {"search_symbols", "find_definition"},
    "backoff-vs-jitter": {"find_definition"},
    "token-bucket-refill": {"search_symbols", "find_definition"},
    "config-env-overrides": {"find_definition"},
    "sqlite-claim": {"find_definition"},
    "backoff-callers": {"find_references"},
    "worker-pool-lifecycle": {"search_symbols", "find_definition"},
}


def test_gold_tools_match_the_demo_scenarios() -> None:
    loaded = load_suite(SUITE_DIR)
    gold = {
        s.id: {g.tool for step in s.gold_tool_calls for g in step}
        for s in loaded.scenarios
        if s.gold_tool_calls
    }
    assert gold == GOLD_TOOLS


@pytest.mark.parametrize("scenario", sorted(GOLD_TOOLS))
@pytest.mark.parametrize("arm", ["codeintel", "codeintel+distractors"])
def test_every_demo_scenario_uses_its_gold_tools(demo: DemoRun, scenario: str, arm: str) -> None:
    """The offline agent picks the right code-intelligence tool for each question."""
    assert GOLD_TOOLS[scenario] <= demo.tools_called[(scenario, arm)], demo.tools_called[(scenario, arm)]
