"""keyword_coverage(): the weighted formula and the word-boundary rules."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.engine.scoring import keyword_coverage, mentions


def test_weighted_formula() -> None:
    text = "TopicCreator uses the reserve pool and a retry loop"
    cov = keyword_coverage(text, ["TopicCreator", "reserve", "missing"], ["retry", "absent"])
    # (2 required hits + 0.5 * 1 bonus hit) / (3 + 0.5 * 2) = 2.5 / 4 = 0.625
    assert cov.value == pytest.approx(0.625)
    assert cov.required_hits == ("TopicCreator", "reserve")
    assert cov.required_missed == ("missing",)
    assert cov.bonus_hits == ("retry",) and cov.bonus_missed == ("absent",)


def test_bonus_only() -> None:
    # (0 + 0.5 * 1) / (0 + 0.5 * 2) = 0.5
    assert keyword_coverage("alpha", [], ["alpha", "beta"]).value == pytest.approx(0.5)


def test_no_keywords_is_none() -> None:
    assert keyword_coverage("anything", [], []).value is None
    assert keyword_coverage("anything", ["  "], [""]).value is None


def test_duplicates_count_once_and_required_wins() -> None:
    # required: [reserve]; bonus "Reserve" is a duplicate of a required one and is dropped: 1/1
    cov = keyword_coverage("reserve", ["reserve", "RESERVE"], ["Reserve"])
    assert cov.value == 1.0 and cov.bonus_hits == () and cov.required_hits == ("reserve",)


@pytest.mark.parametrize(
    ("text", "keyword", "hit"),
    [
        ("the reserved seats", "reserve", False),
        ("preserve it", "reserve", False),
        ("reserve_x = 1", "reserve", False),
        ("a reserve-price", "reserve", True),
        ("self.reserve()", "reserve", True),
        ("RESERVE now", "reserve", True),
        ("`TopicCreator`", "topiccreator", True),
        ("TopicCreatorFactory", "TopicCreator", False),
        ("topic  \n creator", "topic creator", True),
        ("written in C++ and Go", "C++", True),
        ("use --force-with-lease", "--force", True),  # a hyphen is a boundary, as in reserve-price
        ("use --force now", "--force", True),
        ("v2 api", "v2", True),
        ("v22 api", "v2", False),
    ],
)
def test_boundaries(text: str, keyword: str, hit: bool) -> None:
    assert mentions(text, keyword) is hit


@settings(deadline=None, derandomize=True)
@given(st.text(max_size=80), st.text(min_size=1, max_size=10))
def test_keyword_inside_a_longer_identifier_never_matches(prefix: str, keyword: str) -> None:
    kw = "k" + "".join(ch for ch in keyword if ch.isalnum()) + "w"
    assert not mentions(prefix + " x" + kw + "y ", kw)
    assert mentions(prefix + " " + kw + " ", kw)
