"""The transcript's fast layout gives the lines rich's wrapping gives, only without copying them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.style import Style
from rich.text import Text

from proctor.widgets.transcript_model import RED, _plain_lines

CONSOLE = Console(width=200)
LINES = st.lists(st.text(alphabet=st.sampled_from("ab é😀 -\u200b"), max_size=40), min_size=1, max_size=8)


def _wrapped(chunk: str, style: Style | None, width: int) -> list[Text]:
    gutter = Text("│ ", style=Style(color="blue"), end="")
    body = Text(chunk, style=style or Style())
    return [gutter + line for line in body.wrap(CONSOLE, width, overflow="fold", no_wrap=False)]


def _same(a: list[Text], b: list[Text]) -> bool:
    return [(t.plain, str(t.style), [(s.start, s.end, str(s.style)) for s in t.spans]) for t in a] == [
        (t.plain, str(t.style), [(s.start, s.end, str(s.style)) for s in t.spans]) for t in b
    ]


@settings(max_examples=600, deadline=None)
@given(lines=LINES, width=st.integers(min_value=10, max_value=60), error=st.booleans())
def test_fast_lines_equal_rich_wrapping(lines: list[str], width: int, error: bool) -> None:
    chunk = "\n".join(lines)
    style = RED if error else None
    fast = _plain_lines(chunk, "│ ", Style(color="blue"), style, CONSOLE, width)
    assert [t.plain for t in fast] == [t.plain for t in _wrapped(chunk, style, width)]
    if all(len(line) <= width // 2 for line in lines):  # every line fits: the direct path
        assert _same(fast, _wrapped(chunk, style, width))
