"""How grounding counts: each (file, line range) once with its worst verdict, or every mention."""

from __future__ import annotations

from pathlib import Path

from proctor.engine.scoring import check_citations, check_grounding
from tests.engine.scoring.memrepo import MemoryRepo, numbered

TOPIC = numbered(50, {20: "class TopicCreator:", 21: "    pass", 40: "def publish(): pass"})


class _Pinned(MemoryRepo):
    commit = "c0ffee" * 6 + "c0ff"
    path = Path("/srv/checkout")


def _repo() -> _Pinned:
    return _Pinned({"src/topic.py": TOPIC})


def test_one_file_line_cited_in_other_words_and_by_suffix_counts_once() -> None:
    text = "src/topic.py:20 holds it; `TopicCreator` (topic.py:20) again; see src/topic.py:20."
    results = check_citations(text, _repo())
    assert [(r.citation.raw, r.status) for r in results] == [("src/topic.py:20", "grounded")]
    assert len(check_citations(text, _repo(), unique=False)) == 3


def test_a_repeated_line_takes_its_worst_verdict() -> None:
    # Line 40 exists, but the second mention says it shows TopicCreator, which is at 20-21.
    results = check_citations("see src/topic.py:40, and `TopicCreator` (src/topic.py:40)", _repo())
    (r,) = results
    assert r.status == "hallucinated" and "TopicCreator" in r.reason
    assert r.line_text == "def publish(): pass"


def test_a_range_is_not_its_first_line() -> None:
    results = check_citations("src/topic.py:20 and src/topic.py:20-21 and src/topic.py:20–21", _repo())
    assert [r.citation.raw for r in results] == ["src/topic.py:20", "src/topic.py:20-21"]


def test_the_score_names_the_rule_it_counted_by() -> None:
    text = "src/topic.py:1 and src/topic.py:1 and src/topic.py:99"
    once = check_grounding(text, _repo())
    every = check_grounding(text, _repo(), count="mention")
    assert (once.counts.grounded, once.counts.hallucinated) == (1, 1)
    assert (every.counts.grounded, every.counts.hallucinated) == (2, 1)
    assert once.to_details().count_rule.startswith("file_line:")
    assert every.to_details().count_rule.startswith("mention:")
