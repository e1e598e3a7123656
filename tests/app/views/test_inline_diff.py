"""Marks within a changed line: where a result or an argument differs, down to the characters."""

from __future__ import annotations

from rich.text import Text

from proctor.app.views.inline_diff import (
    CHANGED,
    MAX_COMPARE_CHARS,
    changed_spans,
    marked_pair,
    unified_diff_text,
)


def marked(text: Text) -> list[str]:
    return [text.plain[s.start : s.end] for s in text.spans if str(s.style) == CHANGED]


def test_only_the_characters_that_differ_are_marked() -> None:
    left, right = marked_pair(
        '{"count": 42, "path": "a/b.py"}', '{"count": 43, "path": "a/c.py"}', "red", "green"
    )
    assert marked(left) == ["2", "b"] and marked(right) == ["3", "c"]
    assert left.plain.startswith('{"count"') and str(left.style) == "red" and str(right.style) == "green"


def test_insertions_and_deletions_are_marked_on_their_own_side() -> None:
    a_spans, b_spans = changed_spans("abc", "abXc")
    assert a_spans == [] and b_spans == [(2, 3)]
    a_spans, b_spans = changed_spans("abXc", "abc")
    assert a_spans == [(2, 3)] and b_spans == []
    assert changed_spans("same", "same") == ([], [])


def test_removed_lines_pair_with_the_added_lines_of_their_hunk() -> None:
    lines = ["@@ -1,3 +1,3 @@", " line1", "-line2 old", "-line3", "+line2 new", "+LINE3", "+extra", " end"]
    out = unified_diff_text(lines)
    assert [t.plain for t in out] == lines
    assert marked(out[2]) == ["old"] and marked(out[4]) == ["new"]
    assert marked(out[3]) == ["line"] and marked(out[5]) == ["LINE"]
    assert marked(out[6]) == [], "an addition with no removal to pair with stays whole"
    assert str(out[0].style) == "cyan" and str(out[1].style) == "dim"
    assert not any(span.start == 0 for t in out for span in t.spans), "the -/+ of the diff is never marked"


def test_untrusted_text_is_sanitized_before_it_is_compared() -> None:
    out = unified_diff_text(["-a\x1b[2Jb", "+a\x1b]52;c;x\x07c"])
    assert "\x1b" not in out[0].plain and "\x1b" not in out[1].plain
    assert all(span.end <= len(t.plain) for t in out for span in t.spans)


def test_very_long_lines_are_not_compared_character_by_character() -> None:
    a, b = "x" * (MAX_COMPARE_CHARS + 1), "y" * (MAX_COMPARE_CHARS + 1)
    assert changed_spans(a, b) == ([], [])
