"""A recorded run's tool surface, folded from its ``tools_listed`` events (one per trial).

Each trial records the tools its model was offered, with their servers' definitions. From these
come the run's surface (server -> tool -> definition, for a diff or a lock check) and each
trial's per-turn definition cost in tokens. A payload recurs verbatim in every trial of an arm,
so each distinct one is parsed and counted once.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from proctor.engine.tools.definition_tokens import (
    TokenizerUnavailable,
    as_sent,
    count_tokens,
    definition_tokens,
)
from proctor.engine.tools.surface import Surface, ToolDefinition, own_name, surface_of
from proctor.store.events import Event, ListedTool, ToolsListed
from proctor.store.tool_origin import is_builtin

BUILT_IN = "(built-in)"  # the label of tools without a server


def is_mcp(d: ToolDefinition) -> bool:
    """An MCP server's tool: built-in ones (the baseline's, the router's, an agent's own) are
    costs, never part of a surface."""
    return bool(d.server) and not d.builtin


@dataclass(frozen=True)
class Listing:
    """One ``tools_listed`` payload: the tools offered in a trial, under their servers' own names."""

    tools: tuple[ToolDefinition, ...]
    tokens: tuple[int, ...]  # each tool's definition tokens, in the order of ``tools``
    # Computed once per distinct payload (a run of 10k trials has a few): what every trial needs.
    total: int = 0
    by_server: tuple[tuple[str, int], ...] = ()
    mcp_hashes: tuple[tuple[str, str, str], ...] = ()  # (server, tool, sha256) of MCP tools

    def tokens_by_server(self) -> dict[str, int]:
        return dict(self.by_server)


def listing_of(tools: Iterable[Any]) -> Listing:
    """From ``ListedTool`` models or their msgspec Structs (the report reads those). Each tool's
    tokens are the ones its run recorded, else counted here (older runs, imports)."""
    listed = tuple(tools)
    defs = tuple(_definition(t) for t in listed)
    tokens = tuple(_recorded(t) or definition_tokens(d) for t, d in zip(listed, defs, strict=True))
    by_server: dict[str, int] = {}
    for d, n in zip(defs, tokens, strict=True):
        by_server[d.server or BUILT_IN] = by_server.get(d.server or BUILT_IN, 0) + n
    hashes = tuple((d.server, d.name, d.sha256()) for d in defs if is_mcp(d))
    return Listing(defs, tokens, sum(tokens), tuple(by_server.items()), hashes)


def _recorded(t: Any) -> int | None:
    """The tokens a run recorded for this tool; 0 counts as not recorded (every definition has a
    name, so it costs tokens), and is counted again like a missing one."""
    n = t.get("definition_tokens") if isinstance(t, dict) else getattr(t, "definition_tokens", None)
    return n if type(n) is int and n > 0 else None


def with_definition_tokens(tools: Iterable[ListedTool]) -> list[ListedTool]:
    """``tools`` as a run records them: each with its definition's tokens, counted once per
    distinct definition; without them when the tokenizer is not installed (the report counts
    them then, or says it cannot)."""
    listed = list(tools)
    try:
        counts = [_tokens_of_text(as_sent(_definition(t))) for t in listed]
    except TokenizerUnavailable:
        return listed
    return [t.model_copy(update={"definition_tokens": n}) for t, n in zip(listed, counts, strict=True)]


@functools.lru_cache(maxsize=4096)
def _tokens_of_text(text: str) -> int:
    return count_tokens(text)


def _definition(t: Any) -> ToolDefinition:
    get = t.get if isinstance(t, dict) else lambda k, d=None: getattr(t, k, d)
    server = str(get("server", "") or "")
    return ToolDefinition(
        server=server,
        name=own_name(str(get("name", "")), server) if server else str(get("name", "")),
        description=str(get("description", "") or ""),
        input_schema=dict(get("input_schema", {}) or {}),
        title=get("title"),
        output_schema=get("output_schema"),
        annotations=get("annotations"),
        builtin=is_builtin(t),
    )


def slow_listing(event: Event) -> Listing | None:
    return listing_of(event.tools) if isinstance(event, ToolsListed) else None


@dataclass
class RunSurface:
    """What a run's trials were offered: the surface, and each trial's listing."""

    listings: dict[int, Listing] = field(default_factory=dict)  # trial id -> its current attempt's
    variants: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # (server, tool) -> hashes
    # Each distinct listing object once, in order of arrival (readers hand out one object per
    # distinct payload, so a run's thousands of trials share a few).
    _distinct: dict[int, Listing] = field(default_factory=dict)

    def add(self, trial_id: int | None, abandoned: bool, listing: Listing) -> None:
        if trial_id is None or abandoned:
            return
        self.listings[trial_id] = listing
        if id(listing) in self._distinct:  # the same payload as an earlier trial's
            return
        self._distinct[id(listing)] = listing
        for server, name, sha in listing.mcp_hashes:
            self.variants.setdefault((server, name), set()).add(sha)

    def surface(self) -> Surface:
        """Every MCP tool offered in the run (the last definition seen, when a server changed)."""
        seen: dict[tuple[str, str], ToolDefinition] = {}
        for listing in self._distinct.values():
            for d in listing.tools:
                if is_mcp(d):
                    seen[(d.server, d.name)] = d
        return surface_of(seen.values())

    def distinct(self) -> list[Listing]:
        return list(self._distinct.values())

    def changed_during_run(self) -> list[tuple[str, str]]:
        """Tools whose definition was not the same in every trial (a server changed mid-run)."""
        return sorted(key for key, hashes in self.variants.items() if len(hashes) > 1)


__all__ = [
    "BUILT_IN",
    "Listing",
    "RunSurface",
    "is_mcp",
    "listing_of",
    "slow_listing",
]
