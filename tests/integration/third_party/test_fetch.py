"""mcp-server-fetch (PyPI) without the internet: every fetch fails, and proctor records the
failure as the tool's error (``is_error``, ``tool_error``), not as a crash or a timeout.

Observed with ``python -m tests.integration.third_party.observe fetch`` (mcp-server-fetch
2026.10.24 on mcp 2.3.0, tests/reference_servers/requirements-official.txt), 2026-11-27. The
URLs are ones that fail on any machine: ``.invalid`` never resolves (RFC 2606), and the server
refuses loopback addresses unless started with ``--allow-private-ips``. Started so, against a
page served on 127.0.0.1 by this test, it shows its success path (markdown, truncation, a 404).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from proctor.engine.tools.mcp_connection import McpConnection
from proctor.engine.tools.toolbox import ToolCallOutcome
from proctor.scenarios.loader import load_suite
from proctor.scenarios.schema import StdioServer
from proctor.scenarios.workspace import Workspace
from tests.integration.third_party.servers import (
    REFERENCE,
    SUITES,
    VENVS,
    Expect,
    Played,
    assert_scenario,
    played_suite,
    require_installed,
)

pytestmark = pytest.mark.slow

PYDANTIC = "    For further information visit https://errors.pydantic.dev/2.14/v/"
EXPECTED = {
    "offline": [
        Expect(
            "fetch",
            "Error executing tool fetch: Failed to fetch robots.txt https://warehouse.invalid/robots.txt "
            "due to a connection issue",
            is_error=True,
        )
    ],
    "private-address": [
        Expect(
            "fetch",
            "Error executing tool fetch: Refused to fetch http://127.0.0.1:9/robots.txt: 127.0.0.1 resolves to "
            "127.0.0.1, which is not a public address. Start the server with --allow-private-ips to allow "
            "private, loopback and link-local addresses.",
            is_error=True,
        )
    ],
    "bad-arguments": [
        Expect(
            "fetch",
            "Error executing tool fetch: 1 validation error for fetchArguments\nmax_length\n"
            "  Input should be greater than or equal to 1 [type=greater_than_equal, input_value=0, "
            f"input_type=int]\n{PYDANTIC}greater_than_equal",
            is_error=True,
        ),
        Expect(
            "fetch",
            "Error executing tool fetch: 1 validation error for fetchArguments\nurl\n"
            "  Input should be a valid URL, relative URL without a base [type=url_parsing, "
            f"input_value='not a url', input_type=str]\n{PYDANTIC}url_parsing",
            is_error=True,
        ),
    ],
}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return played_suite("fetch", tmp_path_factory)


def test_fetch_server_introduces_itself_and_lists_one_tool(played: Played) -> None:
    server = played.connected["fetch"]
    assert (server.name, server.version, server.protocol_version) == ("mcp-fetch", "2026.10.24", "2026-07-28")
    assert played.tools == {"fetch": ["fetch"]}


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_fetch_gold_calls_answer_as_observed(played: Played, scenario: str) -> None:
    assert_scenario(played, scenario, EXPECTED)


def test_an_offline_fetch_is_a_tool_error_and_the_server_lives_on(played: Played) -> None:
    outcomes = [c.outcome for calls in played.calls.values() for c in calls]
    assert {(o.is_error, o.error_type) for o in outcomes} == {(True, "tool_error")}
    assert all(o.latency_s < 10 for o in outcomes)  # failed at once, not after a timeout


# -- the success path: a page served on 127.0.0.1, the server told to allow it ----------------------

PAGE = """<!doctype html>
<html><head><title>Warehouse stock</title></head>
<body><article><h1>Warehouse stock</h1>
<p>We reorder a part when fewer than <strong>12</strong> are left.</p>
<ul><li>bolts: 40</li><li>nuts: 9</li></ul>
</article></body></html>
"""


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def pages(tmp_path: Path) -> Iterator[str]:
    """A local web site with one page, stock.html: its base URL."""
    (tmp_path / "stock.html").write_text(PAGE)
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(tmp_path)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


async def _fetch_all(config: StdioServer, logs: Path, calls: list[dict[str, Any]]) -> list[ToolCallOutcome]:
    connection = McpConnection("fetch", config, logs)
    await connection.start()
    try:
        return [await connection.call("fetch", arguments, 20) for arguments in calls]
    finally:
        await connection.aclose()


def test_with_private_addresses_allowed_a_local_page_comes_back_as_markdown(
    pages: str, tmp_path: Path
) -> None:
    # Observed 2026-11-27 as above, with the server started with --allow-private-ips --ignore-robots-txt.
    require_installed("fetch")
    (config,) = Workspace.prepare(load_suite(SUITES / "fetch")).servers_for(["fetch"], None).values()
    assert isinstance(config, StdioServer)
    allowed = config.model_copy(update={"args": ["--allow-private-ips", "--ignore-robots-txt"]})
    locks = list(
        (REFERENCE / VENVS["official"]).glob(
            "lib/python*/site-packages/readabilipy/javascript/package-lock.json"
        )
    )
    pinned = (REFERENCE / "readabilipy-package-lock.json").read_text()
    assert [lock.read_text() for lock in locks] == [pinned], "make test installs readabilipy's node packages"
    page, cut, gone = asyncio.run(
        _fetch_all(
            allowed,
            tmp_path / "logs",
            [
                {"url": f"{pages}/stock.html"},
                {"url": f"{pages}/stock.html", "raw": True, "max_length": 60},
                {"url": f"{pages}/gone.html"},
            ],
        )
    )
    # Readability keeps the article's body: the page's <h1> is not in the markdown.
    assert (page.content, page.is_error) == (
        f"Contents of {pages}/stock.html:\nWe reorder a part when fewer than **12** are left.\n\n* bolts: 40\n* nuts: 9",
        False,
    )
    # Raw, the page is not converted (node's Readability is what makes a conversion cost seconds).
    assert cut.content == (
        "Content type text/html cannot be simplified to markdown, but here is the raw content:\n"
        f"Contents of {pages}/stock.html:\n<!doctype html>\n<html><head><title>Warehouse stock</title></\n\n"
        "<error>Content truncated. Call the fetch tool with a start_index of 60 to get more content.</error>"
    )
    assert [lock.read_text() for lock in locks] == [pinned]  # no `npm install` of its own while converting
    assert (gone.content, gone.is_error, gone.error_type) == (
        f"Error executing tool fetch: Failed to fetch {pages}/gone.html - status code 404",
        True,
        "tool_error",
    )
