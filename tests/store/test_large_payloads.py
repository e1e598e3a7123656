"""A large tool result decoded in pieces is the event ``parse_event`` gives, whatever its text."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.store import large_payloads
from proctor.store.events import ContentBlock, ToolCall, ToolResult, parse_event
from proctor.store.large_payloads import parse_large_tool_result

# Characters that matter to the cutting: quotes, backslashes, escapes written as text, control
# characters (escaped by the writer), multi-byte UTF-8, and the field names the cut looks for.
TRICKY = st.sampled_from(
    [
        '"',
        "\\",
        "\\\\",
        '\\"',
        "\n",
        "\t",
        "\x00",
        "\x1b",
        "é",
        "€",
        "😀",
        "\u2028",
        "u",
        "d",
        "c",
        '","is_error":',
        '"content":"',
        "\\u",
        "\\ud83d",
        "\\ude00",
        " ",
        "x",
    ]
)
CONTENT = st.lists(st.one_of(TRICKY, st.text(max_size=8)), max_size=60).map("".join)


def _result(content: str, **kw: object) -> ToolResult:
    return ToolResult(
        call_id="c1", server="s", tool="t", content=content, is_error=False, latency_s=0.5, **kw
    )  # type: ignore[arg-type]


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(large_payloads, "PIECE_BYTES", 3)


@settings(max_examples=400, deadline=None)
@given(content=CONTENT, piece=st.integers(min_value=1, max_value=9))
def test_pieces_decode_to_the_same_event(content: str, piece: int) -> None:
    raw = _result(content).model_dump_json().encode()
    old = large_payloads.PIECE_BYTES
    large_payloads.PIECE_BYTES = piece
    try:
        assert parse_large_tool_result(raw) == parse_event(raw)
    finally:
        large_payloads.PIECE_BYTES = old


@settings(max_examples=200, deadline=None)
@given(content=CONTENT)
def test_ascii_escaped_documents_keep_surrogate_pairs_whole(content: str) -> None:
    """Another writer may escape every non-ASCII character (``\\ud83d\\ude00`` for one emoji)."""
    doc = json.loads(_result(content).model_dump_json())
    raw = json.dumps(doc, ensure_ascii=True, separators=(",", ":")).encode()
    for piece in (1, 2, 5, 7):
        large_payloads.PIECE_BYTES = piece
        try:
            assert parse_large_tool_result(raw) == parse_event(raw)
        finally:
            large_payloads.PIECE_BYTES = 128 * 1024


@pytest.mark.usefixtures("small_pieces")
def test_fields_after_the_content_are_kept() -> None:
    ev = _result(
        'a\\b"c\nd' * 50,
        error_type="Timeout",
        structured={"content": "x", "is_error": True, "n": [1, 2]},
        blocks=[ContentBlock(type="image", mime_type="image/png", size_bytes=10, sha256="ab" * 32)],
    )
    raw = ev.model_dump_json().encode()
    assert parse_large_tool_result(raw) == ev


def test_anything_else_is_left_to_the_whole_parse() -> None:
    call = (
        ToolCall(call_id="c", server="s", tool="t", arguments={"content": "x" * 100})
        .model_dump_json()
        .encode()
    )
    assert parse_large_tool_result(call) is None
    doc = json.loads(_result("text").model_dump_json())
    reordered = {k: doc[k] for k in ("kind", "call_id", "server", "tool", "is_error", "content", "latency_s")}
    assert parse_large_tool_result(json.dumps(reordered, separators=(",", ":")).encode()) is None
    assert parse_large_tool_result(b'{"kind":"tool_result","content":"abc') is None
    assert parse_large_tool_result(b"not json") is None


def test_a_large_result_is_decoded_in_short_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of the pieces: between two of them another thread (the console's event loop)
    can take the GIL, so no single C call unescapes more than about ``PIECE_BYTES``."""
    lines = "\n".join(
        f'-rw-r--r-- 1 dev staff {i:>8} src/pkg/file_{i:07d}.py "q" \\ é' for i in range(50_000)
    )
    plain = "x" * 2_000_000  # no escape at all: cut anywhere outside a UTF-8 character
    real = large_payloads.from_json
    sizes: list[int] = []

    def counted(piece: bytes) -> object:
        sizes.append(len(piece))
        return real(piece)

    monkeypatch.setattr(large_payloads, "from_json", counted)
    for content in (lines, plain, "é" * 1_000_000):
        raw = _result(content).model_dump_json().encode()
        sizes.clear()
        assert parse_large_tool_result(raw) == parse_event(raw)
        assert len(sizes) >= len(raw) // large_payloads.PIECE_BYTES
        assert max(sizes) < large_payloads.PIECE_BYTES + 64, "every piece is short"
