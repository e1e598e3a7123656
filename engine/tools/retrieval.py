"""Top-k tool retrieval: the model sees ``route`` and ``execute`` instead of every tool.

With many servers (and distractors) a model drowns in tool definitions; LiveMCPBench's agent
first asks for the tools relevant to a need, then calls one. ``route`` ranks all of the arm's
tools by BM25 over server and tool descriptions and returns the top k with their schemas.
Both are the router's own tools, marked built-in; the result of a call through ``execute`` is
the MCP server's, and marked as such.
"""

from __future__ import annotations

import json
import time
from typing import Any

from proctor.engine.tools.ranking import bm25_rank
from proctor.engine.tools.toolbox import Toolbox, ToolCallOutcome, ToolSpec
from proctor.store.events import ServerConnected

ROUTE = ToolSpec(
    name="route",
    description="Find the tools that can help with a need. Returns the best matching tools with their "
    "descriptions and input schemas; call one of them with `execute`.",
    input_schema={
        "type": "object",
        "properties": {"query": {"type": "string", "description": "what you need a tool for"}},
        "required": ["query"],
    },
    server="proctor-router",
    builtin=True,
)
EXECUTE = ToolSpec(
    name="execute",
    description="Call a tool found with `route`, by its name, with arguments matching its input schema.",
    input_schema={
        "type": "object",
        "properties": {"tool": {"type": "string"}, "arguments": {"type": "object"}},
        "required": ["tool", "arguments"],
    },
    server="proctor-router",
    builtin=True,
)


class RetrievalToolbox:
    def __init__(self, inner: Toolbox, top_k: int) -> None:
        self._inner = inner
        self._top_k = top_k

    def specs(self) -> list[ToolSpec]:
        return [ROUTE, EXECUTE]

    def connected(self) -> list[ServerConnected]:
        return self._inner.connected()

    def routed_specs(self) -> list[ToolSpec]:
        """The tools ``execute`` can reach (not offered to the model directly)."""
        return self._inner.specs()

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolCallOutcome:
        if name == "route":
            return self._route(arguments)
        if name == "execute":
            tool = arguments.get("tool")
            args = arguments.get("arguments", {})
            if not isinstance(tool, str) or not isinstance(args, dict):
                return ToolCallOutcome(
                    EXECUTE.server,
                    name,
                    "execute needs 'tool' (string) and 'arguments' (object)",
                    True,
                    0.0,
                    "bad_arguments",
                    builtin=True,
                )
            return await self._inner.call(tool, args)
        return ToolCallOutcome(
            EXECUTE.server,
            name,
            f"unknown tool {name!r}; use route or execute",
            True,
            0.0,
            "unknown_tool",
            builtin=True,
        )

    def _route(self, arguments: dict[str, Any]) -> ToolCallOutcome:
        start = time.perf_counter()
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolCallOutcome(
                ROUTE.server,
                "route",
                "route needs a non-empty 'query'",
                True,
                0.0,
                "bad_arguments",
                builtin=True,
            )
        ranked = bm25_rank(query, self._inner.specs())[: self._top_k]
        listing = [
            {
                "tool": t.name,
                "server": t.server,
                "description": t.description,
                "input_schema": t.input_schema,
                "score": round(score, 3),
            }
            for score, t in ranked
        ]
        return ToolCallOutcome(
            ROUTE.server,
            "route",
            json.dumps(listing, indent=1),
            False,
            time.perf_counter() - start,
            builtin=True,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()
