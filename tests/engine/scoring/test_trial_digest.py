"""The trial digest (partition()): only assistant prose is scored; tool I/O goes to the audit text."""

from __future__ import annotations

from proctor.engine.scoring import keyword_coverage, partition
from proctor.store.events import (
    AssistantMessage,
    ErrorEvent,
    Event,
    FinalAnswer,
    ModelResponse,
    ToolCall,
    ToolCallRequest,
    ToolResult,
    TrialFinished,
    TrialStarted,
    Usage,
)


def _response(turn: int, text: str, *call_ids: str, tokens: int = 10) -> ModelResponse:
    return ModelResponse(
        turn=turn,
        model="offline:test",
        text=text,
        tool_calls=[ToolCallRequest(call_id=c, name="grep", arguments={}) for c in call_ids],
        stop_reason="tool_use" if call_ids else "end_turn",
        usage=Usage(input_tokens=tokens, output_tokens=tokens),
        cost_usd=0.0,
        latency_s=0.1,
    )


def _call(call_id: str, tool: str = "grep", **args: object) -> ToolCall:
    return ToolCall(call_id=call_id, server="code", tool=tool, arguments=dict(args))


def _result(call_id: str, content: str, tool: str = "grep", error: bool = False) -> ToolResult:
    return ToolResult(
        call_id=call_id, server="code", tool=tool, content=content, is_error=error, latency_s=0.01
    )


def _trial() -> list[Event]:
    return [
        TrialStarted(scenario="s", arm="mcp", model="offline:test", epoch=0, seed=1, attempt=1),
        _response(0, "Let me search.", "c1", "c2"),
        AssistantMessage(turn=0, text="Let me search."),
        _call("c1", pattern="TopicCreator"),
        _call("c2", pattern="reserve"),
        _result("c1", "src/topic.py:42: class TopicCreator:"),
        _result("c2", "no match", error=True),
        _response(1, "", "c3"),
        _call("c3", tool="read_file", path="src/topic.py"),
        _result("c3", "...", tool="read_file"),
        _response(2, "The class is defined in src/topic.py:42."),
        AssistantMessage(turn=2, text="The class is defined in src/topic.py:42."),
        FinalAnswer(text="The class is defined in src/topic.py:42."),
        TrialFinished(
            status="finished",
            stop="answer",
            final_answer="The class is defined in src/topic.py:42.",
            tool_calls=3,
            usage=Usage(input_tokens=100, output_tokens=20),
            cost_usd=0.0,
            wall_s=3.5,
        ),
    ]


def test_tool_input_never_satisfies_a_keyword() -> None:
    t = partition(_trial())
    assert "TopicCreator" in t.audit_text
    assert "TopicCreator" not in t.answer_text
    cov = keyword_coverage(t.answer_text, ["TopicCreator"])
    assert cov.value == 0.0
    assert cov.required_missed == ("TopicCreator",)


def test_answer_is_assistant_prose_and_final_answer_is_not_duplicated() -> None:
    t = partition(_trial())
    assert t.answer_segments == ("Let me search.", "The class is defined in src/topic.py:42.")
    assert t.answer_text.count("src/topic.py:42") == 1
    assert t.final_answer == "The class is defined in src/topic.py:42."


def test_tool_calls_carry_results_and_parallel_steps() -> None:
    t = partition(_trial())
    assert [(c.call_id, c.step) for c in t.tool_calls] == [("c1", 0), ("c2", 0), ("c3", 1)]
    assert t.tool_calls[0].succeeded and t.tool_calls[0].result.startswith("src/topic.py")
    assert t.tool_calls[1].is_error and not t.tool_calls[1].succeeded
    assert [[c.call_id for c in step] for step in t.call_steps()] == [["c1", "c2"], ["c3"]]


def test_usage_and_wall_time_come_from_trial_finished() -> None:
    t = partition(_trial())
    assert (t.tokens, t.wall_s, t.stop) == (120, 3.5, "answer")


def test_only_the_last_attempt_counts() -> None:
    abandoned: list[Event] = [
        TrialStarted(scenario="s", arm="mcp", model="m", epoch=0, seed=1, attempt=0),
        AssistantMessage(turn=0, text="stale answer TopicCreator"),
        _call("old"),
    ]
    t = partition(abandoned + _trial())
    assert "stale" not in t.answer_text
    assert [c.call_id for c in t.tool_calls] == ["c1", "c2", "c3"]


def test_final_answer_differing_from_last_message_is_appended() -> None:
    t = partition([AssistantMessage(turn=0, text="thinking"), FinalAnswer(text="42")])
    assert t.answer_text == "thinking\n\n42"


def test_model_response_text_used_when_no_assistant_messages() -> None:
    t = partition([_response(0, "hello from the model", tokens=5), FinalAnswer(text="done")])
    assert t.answer_segments == ("hello from the model", "done")
    assert t.tokens == 10 and t.wall_s is None


def test_trial_finished_stands_in_for_missing_final_answer() -> None:
    t = partition(
        [
            TrialFinished(
                status="error",
                stop="timeout",
                final_answer="partial",
                tool_calls=0,
                usage=Usage(),
                cost_usd=0.0,
                wall_s=1.0,
            )
        ]
    )
    assert t.final_answer == "partial" and t.answer_text == "partial"


def test_calls_without_a_turn_are_serial_and_errors_are_audited() -> None:
    t = partition(
        [
            _call("a"),
            _call("b"),
            ErrorEvent(where="mcp", error_type="timeout", message="server slow"),
        ]
    )
    assert [c.step for c in t.tool_calls] == [0, 1]
    assert not t.tool_calls[0].has_result
    assert t.errors == ("mcp: timeout: server slow",)
    assert "server slow" in t.audit_text and t.answer_text == ""
