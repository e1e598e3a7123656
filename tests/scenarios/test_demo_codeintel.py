"""The code-intelligence tools over the demo repository: good answers and stale ones."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from proctor.scenarios.demo import REPO_SOURCE_DIR
from proctor.scenarios.demo.servers.code_index import CodeIndex, stem, words
from proctor.scenarios.demo.servers.codeintel_stale import STALE_VIEW
from proctor.scenarios.demo.servers.codeintel_tools import DEFINITION_MAX_LINES, CodeIntel, IndexView
from proctor.scenarios.repo import PinnedRepo, materialize

LOCATION = re.compile(r"^(?P<path>[^:\s]+):(?P<line>\d+): (?P<kind>\w+) (?P<name>[\w.]+)$")
DEFINITION = re.compile(r"^(?P<path>[^:\s]+):(?P<start>\d+)-(?P<end>\d+): (?P<kind>\w+) (?P<name>[\w.]+)$")
NUMBERED = re.compile(r"^ *(?P<n>\d+) \| (?P<text>.*)$")
REFERENCE = re.compile(r"^(?P<path>[^:\s]+):(?P<line>\d+): (?P<text>.*)$")
# Symbols the scenarios are about; a stale citation of any of them must not be grounded.
SCENARIO_SYMBOLS = [
    ("tinyq/retry.py", "compute_backoff"),
    ("tinyq/retry.py", "compute_backoff_jitter"),
    ("tinyq/retry.py", "MAX_RETRY_DELAY"),
    ("tinyq/ratelimit.py", "TokenBucket._refill"),
    ("tinyq/ratelimit.py", "TokenBucket.try_acquire"),
    ("tinyq/worker.py", "Worker._handle_failure"),
    ("tinyq/retry.py", "RetryPolicy.should_retry"),
    ("tinyq/config.py", "env_overrides"),
    ("tinyq/config.py", "DEFAULT_CONCURRENCY"),
    ("tinyq/storage/sqlite.py", "SqliteStorage.claim_next"),
    ("tinyq/scheduler.py", "sort_key"),
    ("tinyq/worker.py", "resolve_concurrency"),
    ("tinyq/worker.py", "WorkerPool.shutdown"),
    ("tinyq/worker.py", "SHUTDOWN_GRACE_SECONDS"),
    ("tinyq/cli.py", "cmd_enqueue"),
]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CodeIndex]:
    dest = tmp_path_factory.mktemp("demo-repo")
    yield CodeIndex(PinnedRepo(dest, materialize(REPO_SOURCE_DIR, dest)))


@pytest.fixture(scope="module")
def good(index: CodeIndex) -> CodeIntel:
    return CodeIntel(index, IndexView())


@pytest.fixture(scope="module")
def stale(index: CodeIndex) -> CodeIntel:
    return CodeIntel(index, STALE_VIEW)


def _grounded(index: CodeIndex, path: str, line: int, name: str, tolerance: int = 5) -> bool:
    """DESIGN §5: the file exists, the line is within EOF, the name occurs within ±tolerance lines."""
    lines = index.text.get(path)
    if lines is None or not 1 <= line <= len(lines):
        return False
    bare = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name.split('.')[-1])}(?![A-Za-z0-9_])")
    window = lines[max(0, line - 1 - tolerance) : line + tolerance]
    return any(bare.search(text) for text in window)


def test_words_split_identifiers_and_stem() -> None:
    assert words("MAX_RETRY_DELAY") == ["max", "retry", "delay"]
    assert words("SqliteStorage.claim_next") == ["sqlit", "storag", "claim", "next"]
    assert stem("retrying") == stem("retry") and stem("caps") == stem("capped") == "cap"


def test_exact_name_beats_longer_similar_name(good: CodeIntel) -> None:
    first, second = good.search_symbols("compute_backoff").splitlines()[:2]
    assert LOCATION.match(first) and first.endswith("function compute_backoff")
    assert second.endswith("function compute_backoff_jitter")
    assert good.search_symbols("compute_backoff_jitter").splitlines()[0].endswith("compute_backoff_jitter")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("the function that decides how long to wait before retrying", "compute_backoff"),
        ("Where is the retry delay computed and what caps it?", "MAX_RETRY_DELAY"),
        ("token bucket refill", "TokenBucket._refill"),
        ("claim a job so two workers don't take the same one", "SqliteStorage.claim_next"),
        ("how many worker threads a pool starts", "resolve_concurrency"),
        ("default concurrency", "DEFAULT_CONCURRENCY"),
    ],
)
def test_search_by_meaning_finds_the_code(good: CodeIntel, query: str, expected: str) -> None:
    names = [m["name"] for m in map(LOCATION.match, good.search_symbols(query, 5).splitlines()) if m]
    assert expected in names


def test_search_puts_code_before_tests(good: CodeIntel) -> None:
    hits = good.search_symbols("retry delay cap", 5).splitlines()
    assert not hits[0].startswith("tinyq/tests/")


def test_definition_lines_are_the_real_source(good: CodeIntel, index: CodeIndex) -> None:
    out = good.find_definition("compute_backoff").splitlines()
    head = DEFINITION.match(out[0])
    assert head and head["path"] == "tinyq/retry.py" and head["kind"] == "function"
    source = index.text["tinyq/retry.py"]
    assert source[int(head["start"]) - 1].startswith("def compute_backoff(")
    for row in out[1:]:
        m = NUMBERED.match(row)
        assert m, row
        assert source[int(m["n"]) - 1] == m["text"]
    last = NUMBERED.match(out[-1])
    assert last and int(last["n"]) == int(head["end"])


def test_long_definitions_are_cut_and_say_so(good: CodeIntel) -> None:
    out = good.find_definition("RetryPolicy").splitlines()
    head = DEFINITION.match(out[0])
    assert head and int(head["end"]) - int(head["start"]) + 1 > DEFINITION_MAX_LINES
    assert sum(bool(NUMBERED.match(r)) for r in out) == DEFINITION_MAX_LINES
    assert out[-1].startswith(f"... cut at {DEFINITION_MAX_LINES} of") and "read_lines(" in out[-1]


def test_definition_accepts_qualified_and_dotted_names(good: CodeIntel) -> None:
    for name in ["SqliteStorage.claim_next", "tinyq.storage.sqlite.SqliteStorage.claim_next"]:
        assert good.find_definition(name).startswith("tinyq/storage/sqlite.py:")
    with pytest.raises(ToolError, match="similar names: compute_backoff"):
        good.find_definition("compute_backof")


def test_references_are_whole_words_on_real_lines(good: CodeIntel, index: CodeIndex) -> None:
    rows = [REFERENCE.match(r) for r in good.find_references("compute_backoff", limit=50).splitlines()]
    assert rows and all(rows)
    paths = {m["path"] for m in rows if m}
    assert {"tinyq/retry.py", "tinyq/__init__.py", "tinyq/tests/test_retry.py"} <= paths
    for m in rows:
        assert m is not None
        line = index.text[m["path"]][int(m["line"]) - 1]
        assert line.strip() == m["text"]
        assert re.search(r"compute_backoff(?!_)", line)
        assert not line.lstrip().startswith("def compute_backoff(")


def test_read_lines_clamps_to_eof_and_rejects_bad_ranges(good: CodeIntel, index: CodeIndex) -> None:
    n = len(index.text["tinyq/clock.py"])
    out = good.read_lines("tinyq/clock.py", n - 1, n + 50).splitlines()
    assert out[0] == f"tinyq/clock.py:{n - 1}-{n}" and len(out) == 3
    for start, end, message in [
        (0, 5, "start must be"),
        (9, 3, "before start"),
        (n + 1, n + 2, "past the end"),
    ]:
        with pytest.raises(ToolError, match=message):
            good.read_lines("tinyq/clock.py", start, end)
    with pytest.raises(ToolError, match="is a directory"):
        good.read_lines("tinyq/storage", 1, 2)


def test_list_files_filters_by_prefix(good: CodeIntel) -> None:
    assert good.list_files("tinyq/storage/").splitlines() == [
        "tinyq/storage/__init__.py",
        "tinyq/storage/base.py",
        "tinyq/storage/memory.py",
        "tinyq/storage/sqlite.py",
    ]
    with pytest.raises(ToolError, match="not allowed"):
        good.list_files("../")


@pytest.mark.parametrize(("path", "symbol"), SCENARIO_SYMBOLS)
def test_good_citations_are_grounded_and_stale_ones_are_not(
    good: CodeIntel, stale: CodeIntel, index: CodeIndex, path: str, symbol: str
) -> None:
    good_head = DEFINITION.match(good.find_definition(symbol).splitlines()[0])
    stale_head = DEFINITION.match(stale.find_definition(symbol).splitlines()[0])
    assert good_head and stale_head and good_head["path"] == stale_head["path"] == path
    assert _grounded(index, path, int(good_head["start"]), symbol)
    assert not _grounded(index, path, int(stale_head["start"]), symbol)


def test_stale_server_is_consistent_with_itself(stale: CodeIntel) -> None:
    hit = LOCATION.match(stale.search_symbols("compute_backoff").splitlines()[0])
    assert hit is not None
    line = int(hit["line"])
    shown = stale.read_lines(hit["path"], line, line).splitlines()[1]
    assert shown.endswith("| def compute_backoff(")
    assert stale.read_lines("tinyq/retry.py", 1, 1).splitlines()[1].endswith("| # " + "-" * 77)


def test_stale_references_miss_files(good: CodeIntel, stale: CodeIntel) -> None:
    def paths(intel: CodeIntel) -> set[str]:
        return {r.split(":")[0] for r in intel.find_references("compute_backoff", limit=100).splitlines()}

    assert paths(stale) < paths(good)
    assert "tinyq/__init__.py" not in paths(stale)
