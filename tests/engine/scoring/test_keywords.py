"""keyword_coverage(): the weighted formula and the word-boundary rules."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.engine.scoring import keyword_coverage, mentions
from proctor.scenarios.schema import Keywords


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


def _kw(*items: object) -> list[Any]:
    return list(Keywords.model_validate({"required": list(items)}).required)


@pytest.mark.parametrize(
    ("text", "keyword", "hit"),
    [
        ("see test_basic.py", {"contains": "test_"}, True),
        ("see TEST_BASIC.py", {"contains": "test_"}, True),
        ("see tests/basic.py", {"contains": "test_"}, False),
        ("calls register_blueprint(bp)", {"exact": "register_blueprint("}, True),
        ("calls Register_Blueprint(bp)", {"exact": "register_blueprint("}, False),
        ("intro\n  ## Summary\nbody", {"starts_with": "## summary"}, True),
        ("intro ## Summary", {"starts_with": "## Summary"}, False),
        ("the reserved seats", {"word": "reserve"}, False),
    ],
)
def test_kinds_match_as_published_harnesses_define_them(text: str, keyword: object, hit: bool) -> None:
    assert keyword_coverage(text, _kw(keyword)).value == (1.0 if hit else 0.0)


def test_other_kinds_are_listed_with_their_kind_and_plain_words_as_written() -> None:
    cov = keyword_coverage("test_x and reserve", _kw("reserve", {"contains": "test_"}, {"exact": "Nope"}))
    assert cov.required_hits == ("reserve", "contains: test_")
    assert cov.required_missed == ("exact: Nope",)


def test_once_dedupes_within_a_kind_and_per_occurrence_counts_every_listing() -> None:
    required = _kw("wsgi_app", {"contains": "WSGI_APP"}, "WSGI_app", {"contains": "wsgi_app"})
    bonus = list(Keywords.model_validate({"bonus": ["wsgi_app", "absent"]}).bonus)
    once = keyword_coverage("wsgi_app", required, bonus)
    # word and contains are two checks; the bonus word is required already; "absent" is a miss
    assert (once.required_hits, once.bonus_missed) == (("wsgi_app", "contains: WSGI_APP"), ("absent",))
    assert once.value == pytest.approx(2 / 2.5)
    each = keyword_coverage("wsgi_app", required, bonus, count="per_occurrence")
    assert len(each.required_hits) == 4 and each.bonus_hits == ("wsgi_app",)
    assert each.value == pytest.approx(4.5 / 5)


def test_exact_keywords_differing_in_case_are_two_checks() -> None:
    cov = keyword_coverage("Foo", _kw({"exact": "Foo"}, {"exact": "foo"}))
    assert (cov.required_hits, cov.required_missed) == (("exact: Foo",), ("exact: foo",))
