from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from rich.text import Text

from proctor.widgets.sanitize import one_line, safe_text, sanitize

FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def test_plain_text_is_returned_unchanged() -> None:
    text = "ok [bold]x[/] café\n\tindented"
    assert sanitize(text) is text


def test_osc_title_with_bel_or_st_terminator_is_removed() -> None:
    assert sanitize("a\x1b]0;pwned\x07b") == "ab"
    assert sanitize("a\x1b]2;pwned\x1b\\b") == "ab"
    assert sanitize("a\x9d0;pwned\x9cb") == "ab"


def test_csi_sequences_are_removed_including_8bit_and_truncated() -> None:
    assert sanitize("\x1b[2J\x1b[31mred\x1b[0m") == "red"
    assert sanitize("x\x9b1;31my") == "xy"
    assert sanitize("tail\x1b[12") == "tail"


def test_dcs_apc_pm_and_short_escapes_are_removed() -> None:
    assert sanitize("a\x1bPq#0;2;0;0;0\x1b\\b") == "ab"
    assert sanitize("a\x1b_payload\x1b\\b") == "ab"
    assert sanitize("a\x1bcb\x1b(Bc") == "abc"


def test_controls_are_removed_but_newline_and_tab_kept() -> None:
    assert sanitize("a\x00b\x07c\x08d\re\x7ff\x85g\n\th") == "abcdefg\n\th"
    assert sanitize("line1\r\nline2") == "line1\nline2"


def test_bidi_overrides_and_isolates_are_removed() -> None:
    assert sanitize("abc\u202eevil\u202c\u2066x\u2069\u200f") == "abcevilx"


def test_unterminated_osc_swallows_the_rest_like_a_terminal_would() -> None:
    assert sanitize("ok\x1b]0;never ends") == "ok"


@given(st.text())
def test_output_never_contains_controls_and_is_idempotent(text: str) -> None:
    clean = sanitize(text)
    assert FORBIDDEN.search(clean) is None
    assert sanitize(clean) == clean


def test_safe_text_keeps_markup_literal() -> None:
    t = safe_text("[@click=app.quit]x[/] \x1b[31m")
    assert isinstance(t, Text)
    assert t.plain == "[@click=app.quit]x[/] "
    assert t.spans == []


def test_one_line_flattens_and_cuts() -> None:
    assert one_line("a\nb\t c\x1b[31m", 10) == "a b c"
    assert one_line("x" * 50, 10) == "x" * 9 + "…"
