"""A judge whose every pass fails is never silent: the scores, the report, the gate say so.

The judge is the real LlmJudge over the real anthropic SDK; every pass is answered with the 400
claude-opus-4-7 gave main's judge, "`temperature` is deprecated for this model."
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from proctor.engine.judges.llm import LlmJudge
from proctor.engine.providers.anthropic_provider import AnthropicProvider
from proctor.engine.providers.prices import PriceTable
from proctor.engine.reports.gate import decide, load_fairness
from proctor.engine.reports.report import build_report
from proctor.store.read.reader import StoreReader
from proctor.store.scores import FairnessDetails, LlmQualityDetails, PassedDetails, ScoreName, parse_details
from tests.engine.judging_fixture import build_run
from tests.fakes import fake_anthropic as fa

TLS = ssl.create_default_context()
REFUSED = "judge call failed: anthropic HTTP 400 (invalid_request_error): `temperature` is deprecated for this model."


@pytest.fixture
def anthropic() -> Iterator[fa.FakeAnthropic]:
    with fa.FakeAnthropic() as fake:
        yield fake


def refused_judge(fake: fa.FakeAnthropic, passes: int) -> LlmJudge:
    """A judge whose every pass the API refuses, with the text it refused main's judge with."""
    fake.enqueue(
        *[fa.error_reply(400, "invalid_request_error", "`temperature` is deprecated for this model.")]
        * passes
    )
    provider = AnthropicProvider(
        "claude-opus-4-7",
        api_key="sk-ant-api03-FAILS-0123456789abcdef",
        base_url=fake.base_url,
        prices=PriceTable(),
        max_attempts=1,
        deadline_s=10.0,
        http_client=httpx2.AsyncClient(verify=TLS),
    )
    return LlmJudge(provider, temperature=0.0)


async def test_every_failed_pass_leaves_no_quality_no_fairness_and_no_verdict_and_says_why(
    tmp_path: Path, anthropic: fa.FakeAnthropic
) -> None:
    judge = refused_judge(anthropic, 4 * 2 * 2)  # 4 scenarios x 2 arms, 2 passes each
    fx = await build_run(tmp_path, judges=[judge], epochs=1)
    await judge.aclose()
    with StoreReader(fx.db) as reader:
        scores = {(s.trial_id, s.name): s for s in reader.scores()}
        trial_ids = [t.id for t in reader.trials()]
    for trial_id in trial_ids:
        quality = scores[(trial_id, ScoreName.LLM_QUALITY)]
        details = parse_details(ScoreName.LLM_QUALITY, quality.details, LlmQualityDetails)
        assert quality.value is None
        assert details.na == f"not judged (judge failed on 2 of 2 passes: {REFUSED})"
        assert (details.failed_passes, details.judge_errors) == (2, [REFUSED])
        fairness = scores[(trial_id, ScoreName.FAIRNESS)]
        assert fairness.value is None  # not recomputed from keywords, grounding and efficiency
        fair = parse_details(ScoreName.FAIRNESS, fairness.details, FairnessDetails)
        assert fair.na is not None and fair.na.startswith("no fairness: llm_quality not judged")
        passed = parse_details(ScoreName.PASSED, scores[(trial_id, ScoreName.PASSED)].details, PassedDetails)
        assert (
            passed.judge_failed
            and passed.rule == f"no judge verdict: judge failed on 2 of 2 passes: {REFUSED}"
        )

    notes = build_report(fx.db)["notes"]
    assert f"4 mcp trial(s) were not judged (judge failed on 2 of 2 passes: {REFUSED})" in "\n".join(notes)

    from proctor.engine.reports.gate import unjudged_trials

    unjudged = unjudged_trials(fx.db)
    assert set(unjudged) == {"baseline", "mcp"}
    samples = load_fairness(fx.db)
    assert samples == []  # no fairness at all: the gate must not read that as a tie or a pass
    with pytest.raises(ValueError, match="no scored trials") as caught:
        decide(samples, baseline="baseline", min_delta=0.0, unjudged=unjudged)
    assert f"trials not judged: 4 baseline trial(s) (judge failed on 2 of 2 passes: {REFUSED})" in str(
        caught.value
    )


def test_the_gate_fails_an_arm_with_unjudged_trials_even_when_its_other_pairs_win() -> None:
    from proctor.engine.reports.gate import FairnessSample

    samples = [
        FairnessSample("s1", "baseline", "m", 0, 0.2),
        FairnessSample("s1", "mcp", "m", 0, 0.9),
    ]
    why = "judge failed on 2 of 2 passes: refused"
    result = decide(samples, baseline="baseline", min_delta=0.0, unjudged={"mcp": [why]})
    (arm,) = result.arms
    assert not arm.passed and f"1 mcp trial(s) not judged ({why})" in arm.reason
