"""citation_rows(): the trial view's citation list fitted to its column, paths cut from the left."""

from __future__ import annotations

import pytest

from proctor.app.views.citation_panel import citation_rows, cut_left
from proctor.store.scores import CitationDetails


@pytest.mark.parametrize(
    ("text", "width", "shown"),
    [
        ("tinyq/storage/sqlite.py:11", 40, "tinyq/storage/sqlite.py:11"),
        ("tinyq/storage/sqlite.py:11", 22, "…/storage/sqlite.py:11"),
        ("tinyq/storage/sqlite.py:11", 18, "…/sqlite.py:11"),
        ("a_very_long_file_name.py:1234", 10, "…e.py:1234"),
    ],
)
def test_paths_are_cut_from_the_left_so_the_line_number_shows(text: str, width: int, shown: str) -> None:
    assert cut_left(text, width) == shown and len(shown) <= width


def test_a_hallucinated_citation_shows_its_line_and_why_sanitized() -> None:
    hostile = CitationDetails(
        raw="javalin/src/main/java/io/javalin/http/servlet/DefaultTasks.kt:88",
        path="javalin/src/main/java/io/javalin/http/servlet/DefaultTasks.kt",
        line=88,
        status="hallucinated",
        reason="after is 23 lines away [@click=app.quit] \x1b]0;pwned\x07",
        line_text="    val AFTER = TaskInitializer { [bold]x[/] \x1b[2J",
    )
    rows = citation_rows([hostile], 48)
    plain = [r.plain for r in rows.lines]
    assert plain[0].endswith(" …/servlet/DefaultTasks.kt:88") and len(plain[0]) <= 48
    assert plain[1].startswith("   88│ val AFTER = TaskInitializer { [bold]")
    assert all("\x1b" not in p and "\x07" not in p and len(p) <= 48 for p in plain)
    assert " ".join(p.strip() for p in plain[2:]).startswith("why: after is 23 lines away [@click=app.quit]")
    assert rows.owner == [0] * len(plain) and rows.starts == [0]
    assert all(not r.spans or all(s.style for s in r.spans) for r in rows.lines)  # no markup was parsed
