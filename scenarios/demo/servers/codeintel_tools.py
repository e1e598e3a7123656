"""The code-intelligence tools, shared by the good and the deliberately stale server.

Both servers expose the same tool names, schemas and descriptions; they differ only in the
:class:`IndexView` through which they present the index. The stale view reports every line
number shifted by a header that no longer exists and has lost track of some files, which is
exactly the kind of defect a benchmark should catch through citation grounding.

Output formats are a contract with the offline agent and the tests:

- ``search_symbols``: ``path:LINE: KIND qualified.name`` per hit
- ``find_definition``: ``path:START-END: KIND qualified.name`` then ``   N | text`` lines
- ``find_references``: ``path:LINE: stripped source line``
- ``read_lines``: ``path:START-END`` then ``   N | text`` lines
- ``list_files``: one path per line
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from proctor.scenarios.demo.servers.code_index import CodeIndex, Symbol
from proctor.scenarios.repo import PinnedRepo, safe_relpath

DEFINITION_MAX_LINES = 40
READ_MAX_LINES = 400

SERVER_DESCRIPTION = (
    "Code intelligence for one git repository pinned at a fixed commit: search Python symbols "
    "(classes, functions, methods, constants) by name or meaning, jump to a definition with its "
    "source and exact line numbers, find references, read numbered line ranges and list files. "
    "Use it to answer questions about the code and to cite file:line."
)

SEARCH_DESCRIPTION = (
    "Search the repository's Python symbols (classes, functions, methods, module constants) by "
    "name or by what they do. Words in the query are matched against symbol names first, then "
    "docstrings and comments, so both 'compute_backoff' and 'how long to wait before retrying' "
    "work. Returns one hit per line, best first: 'path:LINE: KIND qualified.name'."
)
DEFINITION_DESCRIPTION = (
    "Show the definition of a symbol: give a bare name ('compute_backoff'), 'Class.method' or a "
    "dotted module path ('tinyq.retry.RetryPolicy'). Returns 'path:START-END: KIND qualified.name' "
    "followed by the source as numbered lines '   N | text' (first 40 lines). Exact names only: "
    "use search_symbols when you only know what the code does."
)
REFERENCES_DESCRIPTION = (
    "Find where a symbol is used: every whole-word occurrence of its name in the repository "
    "(calls, imports, mentions in docs and tests), excluding its own definition. Returns "
    "'path:LINE: source line' per occurrence."
)
READ_LINES_DESCRIPTION = (
    "Read lines START..END (inclusive, 1-based) of a file at the pinned commit. Returns "
    "'path:START-END' and then numbered lines '   N | text'. At most 400 lines per call; the end "
    "is clamped to the end of the file."
)
LIST_FILES_DESCRIPTION = (
    "List the files of the repository at the pinned commit, one path per line, optionally only "
    "those whose path starts with a prefix such as 'tinyq/storage/'."
)


@dataclass(frozen=True)
class IndexView:
    """How line numbers and files are presented.

    ``header`` holds lines shown before the real first line, so every reported line number
    is ``real + len(header)``; ``reference_paths`` picks the files that references are
    searched in.
    """

    header: tuple[str, ...] = ()
    reference_paths: Callable[[Sequence[str]], list[str]] = list

    @property
    def offset(self) -> int:
        return len(self.header)


def number_lines(first: int, lines: Sequence[str]) -> list[str]:
    return [f"{first + i:>4} | {text}" for i, text in enumerate(lines)]


class CodeIntel:
    """The tool implementations over one index and one view; every method returns plain text."""

    def __init__(self, index: CodeIndex, view: IndexView) -> None:
        self.index = index
        self.view = view

    def _lines(self, path: str) -> list[str]:
        return [*self.view.header, *self.index.text[path]]

    def _location(self, s: Symbol) -> str:
        return f"{s.path}:{s.line + self.view.offset}: {s.kind} {s.qualname}"

    def search_symbols(self, query: str, limit: int = 10) -> str:
        if not query.strip():
            raise ToolError("query is empty: give a symbol name or a few words about what the code does")
        hits = self.index.search(query, limit)
        if not hits:
            return f"no symbols match {query!r}; try other words or list_files"
        return "\n".join(self._location(h.symbol) for h in hits)

    def find_definition(self, symbol: str) -> str:
        found = self.index.resolve(symbol)
        if not found:
            close = self.index.close_names(symbol)
            hint = f"; similar names: {', '.join(close)}" if close else "; try search_symbols"
            raise ToolError(f"no definition named {symbol!r} at this commit{hint}")
        s = found[0]
        off = self.view.offset
        start, end = s.first_line + off, s.end_line + off
        body = self._lines(s.path)[start - 1 : end]
        out = [f"{s.path}:{start}-{end}: {s.kind} {s.qualname}"]
        out += number_lines(start, body[:DEFINITION_MAX_LINES])
        if len(body) > DEFINITION_MAX_LINES:
            rest = start + DEFINITION_MAX_LINES
            out.append(
                f"... cut at {DEFINITION_MAX_LINES} of {len(body)} lines; "
                f"read_lines('{s.path}', {rest}, {end}) shows the rest"
            )
        if len(found) > 1:
            others = ", ".join(f"{o.path}:{o.line + off} {o.qualname}" for o in found[1:6])
            out.append(f"(also named {symbol.strip()!r}: {others})")
        return "\n".join(out)

    def find_references(self, symbol: str, limit: int = 20) -> str:
        if not symbol.strip().rstrip("()"):
            raise ToolError("symbol is empty: give a name such as 'compute_backoff'")
        paths = self.view.reference_paths(self.index.files)
        refs = list(self.index.references(symbol, paths))
        if not refs:
            return f"no references to {symbol.strip()!r} outside its definition"
        off = self.view.offset
        out = [f"{path}:{line + off}: {text}" for path, line, text in refs[:limit]]
        if len(refs) > limit:
            out.append(f"... {len(refs) - limit} more references not shown (raise limit)")
        return "\n".join(out)

    def _checked_path(self, path: str) -> str:
        rel = safe_relpath(path.strip())
        if rel is None or rel == "":
            raise ToolError(
                f"path {path!r} is not allowed: give a path relative to the repository root, "
                "without '..' or a leading '/'"
            )
        if rel not in self.index.text:
            if self.index.repo.is_dir(rel):
                raise ToolError(f"{rel!r} is a directory: use list_files('{rel}/')")
            raise ToolError(f"no file {rel!r} at commit {self.index.repo.commit[:12]}: use list_files")
        return rel

    def read_lines(self, path: str, start: int, end: int) -> str:
        rel = self._checked_path(path)
        if start < 1:
            raise ToolError(f"start must be 1 or more, got {start}")
        if end < start:
            raise ToolError(f"end ({end}) is before start ({start})")
        if end - start + 1 > READ_MAX_LINES:
            raise ToolError(
                f"range {start}-{end} is {end - start + 1} lines; read at most {READ_MAX_LINES} lines per call"
            )
        lines = self._lines(rel)
        if start > len(lines):
            raise ToolError(f"start {start} is past the end of {rel} ({len(lines)} lines)")
        end = min(end, len(lines))
        return "\n".join([f"{rel}:{start}-{end}", *number_lines(start, lines[start - 1 : end])])

    def list_files(self, prefix: str = "") -> str:
        wanted = prefix.strip()
        if wanted and (safe_relpath(wanted.rstrip("/")) is None or wanted.startswith("/")):
            raise ToolError(f"prefix {prefix!r} is not allowed: give a path relative to the repository root")
        paths = [p for p in self.index.files if p.startswith(wanted.removeprefix("./"))]
        if not paths:
            return f"no files under {prefix!r}"
        return "\n".join(paths)


_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def build_codeintel_server(repo: PinnedRepo, name: str, view: IndexView) -> MCPServer[Any]:
    """An MCP server exposing :class:`CodeIntel` over ``repo`` through ``view``."""
    intel = CodeIntel(CodeIndex(repo), view)
    server: MCPServer[Any] = MCPServer(
        name=name,
        description=SERVER_DESCRIPTION,
        instructions=SERVER_DESCRIPTION,
        log_level="WARNING",
    )

    def search_symbols(
        query: Annotated[str, Field(description="symbol name or words describing what the code does")],
        limit: Annotated[int, Field(ge=1, le=100, description="maximum number of hits")] = 10,
    ) -> str:
        return intel.search_symbols(query, limit)

    def find_definition(
        symbol: Annotated[str, Field(description="name, Class.method or dotted.module.name")],
    ) -> str:
        return intel.find_definition(symbol)

    def find_references(
        symbol: Annotated[str, Field(description="name of the symbol whose uses to find")],
        limit: Annotated[int, Field(ge=1, le=200, description="maximum number of references")] = 20,
    ) -> str:
        return intel.find_references(symbol, limit)

    def read_lines(
        path: Annotated[str, Field(description="file path relative to the repository root")],
        start: Annotated[int, Field(description="first line to show (1-based)")],
        end: Annotated[int, Field(description="last line to show (inclusive)")],
    ) -> str:
        return intel.read_lines(path, start, end)

    def list_files(
        prefix: Annotated[str, Field(description="only paths starting with this, e.g. 'tinyq/'")] = "",
    ) -> str:
        return intel.list_files(prefix)

    tools: list[tuple[Callable[..., str], str]] = [
        (search_symbols, SEARCH_DESCRIPTION),
        (find_definition, DEFINITION_DESCRIPTION),
        (find_references, REFERENCES_DESCRIPTION),
        (read_lines, READ_LINES_DESCRIPTION),
        (list_files, LIST_FILES_DESCRIPTION),
    ]
    for fn, description in tools:
        server.add_tool(fn, description=description, annotations=_READ_ONLY, structured_output=False)
    return server
