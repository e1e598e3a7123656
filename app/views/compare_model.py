"""What the compare view shows, as data: aligned call rows and the diff of two results (pure).

Calls are aligned by ``call_alignment`` (same tool and arguments side by side, a real sequence
alignment); each row knows its kind (same call, arguments differ, only left, only right) and
whether the results are the same. Results are diffed line by line (``difflib`` unified diff),
after pretty-printing when both are JSON documents, so that a one-line JSON result diffs by field
and not as one changed line. Every cap says what it cut.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from proctor.app.views.call_alignment import Pair, align_calls, effective
from proctor.app.views.transcript_state import CallView

DIFF_INPUT_LINES = 2000
DIFF_OUTPUT_LINES = 200
DIFF_LINE_CHARS = 400
JSON_PRETTY_CHARS = 1_000_000

MARKS = {
    "same": "same",
    "result": "result ≠",
    "args": "args ≠",
    "left": "only left",
    "right": "only right",
}


@dataclass(frozen=True)
class CompareRow:
    """One aligned row: the pair of indexes and the calls they point at."""

    pair: Pair
    left: CallView | None
    right: CallView | None

    @property
    def both(self) -> bool:
        return self.left is not None and self.right is not None

    @property
    def same_result(self) -> bool:
        return (
            self.left is not None
            and self.right is not None
            and self.left.result is not None
            and self.left.result == self.right.result
            and self.left.is_error == self.right.is_error
        )

    @property
    def mark(self) -> str:
        """``same``, ``result`` (same call, results differ), ``args``, ``left`` or ``right``."""
        if self.pair.kind == "same" and not self.same_result:
            return "result"
        return self.pair.kind

    @property
    def is_difference(self) -> bool:
        return self.mark != "same"

    @property
    def servers_differ(self) -> bool:
        """Paired across servers (by tool name). A call through the router's ``execute`` ran on
        the server that answered it; before its result that is not known, and it does not count."""
        a, b = answering_server(self.left), answering_server(self.right)
        return bool(a) and bool(b) and a != b


def answering_server(call: CallView | None) -> str:
    """The server that ran the call ('' when not known yet: a routed call without its result)."""
    if call is None:
        return ""
    if effective(call).via_router:
        return call.result_server
    return call.result_server or call.server


def compare_rows(left: Sequence[CallView], right: Sequence[CallView]) -> list[CompareRow]:
    return rows_from_pairs(align_calls(left, right), left, right)


def rows_from_pairs(
    pairs: Sequence[Pair], left: Sequence[CallView], right: Sequence[CallView]
) -> list[CompareRow]:
    return [
        CompareRow(
            p,
            left[p.left] if p.left is not None else None,
            right[p.right] if p.right is not None else None,
        )
        for p in pairs
    ]


def count_marks(rows: Sequence[CompareRow]) -> dict[str, int]:
    counts = dict.fromkeys(MARKS, 0)
    for row in rows:
        counts[row.mark] += 1
    return counts


# -- result diff ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResultDiff:
    """``same``: identical results (no lines). ``lines``: unified diff lines (``-`` left only,
    ``+`` right only, `` `` context, ``@@`` hunks), capped; ``more``: diff lines cut; ``notes``:
    how the texts were compared (JSON pretty-printed, first lines only, error flags)."""

    same: bool
    lines: list[str] = field(default_factory=list)
    more: int = 0
    notes: list[str] = field(default_factory=list)


def _json_document(text: str) -> Any:
    stripped = text.strip()
    if len(stripped) > JSON_PRETTY_CHARS or stripped[:1] not in ("{", "["):
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return None


def _cut_line(line: str) -> str:
    if len(line) <= DIFF_LINE_CHARS:
        return line
    return f"{line[:DIFF_LINE_CHARS]}… {len(line) - DIFF_LINE_CHARS} more chars"


def result_diff(
    left: str | None,
    right: str | None,
    *,
    left_error: bool = False,
    right_error: bool = False,
    max_lines: int = DIFF_OUTPUT_LINES,
) -> ResultDiff:
    notes: list[str] = []
    if left_error != right_error:
        notes.append(f"only the {'left' if left_error else 'right'} call ended in an error")
    if left is None or right is None:
        missing = " and ".join(s for s, r in (("left", left), ("right", right)) if r is None)
        return ResultDiff(False, notes=[*notes, f"no result yet on the {missing}"])
    if left == right:
        return ResultDiff(not notes, notes=notes)
    a_text, b_text = left, right
    a_json, b_json = _json_document(left), _json_document(right)
    if a_json is not None and b_json is not None:
        a_text = json.dumps(a_json, indent=2, sort_keys=True, ensure_ascii=False, default=str)
        b_text = json.dumps(b_json, indent=2, sort_keys=True, ensure_ascii=False, default=str)
        if a_text == b_text:
            return ResultDiff(
                not notes, notes=[*notes, "the same JSON document (differs only in layout or key order)"]
            )
        notes.append("both are JSON: compared pretty-printed with sorted keys")
    a, b = a_text.splitlines(), b_text.splitlines()
    for side, lines in (("left", a), ("right", b)):
        if len(lines) > DIFF_INPUT_LINES:
            notes.append(f"only the first {DIFF_INPUT_LINES:,} of the {side}'s {len(lines):,} lines compared")
    diff = list(
        difflib.unified_diff(a[:DIFF_INPUT_LINES], b[:DIFF_INPUT_LINES], "left", "right", lineterm="", n=1)
    )[2:]
    if not diff:
        notes.append(f"the first {DIFF_INPUT_LINES:,} lines are the same; the results differ after them")
    more = max(0, len(diff) - max_lines)
    return ResultDiff(False, [_cut_line(x) for x in diff[:max_lines]], more, notes)


__all__ = [
    "DIFF_INPUT_LINES",
    "DIFF_LINE_CHARS",
    "DIFF_OUTPUT_LINES",
    "MARKS",
    "CompareRow",
    "ResultDiff",
    "answering_server",
    "compare_rows",
    "count_marks",
    "result_diff",
    "rows_from_pairs",
]
