"""TFS / TEFS (MCPAgentBench), argument normalization, lenient and names-only modes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.engine.scoring import (
    match_tool_calls,
    normalize_arguments,
    tefs,
    tfs,
    unsatisfiable_gold_calls,
)
from proctor.scenarios.schema import GoldCall, ToolMatchMode


@dataclass(frozen=True)
class Call:
    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    server: str = "s"
    is_error: bool = False


def G(tool: str, server: str | None = None, **args: Any) -> GoldCall:
    return GoldCall(tool=tool, arguments=args, server=server)


# gold: step 1 = {weather(city=Paris), weather(city=Rome)} in parallel; step 2 = {compare}
GOLD = [[G("weather", city="Paris"), G("weather", city="Rome")], [G("compare")]]


def test_exact_parallel_then_serial_is_finished_and_efficient() -> None:
    steps = [[Call("weather", {"city": "Rome"}), Call("weather", {"city": "Paris"})], [Call("compare")]]
    m = match_tool_calls(GOLD, steps)
    assert (m.finished, m.efficiently_finished, m.gold_calls) == (True, True, 3)
    assert (m.gold_steps, m.agent_steps) == (2, 2)


def test_serialized_parallel_calls_finish_but_not_efficiently() -> None:
    steps = [[Call("weather", {"city": "Paris"})], [Call("weather", {"city": "Rome"})], [Call("compare")]]
    m = match_tool_calls(GOLD, steps)
    assert (m.finished, m.efficiently_finished) == (True, False)


def test_missing_and_unexpected_calls() -> None:
    steps = [[Call("weather", {"city": "Paris"}), Call("weather", {"city": "Berlin"})], [Call("compare")]]
    m = match_tool_calls(GOLD, steps)
    assert not m.finished and not m.efficiently_finished
    assert m.missing == ('weather({"city": "Rome"})',)
    assert m.unexpected == ('weather({"city": "Berlin"})',)


def test_a_call_answered_with_an_error_is_dropped_and_listed_and_a_successful_retry_matches() -> None:
    gold = [[G("read", path="a")]]
    failed = Call("read", {"path": "a"}, is_error=True)
    m = match_tool_calls(gold, [[failed]])
    assert (m.finished, m.missing, m.unexpected) == (False, ('read({"path": "a"})',), ())
    assert m.failed_calls == ('read({"path": "a"})',)
    m = match_tool_calls(gold, [[failed], [Call("read", {"path": "a"})]])
    assert (m.finished, m.efficiently_finished) == (True, True)  # the errored step is dropped whole
    assert m.to_details().failed_calls == ['read({"path": "a"})']


def test_a_gold_call_expecting_an_error_is_matched_only_by_an_error() -> None:
    gold = [[G("read", path="/etc/passwd").model_copy(update={"expect_error": True})], [G("read", path="a")]]
    refused = Call("read", {"path": "/etc/passwd"}, is_error=True)
    ok = [[refused], [Call("read", {"path": "a"})]]
    modes: tuple[ToolMatchMode, ...] = ("strict", "lenient", "mcpagentbench")
    for mode in modes:
        m = match_tool_calls(gold, ok, mode=mode)
        assert (m.finished, m.efficiently_finished, m.failed_calls) == (True, True, ()), mode
        # the server answered what it must refuse: a regression, whatever the mode
        served = [[Call("read", {"path": "/etc/passwd"})], [Call("read", {"path": "a"})]]
        m = match_tool_calls(gold, served, mode=mode)
        assert not m.finished and not m.efficiently_finished, mode
    m = match_tool_calls(gold, served)
    assert m.missing == ('read({"path": "/etc/passwd"}) -> error',)
    assert m.unexpected == ('read({"path": "/etc/passwd"})',)
    # an error where the gold expects a result is still a failed call, not a match
    m = match_tool_calls(gold, [[refused], [Call("read", {"path": "a"}, is_error=True)]])
    assert (m.finished, m.failed_calls) == (False, ('read({"path": "a"})',))


def test_repeating_an_identical_call_keeps_the_set_but_breaks_the_steps() -> None:
    steps = [
        [Call("weather", {"city": "Paris"}), Call("weather", {"city": "Rome"})],
        [Call("weather", {"city": "Rome"})],
        [Call("compare")],
    ]
    m = match_tool_calls(GOLD, steps)
    assert (m.finished, m.efficiently_finished) == (True, False)


def test_weighted_scores_by_gold_call_count() -> None:
    ok_eff = match_tool_calls(
        GOLD, [[Call("weather", {"city": "Paris"}), Call("weather", {"city": "Rome"})], [Call("compare")]]
    )
    ok_serial = match_tool_calls([[G("a")], [G("b")]], [[Call("a"), Call("b")]])
    failed = match_tool_calls([[G("x", q=1)]], [[Call("x", {"q": 2})]])
    no_gold = match_tool_calls([], [[Call("x")]])
    matches = [ok_eff, ok_serial, failed, no_gold]
    # weights |G|: 3, 2, 1, 0. TFS = (3 + 2) / (3 + 2 + 1) = 5/6; TEFS = 3 / 6 = 0.5
    assert ok_serial.finished and not ok_serial.efficiently_finished
    assert tfs(matches) == pytest.approx(5 / 6)
    assert tefs(matches) == pytest.approx(0.5)
    assert tfs([no_gold]) is None and tefs([]) is None


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        ({"x": 1, "y": 2}, {"y": 2, "x": 1}, True),  # key order
        ({"n": "5"}, {"n": 5}, True),  # numeric string
        ({"n": " 5.0 "}, {"n": 5}, True),
        ({"n": 0.1 + 0.2}, {"n": "0.3"}, True),  # 12 significant digits
        ({"s": "  hello   world "}, {"s": "hello world"}, True),  # whitespace
        ({"s": "Hello"}, {"s": "hello"}, False),  # case is kept
        ({"b": True}, {"b": 1}, False),  # booleans are not numbers
        ({"b": "true"}, {"b": True}, False),
        ({"o": None, "x": 1}, {"x": 1}, True),  # null == absent
        ({"l": [1, 2]}, {"l": [2, 1]}, False),  # list order matters
        ({"d": {"b": "2", "a": [{"z": 1, "y": None}]}}, {"d": {"a": [{"z": "1"}], "b": 2}}, True),
        ({"zip": "02139"}, {"zip": 2139}, True),  # documented consequence of numeric strings
    ],
)
def test_argument_normalization(a: dict[str, Any], b: dict[str, Any], equal: bool) -> None:
    assert (normalize_arguments(a) == normalize_arguments(b)) is equal


def test_lenient_mode_drops_optional_args_gold_does_not_use() -> None:
    gold = [[G("search", query="cats")]]
    schemas = {
        "search": {"properties": {"query": {}, "limit": {}, "lang": {}}, "required": ["query", "lang"]}
    }
    extra = [[Call("search", {"query": "cats", "limit": 10})]]
    assert not match_tool_calls(gold, extra).finished
    assert match_tool_calls(gold, extra, mode="lenient", tool_schemas=schemas).finished
    # "lang" is required by the schema, so it is never dropped
    required_extra = [[Call("search", {"query": "cats", "lang": "en"})]]
    assert not match_tool_calls(gold, required_extra, mode="lenient", tool_schemas=schemas).finished
    # without a schema every argument gold does not use is dropped
    assert match_tool_calls(gold, required_extra, mode="lenient").finished
    # lenient never forgives a wrong value of an argument gold does use
    assert not match_tool_calls(gold, [[Call("search", {"query": "dogs"})]], mode="lenient").finished


def test_names_only_tools_ignore_arguments() -> None:
    gold = [[G("now", tz="UTC")], [G("search", q="x")]]
    steps = [[Call("now", {"tz": "Europe/Paris"})], [Call("search", {"q": "x"})]]
    assert not match_tool_calls(gold, steps).finished
    m = match_tool_calls(gold, steps, names_only=["now"])
    assert m.finished and m.efficiently_finished


def test_gold_server_must_match_when_given() -> None:
    gold = [[G("read", server="fs", path="a")]]
    assert match_tool_calls(gold, [[Call("read", {"path": "a"}, server="fs")]]).finished
    assert not match_tool_calls(gold, [[Call("read", {"path": "a"}, server="other")]]).finished
    # without a server in gold, any server matches
    assert match_tool_calls([[G("read", path="a")]], [[Call("read", {"path": "a"}, server="x")]]).finished


def test_unsatisfiable_gold_calls() -> None:
    schemas: dict[str, Mapping[str, Any]] = {
        "search": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        "open": {"type": "object", "properties": {"id": {"type": "integer"}}, "additionalProperties": True},
    }
    gold = [
        [G("search", query="x"), G("search", q="x")],
        [G("missing"), G("open", id=3, extra=1), G("open", id="3")],
    ]
    out = unsatisfiable_gold_calls(gold, schemas)
    assert [(u.step, u.index, u.tool, u.problems) for u in out] == [
        (0, 1, "search", ("unknown argument 'q'", "missing required argument 'query'")),
        (1, 0, "missing", ("unknown tool 'missing'",)),
        (1, 2, "open", ("argument 'id' is not of type integer",)),
    ]
    assert [u.index for u in unsatisfiable_gold_calls(gold, schemas, names_only=["search"])] == [0, 2]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=10,
)


@settings(deadline=None, derandomize=True)
@given(st.dictionaries(st.text(max_size=5), _JSON, max_size=5))
def test_normalization_is_hashable_and_order_independent(args: dict[str, Any]) -> None:
    norm = normalize_arguments(args)
    hash(norm)
    assert normalize_arguments(dict(reversed(list(args.items())))) == norm
    gold = [[GoldCall(tool="t", arguments=args)]]
    assert match_tool_calls(gold, [[Call("t", args)]]).efficiently_finished


def test_mcpagentbench_mode_follows_upstreams_rules_not_proctors() -> None:
    """str(v) comparison, steps compared as sets pairwise, skip-list tools by name only."""
    gold = [[G("search", q="5")], [G("fetch", id=1)]]
    as_int = [[Call("search", {"q": 5})], [Call("fetch", {"id": "1"})]]
    m = match_tool_calls(gold, as_int, mode="mcpagentbench")
    assert (m.finished, m.efficiently_finished, m.mode) == (True, True, "mcpagentbench")
    as_float = [[Call("search", {"q": 5.0})], [Call("fetch", {"id": 1})]]
    assert not match_tool_calls(gold, as_float, mode="mcpagentbench").finished  # "5.0" != "5"
    assert match_tool_calls(gold, as_float).finished  # proctor's strict mode: 5.0 == "5"
    merged = [[Call("search", {"q": "5"}), Call("fetch", {"id": 1})]]
    m = match_tool_calls(gold, merged, mode="mcpagentbench")
    assert m.finished and not m.efficiently_finished
    skip = [[Call("search", {"anything": True})], [Call("fetch", {"id": 1})]]
    assert match_tool_calls(gold, skip, mode="mcpagentbench", names_only=["search"]).efficiently_finished


@dataclass(frozen=True)
class Answered:
    """A call with its result, as a trial's digest records it."""

    tool: str
    arguments: Mapping[str, Any]
    result: str
    server: str = "sqlite"
    is_error: bool = False
    has_result: bool = True
    structured: Mapping[str, Any] | None = None


# What mcp-server-sqlite answers (tests/engine/fixtures/tool_results/results.json): isError false.
NO_TABLE = "Database error: no such table: nowhere"
QUERY = {"query": "SELECT name, price FROM parts"}


@pytest.mark.parametrize("mode", ["strict", "lenient", "mcpagentbench"])
def test_a_gold_call_with_an_expectation_matches_only_a_result_that_holds_it(mode: ToolMatchMode) -> None:
    gold = [
        [
            GoldCall.model_validate(
                {"tool": "read_query", "arguments": QUERY, "expect": {"contains": "'bolt'"}}
            )
        ]
    ]
    ok = match_tool_calls(
        gold, [[Answered("read_query", QUERY, "[{'name': 'bolt', 'price': 0.25}]")]], mode=mode
    )
    assert (ok.finished, ok.unmet_expectations) == (True, ())
    bad = match_tool_calls(gold, [[Answered("read_query", QUERY, NO_TABLE)]], mode=mode)
    assert (bad.finished, bad.efficiently_finished) == (False, False)
    assert bad.unmet_expectations == (
        'read_query({"query": "SELECT name, price FROM parts"}): the result does not contain "\'bolt\'"',
    )
    assert bad.to_details().unmet_expectations == list(bad.unmet_expectations)
    # without an expectation the same call matches, as before: what came back is not checked
    plain = match_tool_calls(
        [[G("read_query", **QUERY)]], [[Answered("read_query", QUERY, NO_TABLE)]], mode=mode
    )
    assert plain.finished


def test_a_retry_whose_result_holds_the_expectation_still_matches() -> None:
    gold = [
        [
            GoldCall.model_validate(
                {"tool": "read_query", "arguments": QUERY, "expect": {"not_contains": "error"}}
            )
        ]
    ]
    steps = [[Answered("read_query", QUERY, NO_TABLE)], [Answered("read_query", QUERY, "[]")]]
    m = match_tool_calls(gold, steps)
    assert m.finished and len(m.unmet_expectations) == 1  # dropped like a failed call


def test_a_review_note_checks_nothing_and_is_listed() -> None:
    gold = [
        [
            GoldCall.model_validate(
                {"tool": "read_query", "arguments": QUERY, "expect": {"review": "not probed"}}
            )
        ]
    ]
    m = match_tool_calls(gold, [[Answered("read_query", QUERY, NO_TABLE)]])
    assert m.finished and m.review == ('read_query({"query": "SELECT name, price FROM parts"}): not probed',)
