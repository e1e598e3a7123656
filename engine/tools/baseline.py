"""The baseline arm's built-in tools: list, read and grep the pinned commit, nothing else.

They stand in for the read-only shell an agent has without MCP. Every path goes through
``PinnedRepo``, whose tree listing at the commit is the only readable universe, so an agent
cannot reach the working tree or anything outside the repository.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import re2

from proctor.engine.tools.toolbox import ToolCallOutcome, ToolSpec
from proctor.scenarios.repo import PinnedRepo, RepoError
from proctor.store.events import ServerConnected
from proctor.store.tool_origin import BUILTIN_SERVER

SERVER = BUILTIN_SERVER  # a label: ``builtin=True`` on each spec and outcome is what marks them
MAX_READ_LINES = 400
MAX_GREP_HITS = 100
MAX_PATTERN = 200
GREP_BUDGET_S = 5.0

SPECS = [
    ToolSpec(
        name="list_files",
        description="List files and folders in a directory of the repository (folders end with '/').",
        input_schema={
            "type": "object",
            "properties": {"path": {"type": "string", "description": "directory, '' for the root"}},
            "required": [],
        },
        server=SERVER,
        server_description="read-only access to the pinned repository",
        builtin=True,
    ),
    ToolSpec(
        name="read_file",
        description="Read a file of the repository with line numbers; optionally a range of lines.",
        input_schema={
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "start": {"type": "integer", "minimum": 1, "default": 1},
                "end": {"type": "integer", "minimum": 1},
            },
            "required": ["path"],
        },
        server=SERVER,
        server_description="read-only access to the pinned repository",
        builtin=True,
    ),
    ToolSpec(
        name="grep",
        description="Search the repository's files for a text (case-insensitive); prints path:line: text.",
        input_schema={
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "literal text, or a regex with regex=true"},
                "path": {"type": "string", "description": "only files under this directory", "default": ""},
                "regex": {"type": "boolean", "default": False},
            },
            "required": ["pattern"],
        },
        server=SERVER,
        server_description="read-only access to the pinned repository",
        builtin=True,
    ),
]


class BaselineToolbox:
    def __init__(self, repo: PinnedRepo) -> None:
        self._repo = repo

    def specs(self) -> list[ToolSpec]:
        return list(SPECS)

    def connected(self) -> list[ServerConnected]:
        return []

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolCallOutcome:
        start = time.perf_counter()
        try:
            if name == "list_files":
                text = "\n".join(self._repo.list_dir(_str(arguments, "path", "")))
            elif name == "read_file":
                text = await asyncio.to_thread(self._read, arguments)
            elif name == "grep":
                text = await asyncio.to_thread(self._grep, arguments)
            else:
                raise ToolInputError(f"unknown tool {name!r}; available: list_files, read_file, grep")
        except (ToolInputError, RepoError) as exc:
            return ToolCallOutcome(
                SERVER, name, str(exc), True, time.perf_counter() - start, "tool_error", builtin=True
            )
        return ToolCallOutcome(SERVER, name, text, False, time.perf_counter() - start, builtin=True)

    async def aclose(self) -> None:
        return None

    def _read(self, args: dict[str, Any]) -> str:
        path = _str(args, "path")
        lines = self._repo.lines(path)
        first = _int(args, "start", 1)
        last = min(_int(args, "end", first + MAX_READ_LINES - 1), len(lines), first + MAX_READ_LINES - 1)
        if first > len(lines):
            raise ToolInputError(f"{path} has {len(lines)} lines; start={first} is past the end")
        body = "\n".join(f"{n:>5} | {lines[n - 1]}" for n in range(first, last + 1))
        return f"{path}:{first}-{last} (of {len(lines)})\n{body}"

    def _grep(self, args: dict[str, Any]) -> str:
        pattern = _str(args, "pattern")
        if not pattern or len(pattern) > MAX_PATTERN:
            raise ToolInputError(f"pattern must be 1..{MAX_PATTERN} characters")
        rx = _linear_regex(pattern if args.get("regex") else re2.escape(pattern))
        prefix = _str(args, "path", "").strip("/")
        files = [f for f in self._repo.files() if not prefix or f.startswith(prefix + "/") or f == prefix]
        self._repo.preload(files)
        hits: list[str] = []
        deadline = time.monotonic() + GREP_BUDGET_S
        for f in files:
            if time.monotonic() > deadline:
                return "\n".join([*hits, f"(stopped after {GREP_BUDGET_S:g}s; narrow the search with path)"])
            for n, line in enumerate(self._repo.lines(f), 1):
                if rx.search(line):
                    hits.append(f"{f}:{n}: {line.strip()[:200]}")
                    if len(hits) >= MAX_GREP_HITS:
                        return "\n".join([*hits, f"(stopped at {MAX_GREP_HITS} matches)"])
        return "\n".join(hits) if hits else "no matches"


class ToolInputError(Exception):
    pass


def _linear_regex(pattern: str) -> Any:
    """The agent's pattern in RE2: linear in the text, so no pattern can stall the engine."""
    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = False
    try:
        return re2.compile(pattern, options=options)
    except re2.error as exc:
        detail = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise ToolInputError(
            f"invalid regex: {detail} (RE2 syntax: no backreferences or lookaround)"
        ) from exc


def _str(args: dict[str, Any], key: str, default: str | None = None) -> str:
    value = args.get(key, default)
    if not isinstance(value, str):
        raise ToolInputError(f"argument {key!r} must be a string")
    return value


def _int(args: dict[str, Any], key: str, default: int) -> int:
    value = args.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ToolInputError(f"argument {key!r} must be an integer")
    try:
        n = int(value)
    except ValueError as exc:
        raise ToolInputError(f"argument {key!r} must be an integer") from exc
    if n < 1:
        raise ToolInputError(f"argument {key!r} must be >= 1")
    return n
