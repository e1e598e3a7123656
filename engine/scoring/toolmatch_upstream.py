"""MCPAgentBench's own tool-call match, rule for rule, so its published TFS/TEFS can be reproduced.

Upstream (github.com/zixianglhhh/MCPAgentBench, ``src/evaluate.py``) compares step-structured
tool names and argument objects. Its rules differ from proctor's ``strict`` mode, and the
published scores depend on them:

* TEFS (``evaluate_task_performance``): the tool *set* of each step must equal the gold step's,
  compared pairwise over the shorter of the two step lists; the number of steps must be equal;
  per step, the arguments of tools outside the skip list must be equal as a set of objects.
* TFS (``evaluate_task_performance_ignore_parallel``): steps are flattened; the *set* of tool
  names must be equal, and the set of (tool, arguments) pairs outside the skip list too.
* Arguments compare as ``{key: str(value)}``: ``1`` equals ``"1"``, ``1.0`` does not, lists and
  objects compare by their Python ``str``. A call's arguments pair with its tool by position.
* A trial that makes upstream's evaluator raise (an argument that is not an object) scores 0 on
  both. A finished trial weighs its number of gold calls, as in proctor.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Steps = Sequence[Sequence[str]]
Inputs = Sequence[Sequence[Any]]


@dataclass(frozen=True)
class UpstreamMatch:
    finished: bool
    efficiently_finished: bool


def _normalized(arguments: Any) -> frozenset[tuple[str, str]]:
    if not isinstance(arguments, Mapping):
        raise TypeError(f"arguments must be an object, got {type(arguments).__name__}")
    return frozenset((str(k), str(v)) for k, v in arguments.items())


def _efficient(
    used: Steps, used_inputs: Inputs, gold: Steps, gold_inputs: Inputs, skip: Collection[str]
) -> bool:
    for actual, expected in zip(used, gold, strict=False):
        if set(actual) != set(expected):
            return False
    if len(used_inputs) != len(gold_inputs):
        return False
    for i, (actual_step, expected_step) in enumerate(zip(used_inputs, gold_inputs, strict=False)):
        expected = [x for t, x in zip(gold[i], expected_step, strict=False) if t not in skip]
        actual = [x for t, x in zip(used[i], actual_step, strict=False) if t not in skip]
        if (expected or actual) and {_normalized(x) for x in actual} != {_normalized(x) for x in expected}:
            return False
    return True


def _finished(
    used: Steps, used_inputs: Inputs, gold: Steps, gold_inputs: Inputs, skip: Collection[str]
) -> bool:
    def flat(steps: Steps, inputs: Inputs) -> list[tuple[str, Any]]:
        return [
            (t, x)
            for names, args in zip(steps, inputs, strict=False)
            for t, x in zip(names, args, strict=False)
        ]

    expected, actual = flat(gold, gold_inputs), flat(used, used_inputs)
    if {t for t, _ in expected} != {t for t, _ in actual}:
        return False
    expected_args = {(t, _normalized(x)) for t, x in expected if t not in skip}
    actual_args = {(t, _normalized(x)) for t, x in actual if t not in skip}
    return expected_args == actual_args


def upstream_match(
    used: Steps, used_inputs: Inputs, gold: Steps, gold_inputs: Inputs, *, skip: Collection[str] = ()
) -> UpstreamMatch:
    """Upstream's two verdicts on one task (both False where its evaluator would raise)."""
    try:
        return UpstreamMatch(
            finished=_finished(used, used_inputs, gold, gold_inputs, skip),
            efficiently_finished=_efficient(used, used_inputs, gold, gold_inputs, skip),
        )
    except (TypeError, IndexError):
        return UpstreamMatch(False, False)


__all__ = ["UpstreamMatch", "upstream_match"]
