"""A stdio MCP server (mcp SDK) whose tools take pydantic models, as most Python servers' do.

The SDK writes each model parameter into the input schema's ``$defs`` and points at it with
``$ref``: nested models, a list of models, an optional model (``anyOf`` [ref, null]), an enum
with a default, a recursive model. The SDK validates every call against the models, so a call
it answers without an error had arguments the server really accepts.
Run as ``python tests/fakes/pydantic_models_mcp_server.py``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field


class Order(StrEnum):
    ascending = "ascending"
    descending = "descending"


class SortKey(BaseModel):
    column: str
    order: Order = Order.ascending


class Protection(BaseModel):
    enabled: bool
    password: str | None = Field(None, max_length=20)


class Settings(BaseModel):
    title: str = Field(min_length=8)
    protection: Protection
    mode: Literal["auto", "manual"]


class Node(BaseModel):
    name: str
    children: list[Node] = []


server: MCPServer[Any] = MCPServer(name="models", log_level="WARNING")


@server.tool(structured_output=False)
def sort_range(path: str, sort_by: Annotated[list[SortKey], Field(min_length=2)]) -> str:
    """Sort a range by columns."""
    return f"sorted {path} by " + ", ".join(f"{k.column} {k.order.value}" for k in sort_by)


@server.tool(structured_output=False)
def set_settings(path: str, settings: Settings, fallback: Protection | None = None) -> str:
    """Set a workbook's settings."""
    return f"{path}: {settings.title} ({settings.mode}, protected={settings.protection.enabled})"


@server.tool(structured_output=False)
def count_nodes(root: Node) -> str:
    """Count the nodes of a tree."""

    def count(node: Node) -> int:
        return 1 + sum(count(c) for c in node.children)

    return f"{count(root)} node(s) under {root.name}"


if __name__ == "__main__":
    server.run("stdio")
