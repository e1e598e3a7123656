from __future__ import annotations

from proctor.app.compare_model import DIFF_OUTPUT_LINES, align_calls, result_diff
from proctor.app.transcript_state import CallView


def call(tool: str, args: str = "{}", result: str = "r") -> CallView:
    return CallView(f"id-{tool}", "s", tool, args, result)


def test_alignment_leaves_gaps_for_calls_only_one_side_made() -> None:
    left = [call("ls"), call("grep"), call("read")]
    right = [call("ls"), call("read")]
    steps = align_calls(left, right)
    assert [(s.left.tool if s.left else None, s.right.tool if s.right else None) for s in steps] == [
        ("ls", "ls"),
        ("grep", None),
        ("read", "read"),
    ]
    assert steps[0].same_call and steps[0].same_result


def test_replaced_calls_pair_up_and_differing_arguments_are_not_the_same_call() -> None:
    steps = align_calls([call("a", '{"x": 1}')], [call("a", '{"x": 2}')])
    assert len(steps) == 1 and not steps[0].same_call
    steps = align_calls([call("a")], [call("b")])
    assert len(steps) == 1 and steps[0].left is not None and steps[0].right is not None


def test_result_diff_marks_sides_and_is_capped() -> None:
    assert result_diff("same", "same") == []
    lines = result_diff("a\nb\nc", "a\nB\nc")
    assert "-b" in lines and "+B" in lines
    big = result_diff("\n".join(map(str, range(500))), "\n".join(str(i * 7) for i in range(500)))
    assert len(big) == DIFF_OUTPUT_LINES + 1 and big[-1].startswith("…")
