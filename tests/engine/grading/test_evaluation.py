from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from proctor.engine.grading.evaluation import (
    TrialInput,
    deterministic_scores,
    digest_of,
    is_judged,
    layer_scores,
)
from proctor.engine.grading.gold_calls import gold_for_arm
from proctor.engine.grading.score_trial import score_trial
from proctor.engine.judges.base import NOTHING_TO_MATCH, ClaimJudgment, JudgeOutcome, JudgeSubject, Verdict
from proctor.engine.judges.offline import OfflineJudge
from proctor.scenarios.repo import PinnedRepo, materialize
from proctor.scenarios.schema import ArmSpec, GoldCall, Keywords, Scenario, Scoring
from proctor.store.events import (
    AssistantMessage,
    Event,
    FinalAnswer,
    Judged,
    ModelResponse,
    Scored,
    ToolCall,
    ToolCallRequest,
    ToolResult,
    TrialFinished,
    TrialStarted,
    Usage,
)
from proctor.store.records import JudgmentMeta
from proctor.store.scores import PassedDetails, ScoreName
from proctor.store.verdict_reason import verdict_reason

SCENARIO = Scenario(
    id="s",
    prompt="Where is `compute_backoff`?",
    claims=["compute_backoff is in retry.py"],
    keywords={"required": ["compute_backoff"], "bonus": ["MAX_DELAY"]},  # type: ignore[arg-type]
    gold_tool_calls=[
        [GoldCall(tool="find_definition", server="codeintel", arguments={"symbol": "compute_backoff"})]
    ],
)
SCHEMAS = {
    "find_definition": {
        "type": "object",
        "properties": {"symbol": {"type": "string"}},
        "required": ["symbol"],
    }
}


def _events(routed: bool) -> list[Event]:
    if routed:
        calls = [
            ToolCall(call_id="r", server="proctor-router", tool="route", arguments={"query": "definition"}),
            ToolResult(
                call_id="r",
                server="proctor-router",
                tool="route",
                content="[]",
                is_error=False,
                latency_s=0.0,
            ),
        ]
        req = [
            ToolCallRequest(
                call_id="c",
                name="execute",
                arguments={"tool": "find_definition", "arguments": {"symbol": "compute_backoff"}},
            )
        ]
        call = ToolCall(call_id="c", server="proctor-router", tool="execute", arguments=req[0].arguments)
    else:
        calls = []
        req = [ToolCallRequest(call_id="c", name="find_definition", arguments={"symbol": "compute_backoff"})]
        call = ToolCall(
            call_id="c", server="codeintel_v2", tool="find_definition", arguments=req[0].arguments
        )
    return [
        TrialStarted(scenario="s", arm="a", model="m", epoch=0, seed=0, attempt=1),
        *calls,
        ModelResponse(
            turn=1,
            model="m",
            text="",
            tool_calls=req,
            stop_reason="tool_use",
            usage=Usage(input_tokens=10),
            cost_usd=0,
            latency_s=0,
        ),
        call,
        ToolResult(
            call_id="c",
            server="codeintel_v2",
            tool="find_definition",
            content="retry.py:3",
            is_error=False,
            latency_s=0.0,
        ),
        AssistantMessage(turn=2, text="`compute_backoff` is in retry.py"),
        FinalAnswer(text="`compute_backoff` is in retry.py"),
        TrialFinished(
            status="finished",
            stop="answer",
            final_answer="x",
            tool_calls=1,
            usage=Usage(input_tokens=10),
            cost_usd=0,
            wall_s=1.0,
        ),
    ]


def _trial(events: list[Event], arm: ArmSpec) -> TrialInput:
    return TrialInput(SCENARIO, "a", arm, "m", events, None, Scoring(), SCHEMAS)  # type: ignore[arg-type]


def test_routed_calls_are_unwrapped_and_route_lookups_dropped() -> None:
    t = digest_of(_events(routed=True))
    assert [(c.tool, c.server, dict(c.arguments)) for c in t.tool_calls] == [
        ("find_definition", "codeintel_v2", {"symbol": "compute_backoff"})
    ]


def test_same_tools_under_another_server_name_satisfy_gold() -> None:
    arm = ArmSpec(servers=["codeintel_v2"])
    trial = _trial(_events(routed=False), arm)
    gold = gold_for_arm(trial)
    assert gold is not None and gold[0][0].server is None
    det = deterministic_scores(trial, digest_of(trial.events))
    assert det["tfs"].value == 1.0 and det["tefs"].value == 1.0


def _with_own_grep(events: list[Event], server: str) -> list[Event]:
    """The agent's own Grep (a harness's built-in, under any server label) beside the gold call."""
    out: list[Event] = []
    for e in events:
        if isinstance(e, ModelResponse):
            grep = ToolCallRequest(call_id="g", name="Grep", arguments={"pattern": "compute_backoff"})
            e = e.model_copy(update={"tool_calls": [*e.tool_calls, grep]})
        out.append(e)
        if isinstance(e, ToolResult):
            out += [
                ToolCall(call_id="g", server=server, tool="Grep", arguments={"pattern": "x"}, builtin=True),
                ToolResult(
                    call_id="g",
                    server=server,
                    tool="Grep",
                    content="retry.py:3",
                    is_error=False,
                    latency_s=0.0,
                    builtin=True,
                ),
            ]
    return out


def test_built_in_calls_are_neither_gold_mismatches_nor_adoption_but_misses() -> None:
    arm = ArmSpec(servers=["codeintel_v2"])
    for label in ("builtin", "codeintel_v2"):  # the marker decides, not the server's name
        trial = _trial(_with_own_grep(_events(routed=False), label), arm)
        digest = digest_of(trial.events)
        det = deterministic_scores(trial, digest)
        assert det["tfs"].value == 1.0 and det["tefs"].value == 1.0
        adoption = layer_scores(trial, digest, det, [Verdict(score=0.5)])["adoption"].details
        assert adoption["arm_calls"] == 1 and adoption["fluent_calls"] == 1
        assert adoption["misses"] == 1 and adoption["missed"] == ["Grep (search)"]  # find_definition searches


def test_baseline_has_no_tool_match_and_no_adoption() -> None:
    trial = _trial(_events(routed=False), ArmSpec(baseline=True))
    digest = digest_of(trial.events)
    det = deterministic_scores(trial, digest)
    assert det["tfs"].value is None and "na" in det["tfs"].details
    layers = layer_scores(trial, digest, det, [Verdict(score=0.5)])
    assert layers["adoption"].value is None and layers["adoption"].details["na"] == "baseline"
    assert layers["fairness"].value is not None


def test_keyword_coverage_counts_answer_not_tool_io() -> None:
    trial = _trial(_events(routed=False), ArmSpec(servers=["codeintel_v2"]))
    det = deterministic_scores(trial, digest_of(trial.events))
    assert det["keywords"].value == 1.0 / 1.5


def test_passed_follows_judged_claims_then_records_failure_mode() -> None:
    trial = _trial(_events(routed=False), ArmSpec(servers=["codeintel_v2"]))
    digest = digest_of(trial.events)
    det = deterministic_scores(trial, digest)
    good = Verdict(score=0.9, claims=[ClaimJudgment(claim="c", verdict="fulfilled")])
    bad = Verdict(
        score=0.2, claims=[ClaimJudgment(claim="c", verdict="not")], failure_mode="misinterpretation"
    )
    assert layer_scores(trial, digest, det, [good, good])["passed"].value == 1.0
    failed = layer_scores(trial, digest, det, [bad, bad])
    assert failed["passed"].value == 0.0
    assert failed["failure_mode"].details["mode"] == "misinterpretation"
    q = layer_scores(trial, digest, det, [good, bad])["llm_quality"]
    # the sample SD by default, |0.9 - 0.2| / sqrt(2); the population SD when the suite says so
    assert q.value == (0.9 + 0.2) / 2 and abs(q.details["sd"] - 0.7 / 2**0.5) < 1e-9
    assert q.details["sd_convention"] == "sample"
    population = replace(trial, judge_sd="population")
    q = layer_scores(population, digest, det, [good, bad])["llm_quality"]
    assert abs(q.details["sd"] - 0.35) < 1e-9 and q.details["sd_convention"] == "population"


def test_efficiency_is_not_scored_without_a_wall_clock() -> None:
    events = [
        e.model_copy(update={"wall_s": 0.0}) if isinstance(e, TrialFinished) else e
        for e in _events(routed=False)
    ]
    trial = _trial(events, ArmSpec(servers=["codeintel_v2"]))
    det = deterministic_scores(trial, digest_of(events))
    assert det["efficiency"].value is None and "not recorded" in det["efficiency"].details["na"]
    measured = deterministic_scores(
        _trial(_events(routed=False), ArmSpec(servers=["x"])), digest_of(_events(routed=False))
    )
    assert measured["efficiency"].value is not None


def test_an_errored_trial_gets_no_fairness_quality_or_pass() -> None:
    events = [e for e in _events(routed=False) if not isinstance(e, TrialFinished)]
    events.append(
        TrialFinished(
            status="error", stop="error", final_answer="", tool_calls=1, usage=Usage(), cost_usd=0, wall_s=1.0,
            error="server crashed",
        )
    )  # fmt: skip
    trial = _trial(events, ArmSpec(servers=["codeintel_v2"]))
    digest = digest_of(trial.events)
    layers = layer_scores(trial, digest, deterministic_scores(trial, digest), [Verdict(score=1.0)])
    assert layers["fairness"].value is None and "ended in error" in layers["fairness"].details["na"]
    assert layers["llm_quality"].value is None
    assert layers["passed"].value is None and layers["passed"].details["errored"] is True


def _with(scenario: Scenario, events: list[Event], arm: ArmSpec, model: str = "m") -> TrialInput:
    return TrialInput(scenario, "a", arm, model, events, None, Scoring(), SCHEMAS)  # type: ignore[arg-type]


def _layers(trial: TrialInput, verdicts: list[Verdict]) -> dict[str, Scored]:
    digest = digest_of(trial.events)
    det = deterministic_scores(trial, digest)
    return {str(k): v for k, v in layer_scores(trial, digest, det, verdicts).items()}


GOLD_ONLY = SCENARIO.model_copy(update={"claims": [], "keywords": Scenario(id="k", prompt="p").keywords})


def test_a_judge_never_passes_a_trial_whose_only_check_is_its_gold_calls() -> None:
    arm = ArmSpec(servers=["codeintel_v2"])
    wrong = [
        e.model_copy(update={"arguments": {"symbol": "other"}}) if isinstance(e, ToolCall) else e
        for e in _events(routed=False)
    ]
    fail = _layers(_with(GOLD_ONLY, wrong, arm), [Verdict(score=1.0), Verdict(score=1.0)])["passed"]
    assert fail.value == 0.0 and fail.details["rule"].startswith("tool-call match (TFS, strict)")
    ok = _layers(_with(GOLD_ONLY, _events(routed=False), arm), [Verdict(score=0.0)])["passed"]
    assert ok.value == 1.0


def test_ordered_gold_steps_pass_on_tefs() -> None:
    two = [[GoldCall(tool="find_definition", arguments={"symbol": "compute_backoff"})]] * 2
    scenario = GOLD_ONLY.model_copy(update={"gold_tool_calls": two})
    passed = _layers(_with(scenario, _events(routed=False), ArmSpec(servers=["x"])), [])["passed"]
    assert passed.details["rule"].startswith("tool-call match (TEFS")


def test_a_call_answered_with_an_error_is_no_match() -> None:
    events = [
        e.model_copy(update={"is_error": True, "content": "Invalid timezone"})
        if isinstance(e, ToolResult)
        else e
        for e in _events(routed=False)
    ]
    trial = _with(GOLD_ONLY, events, ArmSpec(servers=["codeintel_v2"]))
    det = deterministic_scores(trial, digest_of(events))
    assert det["tfs"].value == 0.0
    assert det["tfs"].details["failed_calls"] == ['find_definition({"symbol": "compute_backoff"})']
    assert (
        "failed_calls"
        not in deterministic_scores(
            _trial(_events(False), ArmSpec(servers=["x"])), digest_of(_events(False))
        )["tfs"].details
    )


def test_keywords_alone_give_no_verdict_and_a_baseline_without_the_gold_tools_none_either() -> None:
    keywords_only = GOLD_ONLY.model_copy(update={"gold_tool_calls": [], "keywords": SCENARIO.keywords})
    passed = _layers(_with(keywords_only, _events(False), ArmSpec(servers=["x"])), [Verdict(score=1.0)])[
        "passed"
    ]
    assert passed.value is None and passed.details["no_check"] is True
    base = _layers(_with(GOLD_ONLY, _events(False), ArmSpec(baseline=True)), [Verdict(score=1.0)])["passed"]
    assert base.value is None and "does not offer the gold calls' tools" in base.details["rule"]


def test_an_arm_that_cannot_make_the_only_checks_gold_calls_has_no_fairness_to_compare() -> None:
    layers = _layers(_with(GOLD_ONLY, _events(False), ArmSpec(baseline=True)), [Verdict(score=1.0)])
    assert layers["passed"].details["tools_not_offered"] is True
    assert layers["fairness"].value is None and "compared with no arm" in layers["fairness"].details["na"]
    # with claims too, the baseline is judged on them: its fairness stands, and so does the Δ
    judged = _layers(_with(SCENARIO, _events(False), ArmSpec(baseline=True)), [Verdict(score=1.0)])
    assert judged["fairness"].value is not None and "tools_not_offered" not in judged["passed"].details


def test_a_result_that_reads_like_an_error_is_listed_with_the_match_and_does_not_fail_it() -> None:
    events = [
        e.model_copy(update={"content": "Database error: no such table: nowhere"})
        if isinstance(e, ToolResult)
        else e
        for e in _events(routed=False)
    ]
    trial = _with(GOLD_ONLY, events, ArmSpec(servers=["codeintel_v2"]))
    tfs = deterministic_scores(trial, digest_of(events))["tfs"]
    assert tfs.value == 1.0
    assert tfs.details["disguised_errors"] == [
        'codeintel_v2/find_definition({"symbol": "compute_backoff"}): the text begins '
        '"Database error: no such table: nowhere"'
    ]


def test_an_imported_trial_without_a_final_answer_is_no_answer_not_a_fail() -> None:
    events = [
        e.model_copy(update={"final_answer": "", "stop": "no_answer"}) if isinstance(e, TrialFinished) else e
        for e in _events(routed=False)
        if not isinstance(e, FinalAnswer | AssistantMessage)
    ]
    trial = _with(SCENARIO, events, ArmSpec(servers=["codeintel_v2"]), model="imported:ref")
    assert not is_judged(trial)
    layers = _layers(trial, [])
    assert layers["passed"].value is None and layers["passed"].details["no_answer"] is True
    assert layers["fairness"].value is None and "no answer" in layers["fairness"].details["na"]
    assert "failure_mode" not in layers
    gold_only = _layers(_with(GOLD_ONLY, events, ArmSpec(servers=["codeintel_v2"]), model="imported:ref"), [])
    assert gold_only["passed"].value == 1.0


def _cited(answer: str, repo: PinnedRepo, minimum: float | None, count: str = "file_line") -> TrialInput:
    events = [
        e.model_copy(update={"text": answer}) if isinstance(e, FinalAnswer) else e
        for e in _events(routed=False)
    ]
    scoring = Scoring(pass_requires_grounding=minimum, citation_count=count)  # type: ignore[arg-type]
    return TrialInput(SCENARIO, "a", ArmSpec(servers=["codeintel_v2"]), "m", events, repo, scoring, SCHEMAS)  # type: ignore[arg-type]


def test_pass_requires_grounding_fails_an_answer_citing_lines_that_are_not_there(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "retry.py").write_text(
        "import math\n\ndef compute_backoff(attempt):\n    return 2 ** attempt\n"
    )
    repo = PinnedRepo(tmp_path / "git", materialize(src, tmp_path / "git"))
    good = Verdict(score=0.9, claims=[ClaimJudgment(claim="c", verdict="fulfilled")])
    stale = "`compute_backoff` is defined at `pkg/retry.py:12` and returns at `pkg/retry.py:13`."
    right = "`compute_backoff` is defined at `pkg/retry.py:3`."
    # Off (the default): right prose with hallucinated citations still passes.
    assert _layers(_cited(stale, repo, None), [good])["passed"].value == 1.0
    failed = _layers(_cited(stale, repo, 0.8), [good])["passed"]
    assert failed.value == 0.0 and failed.details["ungrounded"] is True
    assert "0 of 2 citations grounded" in failed.details["rule"]
    assert "pass_requires_grounding" in failed.details["rule"]
    kept = _layers(_cited(right, repo, 0.8), [good])["passed"]
    assert kept.value == 1.0 and "ungrounded" not in kept.details
    # An answer that cites nothing hallucinates nothing: the option does not hold it back.
    assert _layers(_cited("compute_backoff is in retry.py", repo, 0.8), [good])["passed"].value == 1.0


def test_the_suite_says_how_citations_are_counted(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "retry.py").write_text("def compute_backoff(attempt):\n    return 2 ** attempt\n")
    repo = PinnedRepo(tmp_path / "git", materialize(src, tmp_path / "git"))
    answer = (
        "`compute_backoff` (pkg/retry.py:1) is called as compute_backoff at pkg/retry.py:1 and retry.py:9."
    )

    def grounding(count: str) -> Scored:
        trial = _cited(answer, repo, None, count)
        return deterministic_scores(trial, digest_of(trial.events))[ScoreName.GROUNDING]

    once, every = grounding("file_line"), grounding("mention")
    assert once.details["counts"] == {"grounded": 1, "unresolved": 0, "hallucinated": 1}
    assert every.details["counts"] == {"grounded": 2, "unresolved": 0, "hallucinated": 1}
    assert once.details["count_rule"].startswith("file_line") and every.details["count_rule"].startswith(
        "mention"
    )
    (bad,) = [c for c in once.details["citations"] if c["status"] == "hallucinated"]
    assert bad["line_text"] is None and "past the end" in bad["reason"]


class _TaskJudge:
    """A judge that grades against the task alone, as an LLM judge does (no ``needs_criteria``)."""

    judge_id = "llm:task"

    async def judge(self, subject: JudgeSubject, pass_no: int) -> JudgeOutcome:
        return JudgeOutcome(Verdict(score=0.4), "", JudgmentMeta(source="test"))


async def test_the_offline_judge_does_not_grade_a_scenario_it_has_nothing_to_match_on() -> None:
    # It matches claims, key points and a rubric; without them it used to give 1.0 to any answer,
    # so a trial whose every call failed read llm_quality 1.0 and a high fairness.
    arm = ArmSpec(servers=["codeintel_v2"])
    emitted: list[Event] = []
    trial = _with(GOLD_ONLY, _events(routed=False), arm)
    await score_trial(trial, [OfflineJudge()], [1, 2], lambda e, _meta: emitted.append(e))
    scores = {s.name: s for s in emitted if isinstance(s, Scored)}
    assert not [e for e in emitted if isinstance(e, Judged)]
    assert scores[ScoreName.LLM_QUALITY].value is None
    assert scores[ScoreName.LLM_QUALITY].details["na"] == NOTHING_TO_MATCH
    assert scores[ScoreName.PASSED].value == 1.0  # the tool-call match decides, as before
    assert "llm_quality" in scores[ScoreName.FAIRNESS].details["missing"]

    emitted.clear()  # a judge that grades the task alone still runs; with claims, the offline one too
    await score_trial(trial, [OfflineJudge(), _TaskJudge()], [1], lambda e, _meta: emitted.append(e))
    assert [e.judge for e in emitted if isinstance(e, Judged)] == ["llm:task"]
    emitted.clear()
    await score_trial(
        _trial(_events(routed=False), arm), [OfflineJudge()], [1], lambda e, _m: emitted.append(e)
    )
    assert [e.judge for e in emitted if isinstance(e, Judged)] == ["offline:lexical"]


def _reason(scored: Scored) -> str:
    value = None if scored.value is None else scored.value == 1.0
    return verdict_reason(value, PassedDetails.model_validate(scored.details))


def test_every_failing_rule_is_stored_with_its_numbers_and_reads_as_why(tmp_path: Path) -> None:
    trial = _trial(_events(routed=False), ArmSpec(servers=["codeintel_v2"]))
    half = Verdict(score=0.2, claims=[ClaimJudgment(claim="c", verdict="partially")])
    assert _reason(_layers(trial, [half, half])["passed"]) == "failed on judged claims coverage 0.50 < 0.75"
    lexical = _layers(trial, [Verdict(score=0.2)])[
        "passed"
    ]  # no claim verdicts: the lexical coverage decides
    assert lexical.details["rule"] == "lexical claims coverage 1.00 >= 0.75" and lexical.value == 1.0
    judged_only = SCENARIO.model_copy(update={"claims": [], "rubric": [{"name": "r", "description": "d"}]})
    low = _layers(_with(judged_only, _events(False), ArmSpec(servers=["x"])), [Verdict(score=0.25)])["passed"]
    assert _reason(low) == "failed on judge mean score 0.25 < 0.5"
    wrong = [
        e.model_copy(update={"arguments": {"symbol": "other"}}) if isinstance(e, ToolCall) else e
        for e in _events(routed=False)
    ]
    tools = _layers(_with(GOLD_ONLY, wrong, ArmSpec(servers=["codeintel_v2"])), [])["passed"]
    assert _reason(tools) == (
        "failed on tool-call match (TFS, strict) 0.00 < 1.00: the only check is the gold calls"
    )
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "retry.py").write_text("def compute_backoff(attempt):\n    return 2 ** attempt\n")
    repo = PinnedRepo(tmp_path / "git", materialize(src, tmp_path / "git"))
    good = Verdict(score=0.9, claims=[ClaimJudgment(claim="c", verdict="fulfilled")])
    stale = _layers(_cited("`compute_backoff` is at `pkg/retry.py:12`.", repo, 0.8), [good])["passed"]
    assert _reason(stale) == (
        "failed on grounding: 0 of 1 citations grounded (0%) < scoring.pass_requires_grounding 80%"
    )


def test_the_suites_keyword_count_decides_how_a_keyword_listed_twice_counts() -> None:
    scenario = SCENARIO.model_copy(
        update={"keywords": Keywords.model_validate({"required": ["compute_backoff", "absent", "absent"]})}
    )
    arm = ArmSpec(servers=["codeintel_v2"])
    counts = {}
    for count in ("once", "per_occurrence"):
        trial = TrialInput(
            scenario, "a", arm, "m", _events(routed=False), None, Scoring(keyword_count=count), SCHEMAS
        )  # type: ignore[arg-type]
        counts[count] = deterministic_scores(trial, digest_of(trial.events))[ScoreName.KEYWORDS].value
    assert counts == {"once": 0.5, "per_occurrence": 1 / 3}
