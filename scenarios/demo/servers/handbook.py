"""Distractor server: a canned engineering handbook.

Its pages use the same vocabulary as the demo questions (retries, backoff, rate limits,
configuration) but describe company policy, not the pinned code, so quoting them gives
confident answers with no valid citations.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from proctor.scenarios.demo.servers.code_index import query_words, words
from proctor.scenarios.demo.servers.launch import parse_options, serve

# doc id -> (title, text)
DOCS: dict[str, tuple[str, str]] = {
    "oncall-101": (
        "On-call basics",
        "Acknowledge a page within 5 minutes. If the pager retries, it backs off to every 15 minutes "
        "after the third attempt. Escalate to the secondary after 30 minutes without progress.",
    ),
    "api-guidelines": (
        "Public API guidelines",
        "Clients must retry 429 and 503 responses with exponential backoff starting at 1 second and "
        "capped at 60 seconds. Every endpoint documents its rate limit in requests per minute.",
    ),
    "config-standards": (
        "Service configuration standards",
        "Services read a config file and then environment variables with the service's prefix; "
        "environment wins. Defaults live in code and are listed in the service README.",
    ),
    "release-process": (
        "Release process",
        "Releases are cut on Tuesdays. A release needs a green build, a changelog entry and one "
        "approval from the owning team. Hotfixes may skip the Tuesday train.",
    ),
    "code-review": (
        "Code review checklist",
        "Reviewers check tests, naming, error handling and docs. A change over 400 lines should be "
        "split. Cite file and line when asking for a change.",
    ),
    "queues": (
        "Background jobs",
        "Use the shared job platform for background work. Jobs must be idempotent; the platform "
        "retries a failed job up to 8 times and then parks it in the dead-letter queue for review.",
    ),
}

DESCRIPTION = (
    "The company engineering handbook: policies and guidelines on on-call, APIs, configuration, "
    "releases, code review and background jobs."
)

_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def search_docs(query: Annotated[str, Field(description="words to look for in handbook pages")]) -> str:
    wanted = set(query_words(query))
    scored = []
    for doc_id, (title, text) in DOCS.items():
        overlap = len(wanted & set(words(f"{title} {text}")))
        if overlap:
            scored.append((overlap, doc_id, title, text))
    scored.sort(key=lambda row: (-row[0], row[1]))
    if not scored:
        return f"no handbook pages match {query!r}"
    return "\n".join(f"{doc_id}: {title} - {text[:90]}..." for _, doc_id, title, text in scored[:5])


def read_doc(doc_id: Annotated[str, Field(description="page id from search_docs, e.g. 'oncall-101'")]) -> str:
    page = DOCS.get(doc_id.strip())
    if page is None:
        raise ToolError(f"no handbook page {doc_id!r}; known: {', '.join(sorted(DOCS))}")
    return f"# {page[0]}\n\n{page[1]}"


def build_server() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(name="handbook", description=DESCRIPTION, log_level="WARNING")
    server.add_tool(
        search_docs,
        description="Search the engineering handbook's pages by keywords; returns 'id: title - excerpt' "
        "per matching page, best first.",
        annotations=_READ_ONLY,
        structured_output=False,
    )
    server.add_tool(
        read_doc,
        description="Read one engineering handbook page in full by its id.",
        annotations=_READ_ONLY,
        structured_output=False,
    )
    return server


def main(argv: Sequence[str] | None = None) -> None:
    serve(
        build_server(),
        parse_options(argv, "Engineering handbook MCP server (canned data).", needs_repo=False),
    )


if __name__ == "__main__":
    main()
