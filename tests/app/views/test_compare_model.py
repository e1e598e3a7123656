"""The call alignment of the compare view (pure), the argument and result diffs, the row text."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.text import Text

from proctor.app.views import call_alignment
from proctor.app.views.call_alignment import (
    EXACT_WEIGHT,
    PARTIAL_WEIGHT,
    ArgChange,
    CallSig,
    Pair,
    align_calls,
    align_signatures,
    argument_changes,
    exact_alignment,
    signature,
)
from proctor.app.views.compare_model import (
    DIFF_INPUT_LINES,
    DIFF_LINE_CHARS,
    DIFF_OUTPUT_LINES,
    compare_rows,
    count_marks,
    result_diff,
)
from proctor.app.views.compare_text import GAP, row_detail, row_line
from proctor.app.views.transcript_state import CallView

_ids = iter(range(10**9))


def call(tool: str, args: object = None, result: str | None = "r", server: str = "s") -> CallView:
    arguments = json.dumps({} if args is None else args, sort_keys=True)
    return CallView(f"c{next(_ids)}", server, tool, arguments, result)


def shape(pairs: Sequence[Pair]) -> list[tuple[int | None, int | None, str]]:
    return [(p.left, p.right, p.kind) for p in pairs]


# -- alignment -------------------------------------------------------------------------------------


def test_an_inserted_call_is_a_gap_on_the_other_side_and_later_calls_stay_paired() -> None:
    left = [call("ls"), call("read", {"path": "a"})]
    right = [call("ls"), call("grep", {"pattern": "x"}), call("read", {"path": "a"})]
    assert shape(align_calls(left, right)) == [(0, 0, "same"), (None, 1, "right"), (1, 2, "same")]


def test_a_deleted_call_is_a_gap_on_the_right() -> None:
    left = [call("ls"), call("grep", {"pattern": "x"}), call("read", {"path": "a"})]
    right = [call("ls"), call("read", {"path": "a"})]
    assert shape(align_calls(left, right)) == [(0, 0, "same"), (1, None, "left"), (2, 1, "same")]


def test_reordered_calls_keep_one_pair_and_link_the_two_gaps_as_twins() -> None:
    a, b = call("grep", {"p": "x"}), call("read", {"path": "a"})
    rows = align_calls([a, b], [call("read", {"path": "a"}), call("grep", {"p": "x"})])
    # a tie (either call could pair): the earliest left call is the one left unpaired
    assert shape(rows) == [(0, None, "left"), (1, 0, "same"), (None, 1, "right")]
    assert rows[0].twin == 2 and rows[2].twin == 0 and rows[1].twin is None


def test_same_tool_with_different_arguments_pairs_as_a_partial_match() -> None:
    left = [call("grep", {"pattern": "Job", "path": "src", "flags": None})]
    right = [call("grep", {"pattern": "job", "ignore_case": True})]
    assert shape(align_calls(left, right)) == [(0, 0, "args")]
    assert argument_changes(left[0], right[0]) == [
        ArgChange("+", "ignore_case", right="true"),
        ArgChange("-", "path", left='"src"'),
        ArgChange("~", "pattern", '"Job"', '"job"'),
    ]


def test_different_tools_never_pair() -> None:
    assert shape(align_calls([call("ls")], [call("grep")])) == [(0, None, "left"), (None, 0, "right")]


def test_an_exact_match_wins_over_a_partial_one() -> None:
    left = [call("grep", {"p": "x"}), call("grep", {"p": "y"})]
    right = [call("grep", {"p": "y"})]
    assert shape(align_calls(left, right)) == [(0, None, "left"), (1, 0, "same")]


def test_repeated_identical_calls_pair_in_order_and_the_surplus_shows_last() -> None:
    left = [call("ls"), call("ls"), call("ls")]
    assert shape(align_calls(left, [call("ls"), call("ls")])) == [
        (0, 0, "same"),
        (1, 1, "same"),
        (2, None, "left"),
    ]
    x, y = {"p": "x"}, {"p": "y"}
    left = [call("g", x), call("g", y), call("g", x)]
    assert shape(align_calls(left, [call("g", x), call("g", x)])) == [
        (0, 0, "same"),
        (1, None, "left"),
        (2, 1, "same"),
    ]


def test_empty_sides() -> None:
    assert align_calls([], []) == []
    assert shape(align_calls([call("ls")], [])) == [(0, None, "left")]
    assert shape(align_calls([], [call("ls"), call("ls")])) == [(None, 0, "right"), (None, 1, "right")]


def test_arguments_match_once_normalized_and_servers_are_not_part_of_a_call() -> None:
    left = [call("read", {"path": "a", "n": 5, "opt": None}, server="baseline")]
    right = [CallView("c", "mcp", "read", '{"n": "5.0",  "path": " a "}', "r")]
    rows = compare_rows(left, right)
    assert [r.mark for r in rows] == ["same"] and rows[0].servers_differ
    assert not compare_rows([call("read", server="x")], [call("read", server="x")])[0].servers_differ


def test_a_call_through_the_router_counts_as_the_tool_it_executed() -> None:
    routed = CallView(
        "c1", "proctor-router", "execute", json.dumps({"tool": "grep", "arguments": {"p": "x"}}), "r"
    )
    route = CallView("c0", "proctor-router", "route", '{"query": "find x"}', "[]")
    rows = compare_rows([call("grep", {"p": "x"}, server="codeintel")], [route, routed])
    assert [r.mark for r in rows] == ["right", "same"]
    assert not rows[1].servers_differ  # which server ran it is known from its result only
    routed.result_server = "codeintel"
    assert not rows[1].servers_differ
    routed.result_server = "other"
    assert rows[1].servers_differ
    assert signature(routed) == CallSig("grep", signature(call("grep", {"p": "x"})).arguments)


def test_rows_mark_same_calls_whose_results_differ_and_count_marks() -> None:
    left = [call("ls", result="a"), call("cat", {"f": 1}), call("rm"), call("ps", result=None)]
    right = [call("ls", result="b"), call("cat", {"f": 2}), call("ps", result=None), call("top")]
    rows = compare_rows(left, right)
    assert [r.mark for r in rows] == ["result", "args", "left", "result", "right"]
    assert [r.is_difference for r in rows] == [True] * 5
    assert count_marks(rows) == {"same": 0, "result": 2, "args": 1, "left": 1, "right": 1}
    assert compare_rows([call("ls")], [call("ls")])[0].mark == "same"


def _best(a: Sequence[CallSig], b: Sequence[CallSig]) -> int:
    """Reference: the best 4·exact + partial by the textbook prefix recurrence."""
    score = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            pair = -1
            if a[i - 1].tool == b[j - 1].tool:
                pair = score[i - 1][j - 1] + (EXACT_WEIGHT if a[i - 1] == b[j - 1] else PARTIAL_WEIGHT)
            score[i][j] = max(score[i - 1][j], score[i][j - 1], pair)
    return score[-1][-1]


def _check(a: Sequence[CallSig], b: Sequence[CallSig], rows: Sequence[Pair]) -> int:
    """The rows are an alignment (every call once, both sides in order, pairs of one tool); its score."""
    assert [p.left for p in rows if p.left is not None] == list(range(len(a)))
    assert [p.right for p in rows if p.right is not None] == list(range(len(b)))
    total = 0
    for p in rows:
        if p.left is not None and p.right is not None:
            assert a[p.left].tool == b[p.right].tool
            assert p.kind == ("same" if a[p.left] == b[p.right] else "args")
            total += EXACT_WEIGHT if p.kind == "same" else PARTIAL_WEIGHT
        else:
            assert p.kind == ("left" if p.left is not None else "right")
    return total


sigs = st.lists(
    st.builds(lambda t, x: CallSig(t, (("x", ("n", x)),)), st.sampled_from("abc"), st.integers(0, 2)),
    max_size=9,
)


@settings(max_examples=300, deadline=None)
@given(sigs, sigs)
def test_the_alignment_is_optimal_valid_and_deterministic(a: list[CallSig], b: list[CallSig]) -> None:
    rows = align_signatures(a, b)
    assert _check(a, b, rows) == _best(a, b)
    assert align_signatures(a, b) == rows


def test_past_the_table_limit_alignment_goes_block_by_block(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(7)
    a = [CallSig(rng.choice("abcd"), (("x", ("n", rng.randrange(3))),)) for _ in range(60)]
    b = [CallSig(rng.choice("abcd"), (("x", ("n", rng.randrange(3))),)) for _ in range(50)]
    monkeypatch.setattr(call_alignment, "MAX_CELLS", 400)
    assert not exact_alignment(60, 50) and exact_alignment(20, 20)
    rows = align_signatures(a, b)
    assert 0 < _check(a, b, rows) <= _best(a, b)


def test_two_thousand_calls_a_side_align_to_a_valid_alignment() -> None:
    """Speed is measured by tests/bench/bench_call_alignment.py, not asserted here."""
    rng = random.Random(3)
    tools = ["grep", "read", "ls", "find", "search", "open", "list", "stat"]

    def side() -> list[CallView]:
        return [call(rng.choice(tools), {"q": rng.randrange(40)}) for _ in range(2000)]

    left, right = side(), side()
    rows = align_calls(left, right)
    assert _check([signature(c) for c in left], [signature(c) for c in right], rows) > 0


# -- argument and result diffs ---------------------------------------------------------------------


def test_arguments_that_are_not_objects_compare_as_one_value() -> None:
    left = CallView("a", "s", "t", "not json", "r")
    right = CallView("b", "s", "t", '"not json"', "r")
    assert argument_changes(left, right) == []
    assert argument_changes(left, CallView("c", "s", "t", "[1]", "r")) == [
        ArgChange("~", "(arguments)", '"not json"', "[1]")
    ]


def test_result_diff_marks_sides_says_same_and_is_capped() -> None:
    assert result_diff("same", "same").same
    diff = result_diff("a\nb\nc", "a\nB\nc")
    assert not diff.same and "-b" in diff.lines and "+B" in diff.lines and diff.more == 0
    big = result_diff("\n".join(map(str, range(500))), "\n".join(str(i * 7) for i in range(500)))
    assert len(big.lines) == DIFF_OUTPUT_LINES and big.more > 0
    assert result_diff("x", None).notes == ["no result yet on the right"]


def test_result_diff_of_json_documents_compares_them_pretty_printed() -> None:
    same = result_diff('{"a": 1, "b": 2}', '{"b":2,"a":1}')
    assert same.same and "layout or key order" in same.notes[0]
    diff = result_diff('{"a": 1, "b": [1, 2]}', '{"a": 1, "b": [1, 3]}')
    assert "-    2" in diff.lines and "+    3" in diff.lines and "pretty-printed" in diff.notes[0]


def test_result_diff_says_what_it_did_not_compare() -> None:
    long_a = "\n".join(["same"] * DIFF_INPUT_LINES + ["a"])
    long_b = "\n".join(["same"] * DIFF_INPUT_LINES + ["b"])
    diff = result_diff(long_a, long_b)
    assert not diff.same and not diff.lines
    assert any("first 2,000 of the left's 2,001 lines" in n for n in diff.notes)
    assert any("differ after them" in n for n in diff.notes)
    wide = result_diff("x" * 1000, "y" * 1000)
    assert wide.lines[1].endswith(f"… {1001 - DIFF_LINE_CHARS} more chars")  # with the "-"
    flagged = result_diff("boom", "boom", left_error=True)
    assert not flagged.same and flagged.notes == ["only the left call ended in an error"]


# -- row text: hostile tool text stays literal -----------------------------------------------------

HOSTILE = "[@click=app.quit]x[/] \x1b]0;pwned\x07\x1b[2J\u202eevil"


def test_rows_and_details_of_hostile_calls_are_sanitized_plain_text() -> None:
    left = [CallView("a", HOSTILE, HOSTILE, json.dumps({"q": HOSTILE}), HOSTILE + "\nline")]
    right = [CallView("b", "s", HOSTILE, json.dumps({"q": "[b]"}), "other")]
    rows = compare_rows(left, right)
    assert [r.mark for r in rows] == ["args"]
    texts: list[Text] = [row_line(rows[0], 100), *row_detail(rows[0])]
    plain = "\n".join(t.plain for t in texts)
    assert "\x1b" not in plain and "\x07" not in plain and "\u202e" not in plain
    assert "[@click=app.quit]x[/] evil" in plain  # tool, server and result: the sequences are gone
    assert "\\u001b]0;pwned" in plain  # arguments are JSON: their control characters show escaped


def test_a_row_line_fits_its_width_and_marks_what_it_cut() -> None:
    rows = compare_rows([call("read", {"path": "p" * 300})], [])
    line = row_line(rows[0], 100)
    assert line.cell_len == 100 and "…" in line.plain and GAP in line.plain
    detail = "".join(t.plain for t in row_detail(rows[0]))
    assert "p" * 300 in detail
