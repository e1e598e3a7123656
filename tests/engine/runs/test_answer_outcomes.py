"""A truncated or refused answer is its own outcome: recorded, never judged as complete.

The model's replies are recorded traffic (tests/fakes/cassettes/) served to the real SDKs.
"""

from __future__ import annotations

from typing import Any

from proctor.engine.grading.evaluation import (
    TrialInput,
    deterministic_scores,
    digest_of,
    is_judged,
    layer_scores,
)
from proctor.engine.judges.base import Verdict
from proctor.engine.providers.prices import PriceTable
from proctor.engine.runs.agent_loop import run_agent
from proctor.engine.tools.toolbox import EmptyToolbox
from proctor.scenarios.schema import ArmSpec, Limits, Scenario, Scoring
from proctor.store.events import (
    ErrorEvent,
    Event,
    ModelResponse,
    TrialFinished,
    Usage,
)
from proctor.store.scores import LlmQualityDetails, PassedDetails, ScoreName
from tests.engine.providers.test_recorded_answers import provider
from tests.fakes.replay_server import Api, ReplayServer

SCENARIO = Scenario(id="names", prompt="Two names for a pet pelican", claims=["names two pelicans"])


async def play(name: str, api: Api, model: str, prices: PriceTable | None = None, **kw: Any) -> list[Event]:
    events: list[Event] = []
    with ReplayServer(name, api) as server:
        made = provider(server, api, model, **kw)
        result = await run_agent(
            model_id=f"{api}:{model}",
            session=made.session(1),
            toolbox=EmptyToolbox(),
            prompts=["Two names for a pet pelican, be brief"],
            limits=Limits(),
            prices=prices or PriceTable(),
            emit=events.append,
        )
        await made.aclose()
    events.append(
        TrialFinished(
            status="finished" if result.status == "finished" else "error",
            stop=result.stop,
            final_answer=result.final_answer,
            tool_calls=result.tool_calls,
            usage=result.usage,
            cost_usd=result.cost_usd,
            wall_s=1.0,
            error=result.error,
        )
    )
    return events


def scores(events: list[Event]) -> dict[ScoreName, Any]:
    trial = TrialInput(SCENARIO, "baseline", ArmSpec(baseline=True), "m", events, None, Scoring(), {})
    digest = digest_of(events)
    det = deterministic_scores(trial, digest)
    judged = [Verdict(score=0.27)] if is_judged(trial) else []  # main judged it: "failed 0.27"
    return layer_scores(trial, digest, det, judged)


async def test_a_reply_cut_at_max_tokens_ends_the_trial_truncated_and_is_not_judged() -> None:
    events = await play("anthropic_max_tokens", "anthropic", "claude-sonnet-4-5")
    finished = events[-1]
    assert isinstance(finished, TrialFinished)
    assert (finished.status, finished.stop, finished.final_answer) == (
        "finished",
        "truncated",
        "- Captain\n- Scoop",
    )
    layers = scores(events)
    quality = layers[ScoreName.LLM_QUALITY].parsed(LlmQualityDetails)
    assert layers[ScoreName.LLM_QUALITY].value is None and quality.na is not None
    assert quality.na.startswith("not judged: truncated: the answer was cut at the model's output limit")
    assert layers[ScoreName.FAIRNESS].value is None
    passed = layers[ScoreName.PASSED].parsed(PassedDetails)
    assert layers[ScoreName.PASSED].value is None and passed.outcome == "truncated"


async def test_a_refusal_ends_the_trial_refused_and_is_not_judged() -> None:
    events = await play("anthropic_refusal", "anthropic", "claude-fable-5")
    finished = events[-1]
    assert isinstance(finished, TrialFinished) and finished.stop == "refused"
    passed = scores(events)[ScoreName.PASSED].parsed(PassedDetails)
    assert passed.outcome == "refused" and passed.rule == "not judged: refused: the model declined to answer"


async def test_an_openai_compatible_length_stop_is_truncated_too() -> None:
    events = await play("openrouter_length_stop", "openai", "minimax/minimax-m2:free")
    assert isinstance(events[-1], TrialFinished) and events[-1].stop == "truncated"


async def test_reasoning_is_its_own_event_with_its_tokens_and_never_in_the_answer() -> None:
    from proctor.store.events import ModelReasoning

    events = await play("xai_reasoning_tool_call", "openai", "grok-3-mini")
    (thought,) = [e for e in events if isinstance(e, ModelReasoning)]
    assert thought.source == "reasoning_content" and thought.tokens == 227 and thought.text
    digest = digest_of(events)
    assert thought.text not in digest.answer_text and thought.text not in digest.audit_text


async def test_a_reported_cost_wins_over_the_price_table() -> None:
    events = await play("xai_reasoning_tool_call", "openai", "grok-3-mini")
    (response,) = [e for e in events if isinstance(e, ModelResponse)]
    assert response.cost_reported and response.cost_usd == 1497500 * 1e-10


async def test_a_stream_without_finish_reason_is_one_billed_answer_with_the_cost_it_reported() -> None:
    events = await play("openrouter_no_finish_reason", "openai", "anthropic/claude-sonnet-4.5")
    finished = events[-1]
    assert isinstance(finished, TrialFinished)
    assert (finished.status, finished.stop, finished.final_answer) == ("finished", "answer", "2 + 2 = 4")
    assert finished.cost_usd is not None and abs(finished.cost_usd - 0.000669) < 1e-12


async def test_an_unpriced_model_whose_turn_failed_costs_n_a_not_zero() -> None:
    from tests.fakes import fake_openai as fo

    events: list[Event] = []
    with fo.FakeOpenAI() as fake:
        fake.enqueue(*[fo.truncated_reply() for _ in range(2)])
        made = provider(fake, "openai", "moonshotai/kimi-k2", max_attempts=2)
        result = await run_agent(
            model_id="openai:moonshotai/kimi-k2",
            session=made.session(1),
            toolbox=EmptyToolbox(),
            prompts=["q"],
            limits=Limits(),
            prices=PriceTable(),
            emit=events.append,
        )
        await made.aclose()
    assert result.status == "error" and any(isinstance(e, ErrorEvent) for e in events)
    assert result.cost_usd is None  # main: $0.0000
    assert result.usage.output_tokens > 0 and result.usage.estimated  # both cut attempts, counted
    assert isinstance(result.usage, Usage)
