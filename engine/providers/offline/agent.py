"""The offline agent: a seedable model stand-in that really uses the tools it is given.

Two policies, chosen per prompt. A question about code ("where is the retry delay computed?")
is routed (tools ranked by BM25 against the task, LiveMCPBench's route step), looked up with
arguments filled from each tool's schema, followed where results point (a search hit to its
definition, a ``path:line`` to the lines around it), and answered by quoting the lines it saw
with ``file:line`` citations. Its answer is only as good as the tools' results, which is what
lets it tell a good MCP server from a stale one without a network. A request to act ("list the
files and read committed.txt", "create an entity named Alice") is planned one call per action
with general-purpose servers in mind (``offline_act``). Token counts are estimates.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from proctor.engine.providers.base import (
    AssistantTurn,
    Message,
    ModelTurn,
    TextDeltaCallback,
    ToolResults,
    UserMessage,
    estimate_tokens,
)
from proctor.engine.providers.offline.act import ActRun, Knowledge
from proctor.engine.providers.offline.args import Focus, fill_arguments, tool_role
from proctor.engine.providers.offline.evidence import (
    Evidence,
    concept_query,
    parse_result,
)
from proctor.engine.providers.offline.explicit import explicit_requests
from proctor.engine.providers.offline.plan import plan_requests
from proctor.engine.providers.offline.tools import (
    DEFINITION_QUERY,
    MEMO,
    can_look_up,
    context_tokens,
    is_question,
    rank_for_purpose,
    rank_tools,
    routed_tools,
    symbol_purpose,
    task_identifiers_of,
)
from proctor.engine.tools.ranking import words
from proctor.engine.tools.toolbox import ToolSpec
from proctor.store.events import ToolCallRequest, Usage

POLICIES = {"default": 3, "single": 0, "thorough": 5}
MAX_PARALLEL = 2
MAX_QUOTED_LINES = 6
#: Lines quoted from one definition or range the agent read, and from all of them together: a
#: definition's facts (a cap, a default, a guard) sit anywhere in its body, not only on the
#: lines that share words with the question.
MAX_BLOCK_LINES = 24
MAX_BLOCK_TOTAL = 48
T = TypeVar("T")


class OfflineProvider:
    def __init__(self, policy: str = "default") -> None:
        if policy not in POLICIES:
            raise ValueError(
                f"offline:{policy}: unknown policy; valid: {', '.join('offline:' + p for p in POLICIES)}, "
                "offline:gold"
            )
        self._policy = policy

    @property
    def model_id(self) -> str:
        return f"offline:{self._policy}"

    @property
    def provider_name(self) -> str:
        return "offline"

    def session(self, seed: int) -> OfflineSession:
        return OfflineSession(POLICIES[self._policy], seed)

    def parameters(self) -> dict[str, Any]:
        return {"policy": self._policy, "deterministic": True}

    async def aclose(self) -> None:
        return None


@dataclass
class _Step:
    task: str
    identifiers: list[str]
    follow_rounds_left: int
    looked_up: bool = False
    followed: set[tuple[str, int]] = field(default_factory=set)
    decided: bool = False
    act: ActRun | None = None


class OfflineSession:
    def __init__(self, follow_rounds: int, seed: int) -> None:
        self._follow_rounds = follow_rounds
        self._rng = random.Random(seed)
        self._evidence: list[Evidence] = []
        self._absorbed = 0
        self._calls: set[str] = set()
        self._routed: list[ToolSpec] = []
        self._step: _Step | None = None
        self._n = 0
        self._known = Knowledge()

    async def turn(
        self,
        system: str,
        messages: list[Message],
        tools: list[ToolSpec],
        *,
        on_text: TextDeltaCallback | None = None,
    ) -> ModelTurn:
        self._absorb(messages)
        task = next((m.text for m in reversed(messages) if isinstance(m, UserMessage)), "")
        if self._step is None or self._step.task != task:
            self._step = _Step(task, list(task_identifiers_of(task)[:3]), self._follow_rounds)
        calls = self._next_calls(self._step, tools)
        input_tokens = context_tokens(system, messages, tools)
        if calls:
            out = sum(estimate_tokens(json.dumps(c.arguments)) + 5 for c in calls)
            usage = Usage(input_tokens=input_tokens, output_tokens=out, estimated=True)
            return ModelTurn("", calls, usage, "tool_use")
        answer = self._answer(self._step)
        if on_text is not None:
            await on_text(answer)
        usage = Usage(input_tokens=input_tokens, output_tokens=estimate_tokens(answer), estimated=True)
        return ModelTurn(answer, [], usage, "end_turn")

    # -- reading results ------------------------------------------------------------------

    def _absorb(self, messages: list[Message]) -> None:
        names: dict[str, str] = {}
        for m in messages:
            if isinstance(m, AssistantTurn):
                names.update({c.call_id: c.name for c in m.tool_calls})
        results = [m for m in messages if isinstance(m, ToolResults)]
        act = self._step.act if self._step is not None else None
        for msg in results[self._absorbed :]:
            for r in msg.results:
                if act is not None:
                    act.absorb(r.call_id, r.content, r.is_error)
                if r.is_error:
                    continue
                if names.get(r.call_id) == "route":
                    self._routed = routed_tools(r.content)
                    continue
                self._evidence.extend(parse_result(r.content, self._n))
                self._n += 1
        self._absorbed = len(results)

    # -- deciding -------------------------------------------------------------------------

    def _next_calls(self, step: _Step, tools: list[ToolSpec]) -> list[ToolCallRequest]:
        names = {t.name for t in tools}
        via_router = "route" in names and "execute" in names
        if via_router and not self._routed:
            query = " ".join([*step.identifiers, concept_query(step.task)])
            return self._make([("route", {"query": query})])
        usable = self._routed if via_router else tools
        if not step.decided:
            step.decided = True
            step.act = self._act_run(step.task, usable)
        if step.act is not None:
            return self._act_calls(step.act, via_router)
        if not step.looked_up:
            step.looked_up = True
            return self._wrap(self._lookup(step, usable), via_router)
        if step.follow_rounds_left > 0:
            step.follow_rounds_left -= 1
            return self._wrap(self._follow(step, usable), via_router)
        return []

    def _act_run(self, task: str, tools: list[ToolSpec]) -> ActRun | None:
        """The action policy, when the prompt asks for actions some tool performs. A question
        about code, or a lookup of a code name ("find `compute_backoff`") with a search or symbol
        tool to do it, stays with the code-reading policy whenever that policy can start."""
        explicit = MEMO.get(("explicit", task), tools, lambda: tuple(explicit_requests(task, tools)))
        if explicit:  # the prompt names the tools to use: no ranking, no code-reading policy
            return ActRun(list(explicit), tools, self._known)
        requests = MEMO.get(("plan", task), tools, lambda: tuple(plan_requests(task, tools)))
        matched = [r for r in requests if r.candidates]
        if not matched:
            return None
        if MEMO.get("can_look_up", tools, lambda: can_look_up(tools)):
            lookup = any(tool_role(r.candidates[0]) in ("symbol", "search") for r in matched)
            if is_question(task) or (lookup and task_identifiers_of(task)):
                return None
        return ActRun(list(requests), tools, self._known)

    def _act_calls(self, act: ActRun, via_router: bool) -> list[ToolCallRequest]:
        call = act.next_call()
        if call is None:
            return []
        name, args = call.tool.name, call.args
        if via_router:
            name, args = "execute", {"tool": name, "arguments": args}
        self._calls.add(f"{name}:{json.dumps(args, sort_keys=True)}#{len(self._calls)}")
        call_id = f"call_{len(self._calls)}"
        act.sent(call_id, call)
        return [ToolCallRequest(call_id=call_id, name=name, arguments=dict(args))]

    def _lookup(self, step: _Step, tools: list[ToolSpec]) -> list[tuple[str, dict[str, object]]]:
        planned: list[tuple[str, dict[str, object]]] = []
        if step.identifiers:
            purpose = symbol_purpose(step.task, step.identifiers)
            best = self._pick(rank_for_purpose(purpose, tools), ("symbol",)) or self._pick(
                rank_tools(step.task, tools), ("search",)
            )
            for ident in step.identifiers[:MAX_PARALLEL]:
                if best is not None and (args := fill_arguments(best, Focus(identifier=ident))) is not None:
                    planned.append((best.name, args))
        else:
            best = self._pick(rank_tools(step.task, tools), ("search", "symbol"))
            if best is not None:
                phrase = self._phrase_for(best, step.task)
                if (args := fill_arguments(best, Focus(phrase=phrase))) is not None:
                    planned.append((best.name, args))
        return planned

    def _phrase_for(self, tool: ToolSpec, task: str) -> str:
        """Literal searches (a ``pattern``) get one distinctive word; ranked searches the phrase."""
        if "pattern" in tool.input_schema.get("properties", {}):
            candidates = sorted(set(words(task)), key=lambda w: (-len(w), w))[:3]
            return self._rng.choice(candidates) if candidates else task[:40]
        return concept_query(task)

    def _follow(self, step: _Step, tools: list[ToolSpec]) -> list[tuple[str, dict[str, object]]]:
        """Follow the most relevant location not yet followed: a hit to its definition, a line to its body."""
        task_words = set(words(step.task))
        idents = {i.rsplit(".", 1)[-1] for i in step.identifiers}

        def relevance(e: Evidence) -> float:
            named = words(f"{e.symbol} {e.text} {e.path}")
            return 3.0 * (e.symbol in idents) + len(task_words & set(named)) + self._rng.random() * 0.5

        candidates = [e for e in self._evidence if e.is_location and (e.path, e.line) not in step.followed]
        ranked_tools = rank_tools(step.task, tools)
        symbol_tool = self._pick(rank_for_purpose(DEFINITION_QUERY, tools), ("symbol",))
        read_tool = self._pick(ranked_tools, ("read",))
        for target in sorted(candidates, key=relevance, reverse=True):
            step.followed.add((target.path, target.line))
            if self._has_body(target):
                continue
            if target.symbol and symbol_tool is not None:
                args = fill_arguments(symbol_tool, Focus(identifier=target.symbol))
                if args is not None and self._fresh(symbol_tool.name, args):
                    return [(symbol_tool.name, args)]
            if read_tool is not None:
                args = fill_arguments(read_tool, Focus(path=target.path, line=target.line))
                if args is not None and self._fresh(read_tool.name, args):
                    return [(read_tool.name, args)]
        return []

    def _has_body(self, loc: Evidence) -> bool:
        return any(
            not e.is_location and e.path == loc.path and 0 <= e.line - loc.line <= 15 for e in self._evidence
        )

    def _pick(self, ranked: list[ToolSpec], roles: tuple[str, ...]) -> ToolSpec | None:
        for role in roles:
            matching = [t for t in ranked if tool_role(t) == role]
            if matching:
                top = matching[:2] if len(matching) > 1 and self._rng.random() < 0.15 else matching[:1]
                return self._rng.choice(top)
        return None

    def _fresh(self, name: str, args: dict[str, object]) -> bool:
        return f"{name}:{json.dumps(args, sort_keys=True)}" not in self._calls

    def _wrap(self, planned: list[tuple[str, dict[str, object]]], via_router: bool) -> list[ToolCallRequest]:
        if via_router:
            planned = [("execute", {"tool": name, "arguments": args}) for name, args in planned]
        return self._make(planned)

    def _make(self, planned: list[tuple[str, dict[str, object]]]) -> list[ToolCallRequest]:
        out = []
        for name, args in planned:
            sig = f"{name}:{json.dumps(args, sort_keys=True)}"
            if sig in self._calls:
                continue
            self._calls.add(sig)
            out.append(ToolCallRequest(call_id=f"call_{len(self._calls)}", name=name, arguments=dict(args)))
        return out

    # -- answering ------------------------------------------------------------------------

    def _answer(self, step: _Step) -> str:
        if step.act is not None:
            return step.act.answer()
        if not self._evidence:
            return (
                "I could not find anything relevant with the tools available, so I cannot point to the code "
                "that answers this."
            )
        task_words = set(words(step.task))
        idents = {i.rsplit(".", 1)[-1] for i in step.identifiers}
        locations = [
            e for e in self._evidence if e.is_location and e.symbol and (not idents or e.symbol in idents)
        ]
        body = [e for e in self._evidence if not e.is_location and e.text.strip()]

        def score(e: Evidence) -> float:
            w = set(words(e.text))
            return (
                len(task_words & w)
                + 2.0 * any(i in e.text for i in idents)
                + 0.5 * any(map(str.isdigit, e.text))
                + self._rng.random() * 0.3
            )

        blocks = self._read_blocks(body, idents, score)
        in_blocks = {(e.path, e.line) for block in blocks for e in block}
        rest = [e for e in body if (e.path, e.line) not in in_blocks]
        quoted = sorted({(e.path, e.line): e for e in rest}.values(), key=score, reverse=True)[
            :MAX_QUOTED_LINES
        ]
        quoted.sort(key=lambda e: (e.path, e.line))
        lines = ["Here is what the code at the pinned commit shows."]

        def location_rank(e: Evidence) -> tuple[bool, int]:
            """Definitions it actually read first, then those whose names match the task."""
            return (self._has_body(e), len(task_words & set(words(f"{e.symbol} {e.text}"))))

        distinct = list({(e.path, e.line): e for e in locations}.values())
        for loc in sorted(distinct, key=location_rank, reverse=True)[:3]:
            lines.append(f"- `{loc.symbol}` is defined at `{loc.path}:{loc.line}` ({loc.text}).")
        if not quoted and not locations and not blocks:
            quoted = [e for e in self._evidence if e.is_location][:MAX_QUOTED_LINES]
        for e in [line for block in blocks for line in block]:
            lines.append(f"- `{e.path}:{e.line}`: `{e.text.strip()[:160]}`")
        for e in quoted:
            lines.append(f"- `{e.path}:{e.line}`: `{e.text.strip()[:160]}`")
        return "\n".join(lines)

    def _read_blocks(
        self, body: list[Evidence], idents: set[str], score: Callable[[Evidence], float]
    ) -> list[list[Evidence]]:
        """The definitions and ranges it read (one tool result each), most relevant first, each
        quoted whole up to MAX_BLOCK_LINES and all of them up to MAX_BLOCK_TOTAL lines."""
        by_call: dict[int, dict[tuple[str, int], Evidence]] = {}
        for e in body:
            by_call.setdefault(e.call_index, {})[(e.path, e.line)] = e
        headers = {e.call_index: e.symbol for e in self._evidence if e.is_location and e.symbol}

        def relevance(call: int) -> float:
            found = by_call[call].values()
            return 3.0 * (headers.get(call) in idents) + max(score(e) for e in found)

        out: list[list[Evidence]] = []
        total = 0
        seen: set[tuple[str, int]] = set()
        for call in sorted(by_call, key=relevance, reverse=True):
            block = [e for key, e in sorted(by_call[call].items()) if key not in seen][:MAX_BLOCK_LINES]
            if not block or total + len(block) > MAX_BLOCK_TOTAL:
                continue
            seen.update((e.path, e.line) for e in block)
            out.append(block)
            total += len(block)
        return out
