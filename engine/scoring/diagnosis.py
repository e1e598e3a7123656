"""One primary failure mode per failed trial, from what the trace proves (MCP-Atlas taxonomy).

The mode ids are those of MCP-Atlas's diagnostic taxonomy (Scale AI, MIT licence): four
tool-call modes, which a trace can show, and seven cognitive modes, which need a judge that
reads the task and the answer and are never returned here. The rules, first match wins:

1. ``no_tool_use``: tools were available and the agent called none.
2. ``wrong_tool``: the agent called tools, but none of the gold calls' tools; or (with schemas)
   every call went to a tool that does not exist.
3. ``malformed_call``: a call had bad arguments (the schema rejects them, or the error type says
   arguments/params/validation) and no later call of that tool succeeded with good arguments.
4. ``err_recovery``: the same call (tool and normalized arguments) failed twice or more; or a
   call failed and no later call of that tool succeeded (the error was ignored or given up on).
5. ``malformed_call`` (wrong values): the agent called a gold tool, but no call of it agrees with
   any gold call of that tool on all the gold arguments.

A call answered with the error a gold call expects (``expect_error``) is the agent doing the
task, not failing at it: rules 3 and 4 leave it out.

Otherwise None: the trace proves nothing, and the cognitive modes are left to an LLM judge.
Call this for failed trials only; it does not decide whether a trial failed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from proctor.scenarios.schema import GoldCall
from proctor.store.scores import FailureModeDetails

from .normalize import normalize_arguments, normalize_value
from .toolschema import argument_problems
from .trial_digest import ToolCallRecord, TrialDigest

FailureCategory = Literal["tool_call", "cognitive"]

TOOL_CALL_MODES: dict[str, str] = {
    "malformed_call": "right tool, wrong arguments (missing, wrongly typed or wrong values)",
    "wrong_tool": "a tool that cannot answer was used although a suitable one was available",
    "no_tool_use": "answered without calling any tool although tools were needed",
    "err_recovery": "a tool error was not adapted to (identical retries, looping or giving up)",
}
COGNITIVE_MODES: dict[str, str] = {
    "task_misunderstanding": "answered a different question or missed a requirement",
    "faulty_synthesis": "combined correct tool outputs wrongly",
    "response_misparsing": "misread the structure of a valid tool output",
    "early_termination": "stopped before completing every required step",
    "hallucinated_fact": "stated something no tool output supports",
    "logical_error": "flawed reasoning over correct data",
    "constraint_violation": "ignored an explicit condition of the prompt",
}
_ARGUMENT_ERROR = re.compile(r"argument|param|schema|validat|invalid.?input|32602", re.IGNORECASE)


@dataclass(frozen=True)
class Diagnosis:
    mode: str
    category: FailureCategory
    rule: str
    explanation: str
    call_ids: tuple[str, ...] = ()

    def to_details(self) -> FailureModeDetails:
        return FailureModeDetails(
            mode=self.mode,
            category=self.category,
            rule=self.rule,
            explanation=self.explanation,
            call_ids=list(self.call_ids),
            evidence=self.explanation,
            first_failing_call_id=self.call_ids[0] if self.call_ids else None,
        )


def _argument_issue(call: ToolCallRecord, schemas: Mapping[str, Mapping[str, Any]]) -> str | None:
    schema = schemas.get(call.tool)
    if schema is not None:
        problems = argument_problems(call.arguments, schema)
        if problems:
            return "; ".join(problems)
    if call.is_error and _ARGUMENT_ERROR.search(call.error_type):
        return f"the tool rejected the arguments ({call.error_type})"
    return None


def diagnose(
    digest: TrialDigest,
    *,
    tools_available: bool = True,
    gold: Sequence[Sequence[GoldCall]] = (),
    tool_schemas: Mapping[str, Mapping[str, Any]] | None = None,
    names_only: Collection[str] = (),
) -> Diagnosis | None:
    calls = list(digest.tool_calls)
    schemas = tool_schemas or {}
    gold_calls = [g for step in gold for g in step]
    if not calls:
        if not tools_available:
            return None
        return Diagnosis("no_tool_use", "tool_call", "no_calls", "the agent called no tool")
    refusals = {(g.tool, normalize_arguments(g.arguments)) for g in gold_calls if g.expect_error}
    not_refusals = [
        c for c in calls if not (c.is_error and (c.tool, normalize_arguments(c.arguments)) in refusals)
    ]
    return (
        _wrong_tool(calls, gold_calls, schemas)
        or _malformed(not_refusals, schemas)
        or _err_recovery(not_refusals)
        or _wrong_values(calls, gold_calls, frozenset(names_only))
    )


def _wrong_tool(
    calls: list[ToolCallRecord], gold: list[GoldCall], schemas: Mapping[str, Mapping[str, Any]]
) -> Diagnosis | None:
    used = {c.tool for c in calls}
    gold_tools = {g.tool for g in gold}
    if gold_tools and not used & gold_tools:
        return Diagnosis(
            "wrong_tool",
            "tool_call",
            "no_gold_tool",
            f"called {', '.join(sorted(used))} but never {', '.join(sorted(gold_tools))}",
            tuple(c.call_id for c in calls),
        )
    if schemas and not used & set(schemas):
        return Diagnosis(
            "wrong_tool",
            "tool_call",
            "unknown_tools",
            f"every call went to a tool that does not exist: {', '.join(sorted(used))}",
            tuple(c.call_id for c in calls),
        )
    return None


def _malformed(calls: list[ToolCallRecord], schemas: Mapping[str, Mapping[str, Any]]) -> Diagnosis | None:
    for i, call in enumerate(calls):
        issue = _argument_issue(call, schemas)
        if issue is None:
            continue
        recovered = any(
            later.tool == call.tool and later.succeeded and _argument_issue(later, schemas) is None
            for later in calls[i + 1 :]
        )
        if not recovered:
            return Diagnosis(
                "malformed_call",
                "tool_call",
                "bad_arguments",
                f"{call.tool}: {issue}; no later call of it succeeded",
                (call.call_id,),
            )
    return None


def _err_recovery(calls: list[ToolCallRecord]) -> Diagnosis | None:
    failed = [c for c in calls if not c.succeeded]
    repeats = Counter((c.tool, normalize_arguments(c.arguments)) for c in failed)
    for c in failed:
        n = repeats[(c.tool, normalize_arguments(c.arguments))]
        if n >= 2:
            ids = tuple(
                f.call_id
                for f in failed
                if f.tool == c.tool and normalize_arguments(f.arguments) == normalize_arguments(c.arguments)
            )
            return Diagnosis(
                "err_recovery",
                "tool_call",
                "repeated_failure",
                f"{c.tool} failed {n} times with the same arguments",
                ids,
            )
    for i, c in enumerate(calls):
        if c.succeeded:
            continue
        if not any(later.tool == c.tool and later.succeeded for later in calls[i + 1 :]):
            what = "returned an error" if c.is_error else "returned no result"
            return Diagnosis(
                "err_recovery",
                "tool_call",
                "error_not_recovered",
                f"{c.tool} {what} and no later call of it succeeded",
                (c.call_id,),
            )
    return None


def _agrees(call: ToolCallRecord, g: GoldCall) -> bool:
    return all(
        k in call.arguments and normalize_value(call.arguments[k]) == normalize_value(v)
        for k, v in g.arguments.items()
        if v is not None
    )


def _wrong_values(
    calls: list[ToolCallRecord], gold: list[GoldCall], names_only: frozenset[str]
) -> Diagnosis | None:
    for tool in dict.fromkeys(g.tool for g in gold):
        if tool in names_only:
            continue
        mine = [c for c in calls if c.tool == tool]
        theirs = [g for g in gold if g.tool == tool]
        if mine and not any(_agrees(c, g) for c in mine for g in theirs):
            return Diagnosis(
                "malformed_call",
                "tool_call",
                "wrong_values",
                f"{tool} was called, but never with the gold arguments",
                tuple(c.call_id for c in mine),
            )
    return None
