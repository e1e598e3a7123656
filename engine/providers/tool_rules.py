"""MCP tool definitions held to each model API's documented rules before anything is sent.

One bad definition fails every request of an arm, so each is checked before the first trial.
What can be adapted without losing anything is adapted, reversibly and on the record: a name the
API refuses is sent as a safe alias (the map goes both ways: every event keeps the original
name), and a description over OpenAI's limit is cut (the full one stays in ``tools_listed``).
What cannot be adapted (a schema with ``anyOf`` at its root, for Anthropic) is a ``ToolProblem``
that names the server, the tool, the field and the fix; the run refuses to start on one.

The rules, and where they are documented (or, where the docs are silent, recorded):

- Anthropic ``name``: ``^[a-zA-Z0-9_-]{1,64}$``
  (https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use).
- OpenAI function ``name``: a-z, A-Z, 0-9, underscores and dashes, at most 64
  (https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools).
- OpenAI function ``description``: at most 1,024 characters; the API answers 400
  ``string_above_max_length`` (recorded in getsentry/sentry-mcp#106, microsoft/genaiscript#1381
  with server-sequential-thinking's 2,780-character description).
- Anthropic ``input_schema``: no ``anyOf``/``oneOf``/``allOf`` at the top level; the API answers 400
  "input_schema does not support oneOf, allOf, or anyOf at the top level" (recorded in
  anthropics/claude-code#5319, zereight/gitlab-mcp#551 for a zod union).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from proctor.engine.tools.toolbox import ToolSpec

WireApi = Literal["anthropic", "openai"]

NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
NAME_MAX = 64
OPENAI_DESCRIPTION_MAX = 1024
ROOT_COMBINATORS = ("anyOf", "oneOf", "allOf")

ANTHROPIC_TOOL_DOCS = "https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use"
OPENAI_TOOL_DOCS = "https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools"


@dataclass(frozen=True)
class ToolProblem:
    """A definition the API refuses and proctor cannot adapt: the run does not start."""

    api: WireApi
    server: str
    tool: str
    field: str
    rule: str
    fix: str

    def message(self) -> str:
        where = f"server '{self.server}'" if self.server else "a built-in tool"
        return f"{where}, tool '{self.tool}', field '{self.field}': {self.rule}; {self.fix}"


@dataclass(frozen=True)
class Adaptation:
    """One change made so the API accepts a definition; ``original`` is what the server sent."""

    server: str
    tool: str
    field: Literal["name", "description"]
    original: str
    sent: str
    reason: str

    def message(self) -> str:
        if self.field == "name":
            return f"tool '{self.tool}' ({self.server or 'built-in'}) sent as '{self.sent}': {self.reason}"
        return (
            f"tool '{self.tool}' ({self.server or 'built-in'}): description cut from "
            f"{len(self.original):,} to {len(self.sent):,} characters: {self.reason}"
        )


@dataclass(frozen=True)
class WireTools:
    """The tools as one API is sent them, and the way back to the names the servers gave."""

    api: WireApi
    sent: tuple[ToolSpec, ...]
    originals: tuple[ToolSpec, ...]
    adaptations: tuple[Adaptation, ...]

    def wire_name(self, name: str) -> str:
        for original, sent in zip(self.originals, self.sent, strict=True):
            if original.name == name:
                return sent.name
        return name

    def original_name(self, wire: str) -> str:
        for original, sent in zip(self.originals, self.sent, strict=True):
            if sent.name == wire:
                return original.name
        return wire

    def renamed(self) -> dict[str, str]:
        """original name -> name sent, for the tools whose name was changed."""
        return {o.name: s.name for o, s in zip(self.originals, self.sent, strict=True) if o.name != s.name}

    def describe_index(self, index: int) -> str | None:
        """``'read_file' of server 'filesystem'`` for the tool at ``index`` of the request, if any."""
        if not 0 <= index < len(self.originals):
            return None
        tool = self.originals[index]
        return f"'{tool.name}' of server '{tool.server}'" if tool.server else f"'{tool.name}' (built-in)"


WIRE_APIS: dict[str, WireApi] = {"anthropic": "anthropic", "openai": "openai"}


def wire_api_of(model_id: str) -> WireApi | None:
    """The API whose rules a model's tool definitions are held to; None for offline models."""
    return WIRE_APIS.get(model_id.partition(":")[0])


def tool_problems(api: WireApi, tools: Sequence[ToolSpec]) -> list[ToolProblem]:
    """Definitions ``api`` refuses that no adaptation can fix."""
    problems: list[ToolProblem] = []
    if api == "anthropic":
        for tool in tools:
            found = [k for k in ROOT_COMBINATORS if k in tool.input_schema]
            if found:
                problems.append(
                    ToolProblem(
                        api,
                        tool.server,
                        tool.name,
                        "input_schema",
                        f"the Anthropic API refuses {'/'.join(found)} at the top level of a tool's "
                        "input_schema (400 'input_schema does not support oneOf, allOf, or anyOf at the "
                        "top level')",
                        "have the server publish one object schema (a zod union becomes anyOf), or "
                        "leave this server out of the arms run with anthropic: models",
                    )
                )
    return problems


def adapt_tools(api: WireApi, tools: Sequence[ToolSpec]) -> WireTools:
    """``tools`` as ``api`` accepts them: safe names, descriptions within the limit; the same
    input always gives the same aliases, so every trial and every report agree."""
    taken = {t.name for t in tools if NAME_PATTERN.match(t.name)}
    sent: list[ToolSpec] = []
    adaptations: list[Adaptation] = []
    names_doc = ANTHROPIC_TOOL_DOCS if api == "anthropic" else OPENAI_TOOL_DOCS
    for tool in tools:
        spec = tool
        if not NAME_PATTERN.match(tool.name):
            alias = _alias(tool.name, taken)
            taken.add(alias)
            spec = dataclasses.replace(spec, name=alias)
            adaptations.append(
                Adaptation(
                    tool.server,
                    tool.name,
                    "name",
                    tool.name,
                    alias,
                    f"{api} tool names must match ^[a-zA-Z0-9_-]{{1,64}}$ ({names_doc})",
                )
            )
        if api == "openai" and len(tool.description) > OPENAI_DESCRIPTION_MAX:
            cut = tool.description[: OPENAI_DESCRIPTION_MAX - 1].rstrip() + "…"
            spec = dataclasses.replace(spec, description=cut)
            adaptations.append(
                Adaptation(
                    tool.server,
                    tool.name,
                    "description",
                    tool.description,
                    cut,
                    f"OpenAI refuses function descriptions over {OPENAI_DESCRIPTION_MAX:,} characters",
                )
            )
        sent.append(spec)
    return WireTools(api, tuple(sent), tuple(tools), tuple(adaptations))


def _alias(name: str, taken: set[str]) -> str:
    """A name the APIs accept that says where it came from: invalid characters become ``_``; a
    name too long (or already taken) keeps its head and ends in 8 hex digits of its hash."""
    safe = re.sub(r"[^a-zA-Z0-9_-]", "_", name) or "tool"
    if len(safe) <= NAME_MAX and safe not in taken:
        return safe
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{safe[: NAME_MAX - 9]}_{digest}"


_TOOL_INDEX = re.compile(r"tools(?:\.|\[)(\d+)(?:\])?")


def name_tools_in_error(message: str, wire: WireTools | None) -> str:
    """An API's error with each tool index it names followed by the tool and its server:
    ``tools.3.custom.name: …`` says nothing to a user who never saw the request."""
    if wire is None:
        return message
    named: list[str] = []
    for match in _TOOL_INDEX.finditer(message):
        described = wire.describe_index(int(match.group(1)))
        text = f"{match.group(0)} is {described}" if described else None
        if text and text not in named:
            named.append(text)
    return f"{message} ({'; '.join(named)})" if named else message


__all__ = [
    "NAME_PATTERN",
    "OPENAI_DESCRIPTION_MAX",
    "Adaptation",
    "ToolProblem",
    "WireApi",
    "WireTools",
    "adapt_tools",
    "name_tools_in_error",
    "tool_problems",
    "wire_api_of",
]
