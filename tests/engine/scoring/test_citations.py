"""extract_citations(): every documented form, things that are not citations, and properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.engine.scoring import Citation, extract_citations


def _one(text: str) -> Citation:
    cites = extract_citations(text)
    assert len(cites) == 1, cites
    return cites[0]


@pytest.mark.parametrize(
    ("text", "path", "line", "end"),
    [
        ("see src/topic.py:42 for it", "src/topic.py", 42, None),
        ("see src/topic.py:L42.", "src/topic.py", 42, None),
        ("range src/topic.py:40-50,", "src/topic.py", 40, 50),
        ("range src/topic.py:40–50", "src/topic.py", 40, 50),
        ("column src/topic.py:42:7", "src/topic.py", 42, None),
        ("anchor src/topic.py#L9", "src/topic.py", 9, None),
        ("anchor src/topic.py#L9-L12", "src/topic.py", 9, 12),
        ("anchor src/topic.py#L9-12", "src/topic.py", 9, 12),
        ("in `topic.py:3`", "topic.py", 3, None),
        ("(Makefile/x:3)", "Makefile/x", 3, None),
        ("./a/b.ts:7", "./a/b.ts", 7, None),
    ],
)
def test_line_forms(text: str, path: str, line: int, end: int | None) -> None:
    c = _one(text)
    assert (c.path, c.line, c.end_line, c.symbol) == (path, line, end, None)
    assert text[c.start : c.end] == c.raw


def test_symbol_form() -> None:
    c = _one("defined at src/topic.py:TopicCreator.create() today")
    assert (c.path, c.line, c.symbol, c.hint) == ("src/topic.py", None, "TopicCreator.create()", None)


def test_markdown_link_is_one_citation_with_link_text_as_hint() -> None:
    text = "See [TopicCreator](src/topic.py#L3) and [src/a.py:9](src/a.py:9)."
    cites = extract_citations(text)
    assert [(c.raw, c.path, c.line, c.hint) for c in cites] == [
        ("[TopicCreator](src/topic.py#L3)", "src/topic.py", 3, "TopicCreator"),
        ("[src/a.py:9](src/a.py:9)", "src/a.py", 9, None),
    ]


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("The `TopicCreator` class (src/topic.py:42) does it", "TopicCreator"),
        ("`TopicCreator` is defined in src/topic.py:42", "TopicCreator"),
        ("src/topic.py:42 defines `TopicCreator`", "TopicCreator"),
        ("`foo` calls `bar` in `src/topic.py:42`", "bar"),
        ("`TopicCreator` is something else entirely. See src/topic.py:42", None),
        ("`topic.py` is long; src/topic.py:42", None),
        ("`config.yaml` src/topic.py:42", None),
        ("`TopicCreator` and a long detour of words before src/topic.py:42", None),
    ],
)
def test_backticked_identifier_next_to_a_line_citation_is_its_hint(text: str, hint: str | None) -> None:
    assert _one(text).hint == hint


def test_hint_does_not_cross_another_citation() -> None:
    cites = extract_citations("`Foo` a.py:1 b.py:2")
    assert [(c.path, c.hint) for c in cites] == [("a.py", "Foo"), ("b.py", None)]


@pytest.mark.parametrize(
    "text",
    [
        "served at http://localhost:8080/app.py:3 and https://github.com/o/r/blob/main/a.py#L3",
        "connect to db.example.com:5432",
        "at 12:30 on 2024-01-01",
        "the ratio 3:4 and note:Foo",
        "localhost:8080",
        "",
    ],
)
def test_not_citations(text: str) -> None:
    assert extract_citations(text) == []


def test_markdown_link_to_a_url_falls_back_to_the_link_text() -> None:
    c = _one("[a.py:3](https://github.com/o/r/blob/main/a.py#L3)")
    assert (c.raw, c.path, c.line) == ("a.py:3", "a.py", 3)


def test_hostile_paths_are_extracted_for_classification() -> None:
    cites = extract_citations("../../etc/passwd:1 /etc/shadow:2 a.py:1-10000")
    assert [(c.path, c.line, c.end_line) for c in cites] == [
        ("../../etc/passwd", 1, None),
        ("/etc/shadow", 2, None),
        ("a.py", 1, 10000),
    ]


def test_overlong_line_numbers_are_not_citations() -> None:
    assert extract_citations("a.py:1234567890123") == []
    assert _one("a.py:123456789012").line == 123456789012


_ALPHABET = st.sampled_from(
    [*"ab/._-:#L`[]()0123456789 \n\x00~Ü\\", "src/", ".py", ":12", "#L3", "-4", "://"]
)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(_ALPHABET, max_size=60).map("".join) | st.text(max_size=200))
def test_extractor_properties(text: str) -> None:
    for c in extract_citations(text):
        assert text[c.start : c.start + len(c.raw)] == c.raw
        if c.path:
            assert c.path in c.raw.replace("\\", "/")  # Windows separators are read as "/"
            assert (c.line is None) != (c.symbol is None)
        else:  # Symbol:line, a symbol cited at a line with no file
            assert c.symbol and c.symbol in c.raw and c.line is not None
        assert c.line is None or c.line >= 0  # path:0 is extracted, to be called unresolved
        assert c.end_line is None or c.end_line >= 0
