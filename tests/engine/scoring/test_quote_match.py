"""match_quote(): quotes as real answers write them, against the real files they quote."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.engine.scoring.quote_match import FileText, QuoteMatch, match_quote
from tests.engine.scoring.sense_answers.excerpt import repo

AXUM_HANDLER = "axum/src/handler/mod.rs"


def _file(path: str) -> FileText:
    return FileText(repo("axum").lines(path))


@pytest.mark.parametrize(
    ("path", "line", "quote", "fit", "at"),
    [
        # One line of the answer for a signature over three lines of code.
        (
            AXUM_HANDLER,
            208,
            "impl<F, Fut, Res, S> Handler<((),), S> for F where F: FnOnce() -> Fut",
            "here",
            208,
        ),
        # Spaces removed (`impl<H,T,S,B>`) still match.
        (
            "axum/src/handler/service.rs",
            146,
            "impl<H,T,S,B> Service<Request<B>> for HandlerService<H,T,S>",
            "here",
            146,
        ),
        # An ellipsis stands for the rest; the method is in the trait the cited line opens, and
        # the formatter's trailing comma (`state: &S,` then `)`) does not count.
        (
            "axum-core/src/extract/mod.rs",
            53,
            "fn from_request_parts(parts: &mut Parts, state: &S) -> impl Future<...",
            "here",
            59,
        ),
        (
            "axum-core/src/extract/mod.rs",
            79,
            "fn from_request(req: Request, state: &S) -> impl Future<...>",
            "here",
            85,
        ),
        # Renamed generics: compared by names, and no other window holds more of them.
        (
            "axum/src/extract/state.rs",
            303,
            "impl<Outer, Inner> FromRequestParts<Outer> for State<Inner> where Inner: FromRef<Outer>",
            "paraphrase",
            None,
        ),
        # The same quote, cited at a stale line: it is at 208.
        (
            AXUM_HANDLER,
            230,
            "impl<F, Fut, Res, S> Handler<((),), S> for F where F: FnOnce() -> Fut",
            "elsewhere",
            208,
        ),
        # Words that are no code of this file at all: not checked.
        (AXUM_HANDLER, 208, "the quick brown fox jumps over the lazy dog", "unchecked", None),
    ],
)
def test_quotes_from_real_answers(path: str, line: int, quote: str, fit: str, at: int | None) -> None:
    m = match_quote(_file(path), quote, line, line, 5)
    assert m.fit == fit, m
    if at is not None:
        assert m.line == at


def test_an_abridged_quote_at_a_wrong_line_fits_its_own_lines_better() -> None:
    quote = "impl<Outer, Inner> FromRequestParts<Outer> for State<Inner> where Inner: FromRef<Outer>"
    m = match_quote(_file("axum/src/extract/state.rs"), quote, 40, 40, 5)
    assert m.fit == "elsewhere" and m.line is not None and abs(m.line - 303) <= 5


def test_a_quoted_line_ending_in_a_comma_before_a_closing_bracket_is_found_at_its_line() -> None:
    """The demo's good arm quotes ``JobState.QUEUED.value,``: line 128 (then ``)``) holds it, and
    line 117 holds the same words: the cited line is the one that counts."""
    lines = (
        ["x = (", "    JobState.QUEUED.value,", "    other,", ")"]
        + ["pass"] * 8
        + [
            "y = (",
            "    JobState.QUEUED.value,",
            ")",
        ]
    )
    m = match_quote(FileText(lines), "JobState.QUEUED.value,", 14, 14, 5)
    assert (m.fit, m.line) == ("here", 14)


def test_a_quote_at_a_stale_line_is_placed_at_its_nearest_occurrence() -> None:
    """The demo's stale index cites ``with self._transaction() as conn:`` at line 122; the file has
    it at 91, 113 and 162: the reason's offset is the stale index's 9 lines, not 31 to the first."""
    demo = Path(__file__).resolve().parents[3] / "scenarios" / "demo" / "repo" / "tinyq" / "storage"
    lines = (demo / "sqlite.py").read_text(encoding="utf-8").splitlines()
    quote = "with self._transaction() as conn:"
    assert [n for n, text in enumerate(lines, start=1) if quote in text] == [91, 113, 162]
    assert match_quote(FileText(lines), quote, 122, 122, 5) == QuoteMatch("elsewhere", 113)
    assert match_quote(FileText(lines), quote, 150, 150, 5) == QuoteMatch("elsewhere", 162)
    assert match_quote(FileText(lines), quote, 60, 60, 5) == QuoteMatch("elsewhere", 91)
