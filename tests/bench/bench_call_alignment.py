"""Compare view: aligning two transcripts of 2,000 tool calls each, against difflib on the same keys.

difflib.SequenceMatcher (the standard library's line differ, which finds no optimal alignment)
is the reference measured in the same run. Goals: the alignment fits in a key press's budget
(0.1 s, since the compare view realigns when the operator changes arm or model), and the
optimal dynamic program over 4M cells costs at most 10x the greedy matcher.
"""

from __future__ import annotations

import difflib
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from proctor.app.views.call_alignment import signature
from proctor.app.views.compare_model import align_calls
from proctor.app.views.transcript_state import CallView

TOOLS = ["grep", "read", "ls", "find", "search", "open", "list", "stat"]


def _side(rng: random.Random, n: int) -> list[CallView]:
    return [CallView(f"c{i}", "s", rng.choice(TOOLS), f'{{"q": {rng.randrange(40)}}}', "r") for i in range(n)]


def _best_of(runs: int, fn: object) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    rng = random.Random(3)
    left, right = _side(rng, 2000), _side(rng, 2000)
    keys_left, keys_right = [signature(c) for c in left], [signature(c) for c in right]
    ours = _best_of(3, lambda: align_calls(left, right))
    reference = _best_of(
        3, lambda: difflib.SequenceMatcher(None, keys_left, keys_right, autojunk=False).get_opcodes()
    )
    ratio = ours / reference
    print(f"BENCH call_alignment_2k_x_2k {ours:.3f} s goal <=0.1 {'PASS' if ours <= 0.1 else 'FAIL'}")
    print(f"BENCH call_alignment_vs_difflib {ratio:.2f} x goal <=10 {'PASS' if ratio <= 10 else 'FAIL'}")
    print(f"reference: difflib.SequenceMatcher on the same keys {reference:.3f} s")
    return 0 if ours <= 0.1 and ratio <= 10 else 1


if __name__ == "__main__":
    sys.exit(main())
