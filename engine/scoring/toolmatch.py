"""Tool-call match against gold calls: TFS and TEFS as MCPAgentBench defines them.

Per trial: *finished* iff the set of the agent's calls, as (tool, normalized arguments), equals
the set of gold calls (order ignored; every recorded call counts, retries included, but an
identical call repeated is one set element). *Efficiently finished* iff also the agent's steps
equal the gold steps in order, each compared as a set (calls requested in one model turn are
one parallel step). Across trials, TFS = Σ finished·|G| / Σ|G| and TEFS likewise, where |G| is
the trial's number of gold calls; trials without gold calls carry no weight.

Argument normalization: key order is irrelevant; an argument whose value is null counts as
absent; strings are stripped and inner whitespace runs collapse to one space, case is kept;
a string that is a plain decimal number (``"5"``, ``" 5.0 "``) equals that number; numbers
compare by value (5 == 5.0) after rounding to 12 significant digits; booleans never equal
numbers; list order matters; nested objects are normalized the same way.

Modes (``scoring.tool_match`` in a suite, named in every tfs/tefs score's details):
``strict`` (the rules above); ``lenient`` also drops an agent argument that no gold call of that
tool uses, unless the tool's schema marks it required (without a schema every such argument is
dropped); ``mcpagentbench`` is MCPAgentBench's own evaluator rule for rule
(``toolmatch_upstream``), for reproducing its published figures. ``names_only`` tools are
compared by name alone (MCPAgentBench's ``skip_input_tools``). A gold call naming a ``server``
only matches calls to that server (not in ``mcpagentbench`` mode, which ignores servers).

Outcomes: a call the server answered with an error did not do a gold call's work, so it is
dropped before matching and listed in ``failed_calls`` (a retry that succeeds still matches). A
gold call with ``expect_error`` is the opposite: only a call answered with an error matches it
(a server that must refuse a path outside its root), and the same call answered successfully is
unexpected. In ``mcpagentbench`` mode, whose upstream rule knows no outcomes, such a gold call
additionally needs its errored call under the strict rules. Calls that carry no ``is_error``
(imported trajectories) count as answered. A gold call with ``expect`` (what its result must
hold: engine/scoring/result_checks.py) is matched only by a call whose result holds it; a call
whose result does not is dropped like a failed one and listed in ``unmet_expectations`` with
what the result lacks. ``review`` lists the gold calls whose ``expect`` carries a note for a
person (``proctor init`` leaves one where it could not draft an expectation).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from proctor.scenarios.schema import GoldCall, ToolMatchMode
from proctor.store.scores import ToolMatchDetails

from .normalize import Norm, normalize_arguments
from .result_checks import unmet_expectations
from .toolmatch_upstream import upstream_match
from .toolschema import argument_problems, required_arguments
from .trial_digest import render_call


class CallLike(Protocol):
    @property
    def tool(self) -> str: ...

    @property
    def server(self) -> str: ...

    @property
    def arguments(self) -> Mapping[str, Any]: ...


ERROR_MARK = " -> error"


def answered_with_error(call: CallLike) -> bool:
    """A call of a trace knows its outcome; an imported one (no ``is_error``) counts as answered."""
    return bool(getattr(call, "is_error", False))


@dataclass(frozen=True)
class CallKey:
    tool: str
    server: str | None
    arguments: Norm
    error: bool = False  # the call was (or, for a gold call, must be) answered with an error

    def render(self) -> str:
        where = f"{self.server}/" if self.server else ""
        args = json.dumps(_plain(self.arguments), ensure_ascii=False, default=str)
        return f"{where}{self.tool}({args}){ERROR_MARK if self.error else ''}"


def _plain(norm: Norm) -> Any:
    out: dict[str, Any] = {}
    for k, v in norm:
        out[k] = _plain_value(v)
    return out


def _plain_value(v: Norm) -> Any:
    tag = v[0]
    if tag == "d":
        return _plain(v[1])
    if tag == "l":
        return [_plain_value(x) for x in v[1]]
    return None if tag == "null" else v[1]


@dataclass(frozen=True)
class ToolMatch:
    """One trial's comparison; ``gold_calls`` is its weight |G|."""

    gold_calls: int
    finished: bool
    efficiently_finished: bool
    missing: tuple[str, ...]
    unexpected: tuple[str, ...]
    gold_steps: int
    agent_steps: int
    mode: ToolMatchMode
    failed_calls: tuple[str, ...] = ()
    unmet_expectations: tuple[str, ...] = ()
    review: tuple[str, ...] = ()

    def to_details(self) -> ToolMatchDetails:
        return ToolMatchDetails(
            gold_calls=self.gold_calls,
            finished=self.finished,
            efficiently_finished=self.efficiently_finished,
            missing=list(self.missing),
            unexpected=list(self.unexpected),
            gold_steps=self.gold_steps,
            agent_steps=self.agent_steps,
            mode=self.mode,
            failed_calls=list(self.failed_calls),
            unmet_expectations=list(self.unmet_expectations),
            review=list(self.review),
        )


class _Keyer:
    def __init__(
        self,
        gold: Sequence[Sequence[GoldCall]],
        lenient: bool,
        names_only: Collection[str],
        schemas: Mapping[str, Mapping[str, Any]],
    ) -> None:
        self.names_only = frozenset(names_only)
        self.lenient = lenient
        self.schemas = schemas
        self.gold_args: dict[str, set[str]] = {}
        self.server_bound: set[str] = set()
        for step in gold:
            for g in step:
                self.gold_args.setdefault(g.tool, set()).update(g.arguments)
                if g.server:
                    self.server_bound.add(g.tool)

    def gold_key(self, g: GoldCall) -> CallKey:
        args = () if g.tool in self.names_only else normalize_arguments(g.arguments)
        return CallKey(g.tool, g.server or None, args, g.expect_error)

    def agent_key(self, call: CallLike) -> CallKey:
        server = call.server if call.tool in self.server_bound else None
        error = answered_with_error(call)
        if call.tool in self.names_only:
            return CallKey(call.tool, server, (), error)
        args: Mapping[str, Any] = call.arguments
        if self.lenient:
            keep = self.gold_args.get(call.tool, set())
            schema = self.schemas.get(call.tool)
            required = required_arguments(schema) if schema is not None else frozenset()
            args = {k: v for k, v in args.items() if k in keep or k in required}
        return CallKey(call.tool, server, normalize_arguments(args), error)


def match_tool_calls(
    gold: Sequence[Sequence[GoldCall]],
    steps: Sequence[Sequence[CallLike]],
    *,
    mode: ToolMatchMode = "strict",
    names_only: Collection[str] = (),
    tool_schemas: Mapping[str, Mapping[str, Any]] | None = None,
) -> ToolMatch:
    """Compare one trial's calls, grouped in steps (``TrialDigest.call_steps()``), with its gold steps."""
    keyer = _Keyer(gold, mode == "lenient", names_only, tool_schemas or {})
    gold_steps = [frozenset(keyer.gold_key(g) for g in step) for step in gold if step]
    gold_set = frozenset().union(*gold_steps) if gold_steps else frozenset()
    expected: dict[CallKey, list[GoldCall]] = {}
    for g in (g for step in gold for g in step if g.expect is not None and g.expect.checks):
        expected.setdefault(keyer.gold_key(g), []).append(g)
    kept: list[list[CallLike]] = []
    failed: list[str] = []
    unmet: list[str] = []
    for step in steps:
        kept.append([])
        for c in step:
            key = keyer.agent_key(c)
            if answered_with_error(c) and key not in gold_set:
                failed.append(render_call(c.tool, c.arguments))
            elif key in expected and (why := _unmet(expected[key], c)):
                unmet.append(f"{render_call(c.tool, c.arguments)}: the result {'; '.join(why)}")
            else:
                kept[-1].append(c)
    agent_steps = [frozenset(keyer.agent_key(c) for c in step) for step in kept if step]
    agent_set = frozenset().union(*agent_steps) if agent_steps else frozenset()
    finished = gold_set == agent_set
    efficient = finished and gold_steps == agent_steps
    if mode == "mcpagentbench":
        upstream = upstream_match(
            [[c.tool for c in step] for step in kept if step],
            [[dict(c.arguments) for c in step] for step in kept if step],
            [[g.tool for g in step] for step in gold if step],
            [[dict(g.arguments) for g in step] for step in gold if step],
            skip=names_only,
        )
        refused = all(k in agent_set for k in gold_set if k.error)
        finished = upstream.finished and refused
        efficient = upstream.efficiently_finished and refused
    return ToolMatch(
        gold_calls=sum(len(step) for step in gold),
        finished=finished,
        efficiently_finished=efficient,
        missing=tuple(sorted(k.render() for k in gold_set - agent_set)),
        unexpected=tuple(sorted(k.render() for k in agent_set - gold_set)),
        gold_steps=len(gold_steps),
        agent_steps=len(agent_steps),
        mode=mode,
        failed_calls=tuple(failed),
        unmet_expectations=tuple(unmet),
        review=tuple(
            f"{render_call(g.tool, g.arguments)}: {g.expect.review}"
            for step in gold
            for g in step
            if g.expect is not None and g.expect.review
        ),
    )


def _unmet(golds: Sequence[GoldCall], call: CallLike) -> list[str]:
    """What the gold calls equal to ``call`` expect of its result and do not find there."""
    text = str(getattr(call, "result", ""))
    structured = getattr(call, "structured", None)
    has_result = bool(getattr(call, "has_result", True))
    return [
        why
        for g in golds
        if g.expect is not None
        for why in unmet_expectations(g.expect, text, structured, has_result=has_result)
    ]


def _weighted(matches: Iterable[ToolMatch], efficient: bool) -> float | None:
    total = 0
    score = 0
    for m in matches:
        total += m.gold_calls
        if m.efficiently_finished if efficient else m.finished:
            score += m.gold_calls
    return score / total if total else None


def tfs(matches: Iterable[ToolMatch]) -> float | None:
    """Task Finish Score: Σ finished·|G| / Σ|G|; None when no trial has gold calls."""
    return _weighted(matches, efficient=False)


def tefs(matches: Iterable[ToolMatch]) -> float | None:
    """Task Efficiency Finish Score: like TFS, counting only efficiently finished trials."""
    return _weighted(matches, efficient=True)


@dataclass(frozen=True)
class UnsatisfiableGoldCall:
    step: int
    index: int
    tool: str
    problems: tuple[str, ...]


def unsatisfiable_gold_calls(
    gold: Sequence[Sequence[GoldCall]],
    tool_schemas: Mapping[str, Mapping[str, Any]],
    names_only: Collection[str] = (),
) -> list[UnsatisfiableGoldCall]:
    """Gold calls no well-formed call could equal: unknown tool, or arguments the schema rejects.

    Arguments of ``names_only`` tools are not checked, since they are never compared, nor those
    of a gold call that expects an error, since bad arguments may be the point.
    """
    out: list[UnsatisfiableGoldCall] = []
    for s, step in enumerate(gold):
        for i, g in enumerate(step):
            schema = tool_schemas.get(g.tool)
            if schema is None:
                out.append(UnsatisfiableGoldCall(s, i, g.tool, (f"unknown tool {g.tool!r}",)))
                continue
            unchecked = g.tool in names_only or g.expect_error  # a refusal is what it asks for
            problems = [] if unchecked else argument_problems(g.arguments, schema)
            if problems:
                out.append(UnsatisfiableGoldCall(s, i, g.tool, tuple(problems)))
    return out
