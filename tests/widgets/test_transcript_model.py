from __future__ import annotations

from rich.console import Console

from proctor.widgets.transcript_model import (
    EXPANDED_LINES,
    PREVIEW_LINES,
    CitationBadge,
    TranscriptEntry,
    badge_citations,
    layout_entry,
)

CONSOLE = Console(width=200)


def plain(lines: list[object]) -> list[str]:
    return [line.plain for line in lines]  # type: ignore[attr-defined]


def test_collapsed_tool_result_shows_preview_and_hidden_count() -> None:
    body = "\n".join(f"line {i}" for i in range(50))
    entry = TranscriptEntry("tool_result", 1, "result grep", body)
    out = plain(layout_entry(entry, CONSOLE, 80, expanded=False))
    assert out[0] == "▸ result grep"
    assert out[1 : 1 + PREVIEW_LINES] == [f"│ line {i}" for i in range(PREVIEW_LINES)]
    assert out[-1] == f"│ … {50 - PREVIEW_LINES} more lines (enter: expand)"


def test_expanded_tool_result_is_capped_and_points_to_the_pager() -> None:
    body = "\n".join(str(i) for i in range(EXPANDED_LINES + 30))
    entry = TranscriptEntry("tool_result", 1, "r", body)
    out = plain(layout_entry(entry, CONSOLE, 80, expanded=True))
    assert out[0].startswith("▾ ")
    assert len(out) == 1 + EXPANDED_LINES + 1
    assert out[-1].endswith("30 more lines (p: page)")


def test_long_lines_wrap_to_width_and_very_long_lines_are_cut() -> None:
    entry = TranscriptEntry("tool_result", 1, "r", "x" * 5000)
    out = plain(layout_entry(entry, CONSOLE, 40, expanded=True))
    assert all(len(line) <= 40 for line in out)
    assert "…(+4000 chars)" in "".join(x[2:] for x in out[1:])


def test_prose_has_no_tool_gutter_and_tool_io_does() -> None:
    prose = plain(
        layout_entry(TranscriptEntry("prose", 1, "assistant", "hello"), CONSOLE, 80, expanded=False)
    )
    call = plain(
        layout_entry(TranscriptEntry("tool_call", 2, "call", '{"a": 1}'), CONSOLE, 80, expanded=False)
    )
    assert prose == ["assistant", "  hello"]
    assert call == ["▸ call", '│ {"a": 1}']


def test_citations_are_badged_by_status() -> None:
    body = "see a.py:1 and b.py:2 and c.py:3"
    cites = [
        CitationBadge("a.py:1", "grounded"),
        CitationBadge("b.py:2", "hallucinated"),
        CitationBadge("c.py:3", "unresolved"),
    ]
    text = badge_citations(body, cites)
    assert text.plain == "see a.py:1 ✓G and b.py:2 ✗H and c.py:3 ?U"
    styled = {text.plain[s.start : s.end] for s in text.spans}
    assert {"a.py:1", "b.py:2", "c.py:3"} <= styled


def test_failing_entry_is_marked_and_search_matches_highlighted() -> None:
    entry = TranscriptEntry("tool_call", 1, "call grep", "{}", call_id="c1", failing=True)
    out = layout_entry(entry, CONSOLE, 80, expanded=False, query="GREP")
    assert "◀ first failing call" in out[0].plain
    assert any(out[0].plain[s.start : s.end] == "grep" for s in out[0].spans)
