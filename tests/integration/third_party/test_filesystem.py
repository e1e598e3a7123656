"""@modelcontextprotocol/server-filesystem (npm) answers its suite's gold calls as observed,
through proctor's connection, on the pinned project (tests/integration/third_party/project).

Observed with ``python -m tests.integration.third_party.observe filesystem``
(server-filesystem 2026.8.31, tests/reference_servers/package-lock.json), 2026-11-27. The
server resolves relative paths against its first allowed directory (the checkout), so the gold
calls need no absolute path; ``{REPO}`` is the checkout's path where the server prints it.
"""

from __future__ import annotations

import pytest

from tests.integration.third_party.servers import PROJECT, Expect, Played, assert_scenario, played_suite

pytestmark = pytest.mark.slow


def _text(tool: str, text: str) -> Expect:
    """This server sends each text result twice: a text block and ``{"content": text}``."""
    return Expect(tool, text, structured={"content": text})


STOCK = (PROJECT / "inventory" / "stock.py").read_text()
EXPECTED = {
    "reorder-level": [_text("read_text_file", STOCK)],
    "price-list": [
        _text("search_files", "{REPO}/inventory/prices.csv"),
        _text("read_text_file", "sku,name,price\nA-100,bolt,0.25"),
    ],
    "notes-and-inventory": [
        _text("list_directory", "[FILE] prices.csv\n[FILE] stock.py"),
        _text(
            "read_multiple_files",
            "notes/todo.txt:\ncount the washers\ncall the supplier about bolts\n\n\n---\nREADME.md:\n"
            "# Warehouse\n\nA tiny project the third-party MCP servers (filesystem, git) are pointed at "
            "in proctor's tests.\n\n",
        ),
    ],
    "outside-the-root": [
        Expect(
            "read_text_file",
            "Access denied - path outside allowed directories: /etc/passwd not in {REPO}",
            is_error=True,
        )
    ],
}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return played_suite("filesystem", tmp_path_factory)


def test_filesystem_server_introduces_itself_and_lists_its_tools(played: Played) -> None:
    server = played.connected["filesystem"]
    assert (server.name, server.version, server.protocol_version) == (
        "secure-filesystem-server",
        "0.2.0",
        "2025-11-25",
    )
    assert played.tools == {
        "filesystem": [
            "create_directory",
            "directory_tree",
            "edit_file",
            "get_file_info",
            "list_allowed_directories",
            "list_directory",
            "list_directory_with_sizes",
            "move_file",
            "read_file",
            "read_media_file",
            "read_multiple_files",
            "read_text_file",
            "search_files",
            "write_file",
        ]
    }


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_filesystem_gold_calls_answer_as_observed(played: Played, scenario: str) -> None:
    assert_scenario(played, scenario, EXPECTED)
