"""classify()/check_grounding(): the three buckets, resolution rules, hostile paths, a real PinnedRepo."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.engine.scoring import (
    Citation,
    GroundingResult,
    check_citations,
    check_grounding,
    classify,
    extract_citations,
)
from proctor.engine.scoring.grounding import RepoIndex, index_for
from proctor.scenarios.repo import PinnedRepo, materialize, safe_relpath
from proctor.store.scores import CitationDetails, GroundingCounts, GroundingDetails
from tests.engine.scoring.memrepo import MemoryRepo, numbered

# src/topic.py: 50 lines; line 20 defines TopicCreator, line 30 calls create().
TOPIC = numbered(50, {20: "class TopicCreator:", 30: "    def create(self): pass"})


def _repo() -> MemoryRepo:
    return MemoryRepo(
        {
            "src/topic.py": TOPIC,
            "src/util.py": numbered(10),
            "lib/util.py": numbered(10),
            "docs/readme.md": numbered(3),
            "empty.txt": "",
        }
    )


def _cls(text: str, repo: MemoryRepo | None = None, tolerance: int = 5) -> GroundingResult:
    cites = extract_citations(text)
    assert len(cites) == 1, cites
    return classify(cites[0], repo or _repo(), tolerance)


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("src/topic.py:50", "grounded"),  # last line exists
        ("src/topic.py:51", "hallucinated"),  # one past EOF (50 lines)
        ("src/topic.py:45-50", "grounded"),
        ("src/topic.py:45-51", "hallucinated"),
        ("src/topic.py:1-10000", "hallucinated"),  # 10,000-line range past EOF
        ("src/topic.py:30-20", "hallucinated"),  # inverted range
        ("empty.txt:1", "hallucinated"),  # empty file has no line 1
        ("src/nope.py:1", "unresolved"),
        ("topic.py:20", "grounded"),  # unique suffix -> src/topic.py
        ("util.py:3", "unresolved"),  # ambiguous: src/util.py and lib/util.py
        ("c/topic.py:1", "unresolved"),  # suffixes match whole components only
    ],
)
def test_line_citations(text: str, status: str) -> None:
    assert _cls(text).status == status


@pytest.mark.parametrize(
    ("text", "status", "symbol_line"),
    [
        # TopicCreator is on line 20; tolerance 5 -> cited lines 15..25 are grounded.
        ("`TopicCreator` is at src/topic.py:25", "grounded", 20),
        ("`TopicCreator` is at src/topic.py:15", "grounded", 20),
        ("`TopicCreator` is at src/topic.py:26", "hallucinated", 20),  # |26 - 20| = 6 > 5
        ("`TopicCreator` is at src/topic.py:14", "hallucinated", 20),  # |14 - 20| = 6 > 5
        # range 26..40: distance to line 20 is 26 - 20 = 6 > 5; range 25..40 -> 5
        ("`TopicCreator` in src/topic.py:26-40", "hallucinated", 20),
        ("`TopicCreator` in src/topic.py:25-40", "grounded", 20),
        # dotted symbol: the last component counts (create on line 30)
        ("`TopicCreator.create` at src/topic.py:33", "grounded", 30),
        ("`Missing` at src/topic.py:20", "hallucinated", None),
        ("[create](src/topic.py#L31)", "grounded", 30),
    ],
)
def test_line_citations_with_a_symbol(text: str, status: str, symbol_line: int | None) -> None:
    r = _cls(text)
    assert (r.status, r.symbol_line) == (status, symbol_line), r.reason


def test_tolerance_is_a_parameter() -> None:
    # |23 - 20| = 3: grounded at tolerance 3, hallucinated at tolerance 2.
    assert _cls("`TopicCreator` at src/topic.py:23", tolerance=3).status == "grounded"
    assert _cls("`TopicCreator` at src/topic.py:23", tolerance=2).status == "hallucinated"
    with pytest.raises(ValueError):
        classify(Citation("a.py:1", 0, "a.py", 1), _repo(), -1)


def test_symbol_only_citations() -> None:
    assert _cls("src/topic.py:TopicCreator").status == "grounded"
    assert _cls("src/topic.py:create()").symbol_line == 30
    assert _cls("src/topic.py:Topic").status == "hallucinated"  # whole identifiers only
    assert _cls("src/topic.py:topiccreator").status == "hallucinated"  # case-sensitive


def test_line_without_symbol_only_checks_the_line() -> None:
    r = _cls("see src/topic.py:3")
    assert r.status == "grounded" and r.symbol is None


@pytest.mark.parametrize(
    "path",
    [
        "../../etc/passwd",
        "/etc/passwd",
        "/src/topic.py",
        "~/x.py",
        "src/../../x.py",
        "a\x00b.py",
        "a\\b.py",
        ".",
        "",
    ],
)
def test_hostile_paths_are_unresolved_without_any_lookup(path: str) -> None:
    repo = _repo()
    r = classify(Citation(f"{path}:1", 0, path, 1), repo)
    assert r.status == "unresolved"
    assert repo.asked == [] and repo.read == []


def test_normalized_path_inside_the_repo_resolves() -> None:
    assert _cls("src/../src/topic.py:2").resolved_path == "src/topic.py"


def test_report_counts_and_rate() -> None:
    results = check_citations(
        "src/topic.py:1, src/topic.py:99, nope.py:1, topic.py:2 and src/topic.py:1 again", _repo()
    )
    report = GroundingCounts.of(r.status for r in results)
    # unique: topic:1 (g), topic:99 (h), nope (u), topic.py:2 (g); the repeat is dropped -> 2/4
    assert (report.total, report.grounded, report.hallucinated, report.unresolved) == (4, 2, 1, 1)
    assert report.rate == pytest.approx(0.5)
    assert report.label == "50.0% grounded"
    assert len(check_citations("a.py:1 a.py:1", _repo(), unique=False)) == 2


def test_no_citations_is_reported_as_such() -> None:
    report = GroundingCounts.of(r.status for r in check_citations("no references here", _repo()))
    assert report.rate is None and report.total == 0
    assert report.label == "no citations"


def test_index_is_cached_per_repo_and_files_are_read_once() -> None:
    repo = _repo()
    check_citations("`TopicCreator` src/topic.py:20 src/topic.py:21 topic.py:TopicCreator", repo)
    assert repo.read == ["src/topic.py"]
    assert index_for(repo) is index_for(repo)
    assert index_for(_repo()) is not index_for(repo)


def test_unreadable_file_is_unresolved() -> None:
    class Broken(MemoryRepo):
        def lines(self, path: str) -> list[str]:
            raise KeyError(path)

    r = classify(Citation("a.py:1", 0, "a.py", 1), Broken({"a.py": "x\n"}))
    assert (r.status, r.reason) == ("unresolved", "file cannot be read")


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    path=st.lists(st.sampled_from([*"./~\\\x00ab", "src", "..", "topic.py", "etc"]), max_size=12).map("".join)
    | st.text(max_size=30),
    line=st.integers(min_value=1, max_value=10**12),
)
def test_classification_never_reads_outside_the_commit(path: str, line: int) -> None:
    repo = _repo()
    r = RepoIndex().classify(repo, Citation(f"{path}:{line}", 0, path, line), 5)
    assert r.status in ("grounded", "unresolved", "hallucinated")
    for asked in repo.asked:
        assert safe_relpath(asked) == asked
    assert set(repo.read) <= set(repo.files())
    if r.status != "unresolved":
        assert r.resolved_path in repo.files()


def test_against_a_real_pinned_repo_with_an_escaping_symlink(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "topic.py").write_text(TOPIC)
    (src / "README.md").write_text("hello\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("TopicCreator\n" * 100)
    dest = tmp_path / "repo"
    commit = materialize(src, dest)
    # A symlink committed into the repository, pointing outside it.
    os.symlink(secret, dest / "pkg" / "leak.py")
    from proctor.scenarios.repo import _git

    _git(dest, "add", "pkg/leak.py")
    tree = _git(dest, "write-tree").decode().strip()
    linked = _git(
        dest,
        "commit-tree",
        tree,
        "-p",
        commit,
        "-m",
        "link",
        extra_env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.invalid",
        },
    )
    (dest / "pkg" / "topic.py").write_text("working tree edits are never read\n")
    repo = PinnedRepo(dest, linked.decode().strip())
    link = repo.entry("pkg/leak.py")
    assert link is not None and link.is_symlink

    results = check_citations(
        "`TopicCreator` at pkg/topic.py:20; topic.py:51; pkg/leak.py:1; leak.py:TopicCreator; "
        "README.md:1; ../secret.txt:1; " + str(secret) + ":1",
        repo,
    )
    assert [(r.citation.path, r.status) for r in results] == [
        ("pkg/topic.py", "grounded"),
        ("topic.py", "hallucinated"),
        ("pkg/leak.py", "unresolved"),
        ("leak.py", "unresolved"),
        ("README.md", "grounded"),
        ("../secret.txt", "unresolved"),
        (str(secret), "unresolved"),
    ]
    report = GroundingCounts.of(r.status for r in results)
    assert (report.grounded, report.hallucinated, report.unresolved) == (2, 1, 4)
    assert report.rate == pytest.approx(2 / 7)


class _CheckedOut(MemoryRepo):
    """A repository whose checkout lives at ``path``, as a filesystem server shows it."""

    path = Path("/srv/checkout")


@pytest.mark.parametrize(
    ("text", "status", "reason"),
    [
        ("/srv/checkout/src/topic.py:20", "grounded", "exists"),  # absolute, inside the checkout
        ("/srv/other/src/topic.py:20", "unresolved", "absolute"),  # absolute, elsewhere
        ("src/topic.py:0", "unresolved", "line 0"),
        ("src\\topic.py:20", "grounded", "exists"),  # Windows separators
        ("`TopicCreator:20`", "grounded", "src/topic.py:20"),  # Symbol:line, no path
        ("TopicCreator:40", "hallucinated", "lines from line 40"),
        ("Missing_thing:3", "hallucinated", "no file"),
        ("TopicCreator.create:30", "grounded", "src/topic.py:30"),  # a dotted name that is no file
        ("src/topic.py:TopicCreator#create", "grounded", "line 30"),
        ("src/topic.py:TopicCreator.destroy", "hallucinated", "does not occur"),
        ("src/topic.py:Other.create", "hallucinated", "does not occur"),  # the class must be there too
    ],
)
def test_absolute_zero_windows_symbol_line_and_member_citations(text: str, status: str, reason: str) -> None:
    repo = _CheckedOut({"src/topic.py": TOPIC, "src/util.py": numbered(10)})
    r = _cls(text, repo)
    assert (r.status, reason in r.reason) == (status, True), r.reason


class _Pinned(_CheckedOut):
    commit = "c0ffee" * 6 + "c0ff"


def test_grounding_converts_itself_to_its_stored_details() -> None:
    """The score's details name the commit, the checkout and each citation as it resolved."""
    repo = _Pinned({"src/topic.py": TOPIC, "src/util.py": numbered(10)})
    check = check_grounding("`TopicCreator` is at topic.py:20; see nope.py:1", repo, tolerance=3)
    assert check.value == 0.5
    assert check.to_details() == GroundingDetails(
        counts=GroundingCounts(grounded=1, unresolved=1),
        label="50.0% grounded",
        commit=repo.commit,
        repo="/srv/checkout",
        tolerance=3,
        count_rule="file_line: each (file, line range) counted once; a repeated one takes its worst verdict",
        citations=[
            CitationDetails(raw="topic.py:20", path="src/topic.py", line=20, symbol="TopicCreator",
                            status="grounded", reason=check.results[0].reason),
            CitationDetails(raw="nope.py:1", path="nope.py", line=1, status="unresolved",
                            reason=check.results[1].reason),
        ],
    )  # fmt: skip


def test_an_answer_without_citations_scores_none_not_zero() -> None:
    check = check_grounding("no references here", _Pinned({"a.py": "x\n"}))
    assert check.value is None and check.to_details().label == "no citations"
