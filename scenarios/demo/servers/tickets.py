"""Distractor server: a canned customer-support ticket tracker.

Some tickets talk about retries, timeouts and rate limits, so a tool picked by word overlap
looks relevant to a code question and returns plausible but useless text. This server is the
suite's streamable-HTTP server (``--transport streamable-http --port N``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from proctor.scenarios.demo.servers.code_index import query_words, words
from proctor.scenarios.demo.servers.launch import parse_options, serve


@dataclass(frozen=True)
class Ticket:
    id: str
    title: str
    status: Literal["open", "pending", "closed"]
    customer: str
    body: str


TICKETS = [
    Ticket(
        "SUP-1042",
        "Export to CSV times out for large reports",
        "open",
        "Northwind",
        "Exports over 50k rows hit the 30 second gateway timeout. Customer asks for an async export.",
    ),
    Ticket(
        "SUP-1043",
        "Password reset email never arrives",
        "closed",
        "Contoso",
        "Mail provider rejected messages from the new sending domain; SPF record fixed.",
    ),
    Ticket(
        "SUP-1051",
        "Webhook deliveries retried too aggressively",
        "pending",
        "Globex",
        "Customer endpoint was down for an hour and received a burst of retries when it came back. "
        "They would like a longer wait between webhook retry attempts.",
    ),
    Ticket(
        "SUP-1057",
        "API returns 429 during nightly sync",
        "open",
        "Initech",
        "The nightly sync exceeds the rate limit of 100 requests per minute on the public API.",
    ),
    Ticket(
        "SUP-1060",
        "Invoice PDF shows wrong currency",
        "closed",
        "Umbrella",
        "Locale fallback picked USD for a EUR account; fixed in billing 4.2.",
    ),
    Ticket(
        "SUP-1064",
        "Scheduled reports sent twice",
        "open",
        "Hooli",
        "Two report workers picked up the same scheduled job after a failover.",
    ),
    Ticket(
        "SUP-1071",
        "SSO login loop in Safari",
        "pending",
        "Stark Industries",
        "Third-party cookie blocking breaks the IdP redirect; workaround: same-site cookie setting.",
    ),
    Ticket(
        "SUP-1075",
        "Dashboard widgets load slowly",
        "open",
        "Wayne Enterprises",
        "The activity widget queries 90 days of events on every page load.",
    ),
]

DESCRIPTION = (
    "Customer support ticket tracker: search support tickets by keywords and status, and read a "
    "ticket's full description."
)

_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def search_tickets(
    query: Annotated[str, Field(description="words to look for in ticket titles and descriptions")],
    status: Annotated[
        Literal["any", "open", "pending", "closed"], Field(description="only tickets with this status")
    ] = "any",
) -> str:
    wanted = set(query_words(query))
    scored = []
    for t in TICKETS:
        if status != "any" and t.status != status:
            continue
        overlap = len(wanted & set(words(f"{t.title} {t.body}")))
        if overlap:
            scored.append((overlap, t))
    scored.sort(key=lambda pair: (-pair[0], pair[1].id))
    if not scored:
        return f"no tickets match {query!r}"
    return "\n".join(f"{t.id} [{t.status}] {t.title} ({t.customer})" for _, t in scored[:10])


def get_ticket(ticket_id: Annotated[str, Field(description="ticket id such as 'SUP-1042'")]) -> str:
    for t in TICKETS:
        if t.id == ticket_id.strip().upper():
            return f"{t.id}: {t.title}\nstatus: {t.status}\ncustomer: {t.customer}\n\n{t.body}"
    raise ToolError(f"no ticket {ticket_id!r}; ids look like SUP-1042 (use search_tickets)")


def build_server() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer(name="tickets", description=DESCRIPTION, log_level="WARNING")
    server.add_tool(
        search_tickets,
        description="Search customer support tickets by keywords in their title and description, "
        "optionally filtered by status. Returns 'ID [status] title (customer)' per ticket.",
        annotations=_READ_ONLY,
        structured_output=False,
    )
    server.add_tool(
        get_ticket,
        name="get_ticket",
        description="Read one support ticket by id: title, status, customer and full description.",
        annotations=_READ_ONLY,
        structured_output=False,
    )
    return server


def main(argv: Sequence[str] | None = None) -> None:
    serve(build_server(), parse_options(argv, "Support ticket MCP server (canned data).", needs_repo=False))


if __name__ == "__main__":
    main()
