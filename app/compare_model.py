"""Align two trials' tool calls step by step and diff their results (pure functions).

Steps are aligned on the sequence of tool names (difflib's longest matching blocks), so a call
one arm made and the other did not shows as a gap instead of shifting every later pair.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from proctor.app.transcript_state import CallView

DIFF_INPUT_LINES = 2000
DIFF_OUTPUT_LINES = 60


@dataclass(frozen=True)
class AlignedStep:
    left: CallView | None
    right: CallView | None

    @property
    def same_call(self) -> bool:
        return (
            self.left is not None
            and self.right is not None
            and (self.left.tool, self.left.arguments) == (self.right.tool, self.right.arguments)
        )

    @property
    def same_result(self) -> bool:
        return self.left is not None and self.right is not None and self.left.result == self.right.result


def align_calls(left: list[CallView], right: list[CallView]) -> list[AlignedStep]:
    matcher = difflib.SequenceMatcher(a=[c.tool for c in left], b=[c.tool for c in right], autojunk=False)
    steps: list[AlignedStep] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "delete":
            steps.extend(AlignedStep(c, None) for c in left[i1:i2])
        elif tag == "insert":
            steps.extend(AlignedStep(None, c) for c in right[j1:j2])
        else:
            a, b = left[i1:i2], right[j1:j2]
            for k in range(max(len(a), len(b))):
                steps.append(AlignedStep(a[k] if k < len(a) else None, b[k] if k < len(b) else None))
    return steps


def result_diff(left: str | None, right: str | None) -> list[str]:
    """Unified diff lines (``-`` left only, ``+`` right only), capped; empty when identical."""
    if left == right:
        return []
    a = (left or "").splitlines()[:DIFF_INPUT_LINES]
    b = (right or "").splitlines()[:DIFF_INPUT_LINES]
    lines = [x for x in difflib.unified_diff(a, b, "left", "right", lineterm="", n=1)][2:]
    if len(lines) > DIFF_OUTPUT_LINES:
        lines = [*lines[:DIFF_OUTPUT_LINES], f"… {len(lines) - DIFF_OUTPUT_LINES} more diff lines"]
    return lines


__all__ = ["AlignedStep", "align_calls", "result_diff"]
