"""The reference MCP servers' real tool definitions, and a small stand-in that serves them.

The definitions are the servers' own ``tools/list`` answers (fixtures/reference_tools/). The
stand-in answers the handful of tools the offline agent's tests drive, with the servers' own
output formats and refusals (a git path outside ``--repository``, a filesystem path outside the
allowed directories), and records every call that its schema would reject.
"""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from typing import Any

from jsonschema import validators

from proctor.engine.tools.toolbox import ToolCallOutcome, ToolSpec

FIXTURES = Path(__file__).parent / "fixtures" / "reference_tools"
SERVERS = ("filesystem", "git", "memory", "everything")


def reference_tools(*servers: str) -> list[ToolSpec]:
    """The tools of ``servers`` (all four by default), as proctor's toolbox exposes them."""
    out: list[ToolSpec] = []
    for server in servers or SERVERS:
        (path,) = FIXTURES.glob(f"{server}-*.json")
        for tool in json.loads(path.read_text())["tools"]:
            out.append(ToolSpec(tool["name"], tool.get("description", ""), tool["inputSchema"], server))
    return out


REGISTRY_NAMES = ("io.github.modelcontextprotocol/server-filesystem", "io.github.acme/server-files")
"""Registry-style server names (the MCP registry's ``io.github.OWNER/NAME``)."""


def fixture_tools(stem: str, server: str) -> list[ToolSpec]:
    """The tools of one fixture file (``fixtures/reference_tools/STEM.json``), served by ``server``."""
    tools = json.loads((FIXTURES / f"{stem}.json").read_text())["tools"]
    return [ToolSpec(t["name"], t.get("description", ""), t["inputSchema"], server) for t in tools]


class _Listed:
    """A connection as McpToolbox reads it: a server name and its tools."""

    def __init__(self, name: str, specs: list[ToolSpec]) -> None:
        self.name = name
        self._specs = specs

    def specs(self) -> list[ToolSpec]:
        return self._specs


def colliding_registry_tools() -> list[ToolSpec]:
    """Two registry-named servers that both serve server-filesystem's tools, as the toolbox
    exposes them: the colliding names prefixed with the server's name."""
    from proctor.engine.tools.mcp_toolbox import McpToolbox

    conns: list[Any] = [_Listed(name, reference_tools("filesystem")) for name in REGISTRY_NAMES]
    return McpToolbox(Any, conns, None).specs()  # type: ignore[arg-type]


def schema_errors(tool: ToolSpec, arguments: dict[str, Any]) -> list[str]:
    cls = validators.validator_for(tool.input_schema)
    return [e.message for e in cls(tool.input_schema).iter_errors(arguments)]


class ReferenceToolbox:
    """The reference servers' tools over an in-memory repository at ``root``."""

    def __init__(self, root: str, files: dict[str, str], *servers: str) -> None:
        self.root = root
        self.files = files
        self.specs_ = reference_tools(*servers)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.invalid: list[str] = []
        self.graph: dict[str, list[dict[str, Any]]] = {"entities": [], "relations": []}

    def specs(self) -> list[ToolSpec]:
        return list(self.specs_)

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolCallOutcome:
        self.calls.append((name, arguments))
        spec = next((s for s in self.specs_ if s.name == name), None)
        if spec is None:
            return ToolCallOutcome("", name, f"Unknown tool: {name}", True, 0.0)
        if problems := schema_errors(spec, arguments):
            self.invalid.append(f"{name}: {problems}")
            return ToolCallOutcome(spec.server, name, f"Invalid arguments: {problems}", True, 0.0)
        try:
            text = self._answer(name, arguments)
        except PermissionError as exc:
            return ToolCallOutcome(spec.server, name, str(exc), True, 0.0)
        return ToolCallOutcome(spec.server, name, text, False, 0.0)

    async def aclose(self) -> None:
        return None

    def _inside(self, path: str) -> str:
        full = posixpath.normpath(path if path.startswith("/") else posixpath.join("/nowhere", path))
        if full != self.root and not full.startswith(self.root + "/"):
            raise PermissionError(
                f"Access denied - path outside allowed directories: {full} not in {self.root}"
            )
        return full[len(self.root) + 1 :] if full != self.root else ""

    def _answer(self, name: str, args: dict[str, Any]) -> str:
        if name == "list_allowed_directories":
            return f"Allowed directories:\n{self.root}"
        if name == "list_directory":
            prefix = self._inside(args["path"])
            prefix = prefix + "/" if prefix else ""
            entries = sorted({p[len(prefix) :].split("/")[0] for p in self.files if p.startswith(prefix)})
            dirs = {p[len(prefix) :].split("/")[0] for p in self.files if "/" in p[len(prefix) :]}
            return "\n".join(f"[{'DIR' if e in dirs else 'FILE'}] {e}" for e in entries)
        if name in ("read_text_file", "read_file"):
            return self.files[self._inside(args["path"])]
        if name.startswith("git_"):
            path = args["repo_path"]
            if not path.startswith(self.root):
                raise PermissionError(
                    f"Error executing tool {name}: Repository path '{path}' is outside the allowed "
                    f"repository '{self.root}'"
                )
            return "Commit history:\nCommit: 54b0866\nAuthor: t\nDate: 2026-01-01\nMessage: initial commit\n"
        if name == "create_entities":
            self.graph["entities"].extend(args["entities"])
            return json.dumps(args["entities"], indent=2)
        if name == "create_relations":
            self.graph["relations"].extend(args["relations"])
            return json.dumps(args["relations"], indent=2)
        if name == "read_graph":
            return json.dumps(self.graph, indent=2)
        if name == "echo":
            return f"Echo: {args['message']}"
        if name == "get-sum":
            return f"The sum of {args['a']} and {args['b']} is {args['a'] + args['b']}."
        return f"{name} is not served by this stand-in"
