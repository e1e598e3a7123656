"""The offline agent's policy for requests to act: one call per requested action, in order.

"List the files in the repository and read committed.txt" becomes ``list_directory`` then
``read_text_file``. Paths must lie under the server's allowed root, which the agent does not
know in advance: it asks a discovery tool when the server has one (``list_allowed_directories``),
else it tries the relative path and reads the root from the refusal ("outside the allowed
repository '/srv/repo'"), then calls again. Later calls may take values earlier results listed
(a file ``list_directory`` printed). The answer reports each call and quotes what it returned,
citing the lines of files it read as ``path:line``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from proctor.engine.providers.offline.explicit import takes_path
from proctor.engine.providers.offline.fill import Context, fill_tool, path_fields, resolve_path
from proctor.engine.providers.offline.intent import Clause, tokens
from proctor.engine.providers.offline.plan import Request, discovery_tool
from proctor.engine.providers.offline.results import (
    content_lines,
    listed_paths,
    relative_to,
    root_hint,
    roots_from,
)
from proctor.engine.providers.offline.schema import schema_props, schema_valid
from proctor.engine.tools.toolbox import ToolSpec

MAX_QUOTED = 8
MAX_CITED = 6
MAX_LINE = 160
_READ = frozenset(tokens("read get open show view display print fetch cat"))
_ABSOLUTE = re.compile(r"/|~|[A-Za-z]:[\\/]")
_NOT_CONTENT = frozenset(tokens("list directory tree search info allowed size media"))
_WINDOW = frozenset(tokens("tail offset start skip"))


@dataclass
class Knowledge:
    """What a session learned that outlives one prompt: each server's root, the paths listed."""

    roots: dict[str, str] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)
    asked: set[str] = field(default_factory=set)

    def root_for(self, server: str) -> str:
        """The server's own root, else any server's: a suite's servers usually share one checkout."""
        return self.roots.get(server) or next(iter(self.roots.values()), "")

    def context(self, server: str) -> Context:
        root = self.root_for(server)
        visible = [
            f for f in self.files if not any(p.startswith(".") for p in relative_to(f, root).split("/"))
        ]
        return Context(root, tuple(visible), tuple(self.dirs))

    def learn_paths(self, files: list[str], dirs: list[str]) -> None:
        self.files.extend(f for f in files if f not in self.files)
        self.dirs.extend(d for d in dirs if d not in self.dirs)


@dataclass
class Call:
    """One call the policy made: for which request (-1: discovering the root), and its result."""

    request: int
    tool: ToolSpec
    args: dict[str, Any]
    root: str = ""
    content: str = ""
    is_error: bool = False
    answered: bool = False
    reused: bool = False


class ActRun:
    """One prompt's requests, performed in order, one call per turn."""

    def __init__(self, requests: list[Request], tools: list[ToolSpec], known: Knowledge) -> None:
        self._requests = requests
        self._tools = tools
        self._known = known
        self._calls: list[Call] = []
        self._pending: dict[str, Call] = {}
        self._cursor = 0
        self._retried: set[int] = set()
        self._skipped: dict[int, str] = {}

    # -- deciding -----------------------------------------------------------------------------

    def next_call(self) -> Call | None:
        """The next call to make, or None when every request has been tried."""
        self._pending.clear()  # a result that never came is not waited for
        while self._cursor < len(self._requests):
            index = self._cursor
            request = self._requests[index]
            last = next((c for c in reversed(self._calls) if c.request == index), None)
            if last is None:
                first = self._first_call(index, request)
                if first is not None and not first.reused:
                    return first
                if first is None:
                    self._skipped[index] = self._why_not(request)
            elif last.is_error and index not in self._retried:
                self._retried.add(index)
                ctx = self._known.context(last.tool.server)
                again = fill_request(last.tool, request, ctx)
                if again is not None and again != last.args:
                    return self._record(Call(index, last.tool, again, ctx.root))
            self._cursor += 1
        return None

    def sent(self, call_id: str, call: Call) -> None:
        self._pending[call_id] = call

    def _first_call(self, index: int, request: Request) -> Call | None:
        for tool in request.candidates:
            server = tool.server
            if path_fields(tool) and not self._known.root_for(server) and not _paths_given(tool, request):
                finder = discovery_tool(self._tools, server)
                if finder is not None and finder.name not in self._known.asked:
                    self._known.asked.add(finder.name)
                    return self._record(Call(-1, finder, {}))
            ctx = self._known.context(server)
            args = fill_request(tool, request, ctx)
            if args is None:
                continue
            same = next(
                (c for c in self._calls if c.tool == tool and c.args == args and not c.is_error), None
            )
            if same is not None and same.answered:  # the result is already at hand: not asked twice
                return self._record(Call(index, tool, args, ctx.root, same.content, False, True, True))
            return self._record(Call(index, tool, args, ctx.root))
        return None

    def _record(self, call: Call) -> Call:
        self._calls.append(call)
        return call

    def _why_not(self, request: Request) -> str:
        if not request.candidates:
            return "none of the tools does that"
        names = ", ".join(f"`{t.name}`" for t in request.candidates[:2])
        return f"the prompt does not give what {names} needs"

    # -- reading results --------------------------------------------------------------------

    def absorb(self, call_id: str, content: str, is_error: bool) -> None:
        """A result for one of this run's calls: learn roots and listed paths from it."""
        call = self._pending.pop(call_id, None)
        if call is None:
            return
        call.content, call.is_error, call.answered = content, is_error, True
        server = call.tool.server
        if is_error:
            hint = root_hint(content, _strings(call.args))
            if hint:
                self._known.roots[server] = hint
            return
        if call.request < 0:
            roots = roots_from(content)
            if roots:
                self._known.roots[server] = roots[0]
            return
        base = next(
            (v for k, v in call.args.items() if k in path_fields(call.tool) and isinstance(v, str)), ""
        )
        files, dirs = listed_paths(content, base or self._known.root_for(server))
        if not _is_content(call):
            self._known.learn_paths(files, dirs)

    # -- answering ------------------------------------------------------------------------------

    def answer(self) -> str:
        lines = ["Here is what I did with the tools, in order, and what they returned."]
        done = 0
        for index, request in enumerate(self._requests):
            for call in self._calls[done:]:
                if call.request > index:
                    break
                done += 1
                if call.answered:
                    lines.extend(self._describe(call))
            if index in self._skipped:
                lines.append(f"- I did not {request.clause.text}: {self._skipped[index]}.")
        if len(lines) == 1:
            lines.append("- Nothing: no tool call could be made for this request.")
        return "\n".join(lines)

    def _describe(self, call: Call) -> list[str]:
        head = f"- `{call.tool.name}`" + (f" ({_brief(call.args)})" if call.args else "")
        text = call.content.strip()
        if call.reused:
            return [f"{head}: the same call as above, so the same result."]
        if call.is_error:
            return [f"{head} failed: {_first_line(text)}"]
        if call.request < 0:
            root = self._known.roots.get(call.tool.server, "")
            return [f"{head}: the server may use `{root}`." if root else f"{head}: {_first_line(text)}"]
        if _is_content(call) and text:
            root = self._known.root_for(call.tool.server)
            path = relative_to(_file_arg(call), root)
            cited = [(n, line) for n, line in content_lines(call.content) if line.strip()][:MAX_CITED]
            return [f"{head} shows `{path}`:"] + [
                f"  - `{path}:{n}`: `{line.strip()[:MAX_LINE]}`" for n, line in cited
            ]
        if not text:
            return [f"{head} returned nothing."]
        quoted = [line.rstrip()[:MAX_LINE] for line in text.splitlines() if line.strip()]
        more = len(quoted) - MAX_QUOTED
        out = [f"{head} returned:"] + [f"    {line}" for line in quoted[:MAX_QUOTED]]
        if more > 0:
            out.append(f"    ... ({more} more lines)")
        return out


def _paths_given(tool: ToolSpec, request: Request) -> bool:
    """The instruction binds values by name, so only the required properties it left out are
    filled (``fill_request``): when none of them is a path and each path it gives is absolute
    ("Use read_text_file with path = '/srv/a.txt'"), the server's root is not needed and not asked."""
    if not request.bound:
        return False
    bound = dict(request.bound)
    required = set(tool.input_schema.get("required", []))
    for key in path_fields(tool):
        value = bound.get(key)
        if value is None and key in required:
            return False
        if isinstance(value, str) and not _ABSOLUTE.match(value):
            return False  # a relative path is placed under the root
    return True


def fill_request(tool: ToolSpec, request: Request, ctx: Context) -> dict[str, Any] | None:
    """The tool's arguments for the request: values the prompt bound by name, the rest filled."""
    if not request.bound:
        return fill_tool(tool, request.clause, ctx)
    bound = {
        k: resolve_path(v, ctx) if takes_path(tool, k) and isinstance(v, str) else v for k, v in request.bound
    }
    schema = tool.input_schema
    props = schema_props(schema)
    # The instruction gave values by name: the filler supplies only the required ones it left
    # out, never optional ones guessed from the rest of the prompt (its words are the instruction).
    missing = [k for k in schema.get("required", []) if k not in bound]
    rest_schema = {**schema, "properties": {k: props[k] for k in missing if k in props}, "required": missing}
    rest = fill_tool(replace(tool, input_schema=rest_schema), _without(request.clause, request.bound), ctx)
    if rest is None:
        return None
    args = {k: {**rest, **bound}[k] for k in props if k in rest or k in bound}
    return args if schema_valid(schema, args) else None


def _without(clause: Clause, bound: tuple[tuple[str, Any], ...]) -> Clause:
    """The clause without the values already bound, so no other property takes them again."""
    used = {v for _, v in bound if isinstance(v, str | int | float)}  # an object or array: no literal
    lit = clause.literals
    left = replace(
        lit,
        quoted=tuple(v for v in lit.quoted if v not in used),
        paths=tuple(v for v in lit.paths if v not in used),
        names=tuple(v for v in lit.names if v not in used),
        numbers=tuple(v for v in lit.numbers if v not in used),
    )
    return replace(clause, literals=left)


def _is_content(call: Call) -> bool:
    """Whether the result is a file's text, line for line (so its lines can be cited)."""
    words = set(tokens(call.tool.name))
    if call.request < 0 or not words & _READ or words & _NOT_CONTENT:
        return False
    if any(set(tokens(k)) & _WINDOW for k in call.args):
        return False  # a tail or an offset: the numbering would not be the file's
    path = _file_arg(call)
    return bool(path) and "." in path.rsplit("/", 1)[-1]


def _file_arg(call: Call) -> str:
    fields = path_fields(call.tool)
    values = [v for k, v in call.args.items() if k in fields and isinstance(v, str)]
    return values[0] if len(values) == 1 else ""


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _brief(args: dict[str, Any]) -> str:
    parts = []
    for k, v in args.items():
        shown = json.dumps(v, ensure_ascii=False)
        parts.append(f"{k}={shown if len(shown) <= 80 else shown[:77] + '...'}")
    return ", ".join(parts)


def _first_line(text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first[: MAX_LINE * 2]
