from __future__ import annotations

from rich.console import Console

from proctor.app.views.transcript_state import EAGER_SANITIZE_CHARS, TranscriptState
from proctor.store.events import (
    AssistantMessage,
    ContentBlock,
    FinalAnswer,
    McpNotice,
    ModelResponse,
    ServerConnected,
    ToolCall,
    ToolResult,
    TrialStarted,
    Usage,
)
from proctor.widgets.transcript_model import LINE_CHARS, layout_entry
from tests.app.events_factory import stored


def started(attempt: int) -> TrialStarted:
    return TrialStarted(scenario="s", arm="a", model="m", epoch=0, seed=1, attempt=attempt)


def response(turn: int, text: str) -> ModelResponse:
    return ModelResponse(turn=turn, model="m", text=text, tool_calls=[], stop_reason="end_turn", usage=Usage(),
                         cost_usd=0.0, latency_s=0.1)  # fmt: skip


def test_load_then_buffered_tail_counts_each_event_once() -> None:
    t = TranscriptState(7)
    early = stored(started(1), trial_id=7, event_id=10)
    overlap = stored(ToolCall(call_id="c", server="s", tool="grep", arguments={}), trial_id=7, event_id=11)
    later = stored(
        ToolResult(call_id="c", server="s", tool="grep", content="hit", is_error=False, latency_s=0.1),
        trial_id=7,
        event_id=12,
    )
    other = stored(FinalAnswer(text="not mine"), trial_id=8, event_id=13)
    t.feed([overlap, later, other])
    assert t.entries == [] and not t.loaded
    t.load([early, overlap])
    assert [e.kind for e in t.entries] == ["meta", "tool_call", "tool_result"]
    assert t.calls[0].result == "hit"
    t.feed([later])
    assert len(t.entries) == 3


def test_a_new_attempt_starts_the_transcript_over() -> None:
    t = TranscriptState(1)
    t.load([stored(started(1), event_id=1), stored(FinalAnswer(text="old"), event_id=2)])
    assert t.final_answer == "old"
    t.feed([stored(FinalAnswer(text="stale"), attempt=1, event_id=3)])
    t.feed(
        [stored(started(2), attempt=2, event_id=4), stored(FinalAnswer(text="new"), attempt=2, event_id=5)]
    )
    assert [e.title for e in t.entries][-1] == "final answer"
    assert t.final_answer == "new" and len(t.entries) == 2 and t.attempt == 2
    t.feed([stored(FinalAnswer(text="late from attempt 1"), attempt=1, event_id=6)])
    assert t.final_answer == "new"


def test_response_text_and_identical_assistant_message_show_once_and_final_reuses_it() -> None:
    t = TranscriptState(1)
    t.load([
        stored(response(1, "answer at a.py:1"), event_id=1),
        stored(AssistantMessage(turn=1, text="answer at a.py:1"), event_id=2),
        stored(FinalAnswer(text="answer at a.py:1"), event_id=3),
    ])  # fmt: skip
    kinds = [e.kind for e in t.entries]
    assert kinds == ["meta", "final"]


def test_untrusted_text_is_sanitized_and_failing_call_marked() -> None:
    t = TranscriptState(1)
    t.mark_failing("c1")
    t.load([
        stored(ToolCall(call_id="c1", server="s\x1b[2J", tool="t", arguments={"q": "\x1b]0;x\x07"}), event_id=1),
        stored(ToolResult(call_id="c1", server="s", tool="t", content="a\x1b[31mb\u202e", is_error=True, latency_s=0), event_id=2),
    ])  # fmt: skip
    assert all(e.failing for e in t.entries)
    assert "\x1b" not in t.entries[0].title and t.entries[1].body == "ab"
    t.mark_failing("")
    assert not any(e.failing for e in t.entries)


def test_server_identity_notices_and_typed_blocks_are_shown_sanitized() -> None:
    t = TranscriptState(1)
    t.load(
        [
            stored(
                ServerConnected(
                    server="fs",
                    name="secure-fs",
                    version="1.2",
                    protocol_version="2025-11-25",
                    capabilities={"tools": {}, "logging": {}},
                    instructions="Use [b]me[/b]",
                ),
                event_id=1,
            ),
            stored(ToolCall(call_id="c1", server="fs", tool="read", arguments={}), event_id=2),
            stored(
                McpNotice(
                    server="fs",
                    method="notifications/progress",
                    call_id="c1",
                    progress=1,
                    total=2,
                    message="half",
                ),
                event_id=3,
            ),
            stored(
                McpNotice(
                    server="fs",
                    method="notifications/message",
                    call_id="c1",
                    level="warning",
                    message="\x1b[31mdisk\x1b[0m low",
                    shared=True,
                ),
                event_id=4,
            ),
            stored(
                McpNotice(
                    server="fs",
                    method="elicitation/create",
                    call_id="c1",
                    message="name?",
                    answer="declined: no person answers during an evaluation",
                ),
                event_id=5,
            ),
            stored(
                ToolResult(
                    call_id="c1",
                    server="fs",
                    tool="read",
                    content="text\n[image image/png, 3 bytes]",
                    is_error=False,
                    latency_s=0.01,
                    structured={"n": 1},
                    blocks=[
                        ContentBlock(type="text", text="text"),
                        ContentBlock(type="image", mime_type="image/png", size_bytes=3, sha256="ab"),
                    ],
                ),
                event_id=6,
            ),
        ]
    )
    titles = [e.title for e in t.entries]
    assert titles[0] == "server fs: secure-fs 1.2 · protocol 2025-11-25 · capabilities logging, tools"
    assert t.entries[0].body == "Use [b]me[/b]", "instructions are data, never markup"
    assert titles[2] == "[fs] progress 1/2 #c1"
    assert titles[3] == "[fs] log warning (connection shared by calls in flight): disk low"
    assert titles[4] == "[fs] elicitation/create → declined: no person answers during an evaluation"
    assert titles[5].endswith("ms · 1 image")
    assert '── structuredContent ──\n{\n  "n": 1\n}' in t.entries[5].body


def test_a_result_too_large_to_clean_at_once_is_cleaned_wherever_it_is_shown() -> None:
    hostile = "\x1b]0;owned\x07\x1b[2J"
    filler = "".join(f"{i:>7} plain line of a listing\n" for i in range(EAGER_SANITIZE_CHARS // 20))
    content = f"first {hostile}line\n{'y' * 5000}{hostile}\n" + filler + f"last {hostile}line"
    state = TranscriptState(1)
    state.load(
        [
            stored(ToolCall(call_id="c1", server="s", tool="t", arguments={}), event_id=1),
            stored(
                ToolResult(
                    call_id="c1", server="s", tool="t", content=content, is_error=False, latency_s=0.1
                ),
                event_id=2,
            ),
        ]
    )
    entry = state.entries[-1]
    assert entry.raw and entry.line_count == content.count("\n") + 1
    shown = [line.plain for line in layout_entry(entry, Console(width=200), 180, expanded=True)]
    assert shown[1] == "│ first line" and "\x1b" not in "".join(shown)
    joined = "".join(line.removeprefix("│ ") for line in shown)
    assert f"{'y' * 100} …(+{5000 + len(hostile) - LINE_CHARS} chars)" in joined, (
        "the cut counts the raw line"
    )
    clean = entry.clean_body()
    assert clean.endswith("last line") and "\x1b" not in clean and "\x07" not in clean
    assert state.calls[0].result == content, "compare gets the stored text and cleans the lines it shows"


def test_a_result_that_reads_like_an_error_the_server_did_not_flag_says_so_in_its_title() -> None:
    # mcp-server-sqlite's answers (tests/engine/fixtures/tool_results/results.json): isError false.
    t = TranscriptState(1)
    texts = ["Database error: no such table: nowhere", "[{'name': 'bolt', 'price': 0.25}]"]
    t.load(
        [
            stored(
                ToolResult(
                    call_id=f"c{i}",
                    server="sqlite",
                    tool="read_query",
                    content=text,
                    is_error=False,
                    latency_s=0,
                ),
                event_id=i,
            )
            for i, text in enumerate(texts, start=1)
        ]
    )
    disguised, plain = (e.title for e in t.entries if e.kind == "tool_result")
    assert disguised.endswith("· ⚠ reads like an error (isError false)")
    assert "reads like an error" not in plain and "ERROR" not in plain


def test_adaptations_for_the_api_are_shown_beside_the_brief_and_the_tools() -> None:
    from proctor.store.events import AgentBrief, ListedTool, ToolsListed

    note = "tool 'io.github.x/fs__read' (io.github.x/fs) sent as 'io_github_x_fs__read': names must match"
    brief = AgentBrief(
        model="anthropic:claude-opus-4-7",
        system_prompt_sha256="0" * 64,
        system_prompt_chars=10,
        prompts=["p"],
        parameters={"temperature": None, "adapted": [note]},
    )
    tool = ListedTool(
        name="io.github.x/fs__read", server="io.github.x/fs", description="d", input_schema={},
        sent_as="io_github_x_fs__read",
    )  # fmt: skip
    t = TranscriptState(1)
    t.load(
        [
            stored(started(1), event_id=1),
            stored(brief, event_id=2),
            stored(ToolsListed(tools=[tool]), event_id=3),
        ]
    )
    titles = [e.title for e in t.entries]
    assert "adapted for the API: 1 change(s)" in titles
    assert not any("adapted [" in title for title in titles)
    assert next(e for e in t.entries if e.title.startswith("adapted")).body == note
    assert "sent to the model as io_github_x_fs__read" in t.entries[-1].body


def test_reasoning_is_its_own_folded_entry_with_its_tokens_never_the_answers_prose() -> None:
    from proctor.store.events import ModelReasoning

    thought = "The user wants the weather.\x1b]0;pwned\x07 I should call the tool."
    t = TranscriptState(1)
    t.load(
        [
            stored(started(1), event_id=1),
            stored(
                ModelReasoning(turn=1, model="m", text=thought, source="reasoning_content", tokens=227),
                event_id=2,
            ),
            stored(ModelReasoning(turn=1, model="m", text="", redacted=True, source="thinking"), event_id=3),
            stored(response(1, "It is sunny."), event_id=4),
        ]
    )
    first, redacted = (e for e in t.entries if e.kind == "reasoning")
    assert first.is_tool  # opens collapsed, like tool I/O: enter expands it
    assert first.title == f"reasoning · turn 1 · reasoning_content · {len(thought):,} chars · 227 tokens"
    assert "\x1b" not in first.clean_body() and "I should call the tool." in first.clean_body()
    assert redacted.title == "reasoning · turn 1 · thinking · redacted by the API"
    (prose,) = [e for e in t.entries if e.kind == "prose"]
    assert prose.body == "It is sunny."
    collapsed = [line.plain for line in layout_entry(first, Console(width=120), 100, expanded=False)]
    assert collapsed[0].startswith("▸ ")
