"""mcp-server-git (PyPI) answers its suite's gold calls as observed, through proctor's
connection, on the pinned project materialized as a git repository.

Observed with ``python -m tests.integration.third_party.observe git`` (mcp-server-git
2026.10.19 on mcp 2.3.0, tests/reference_servers/requirements-git.txt), 2026-11-27. The server
runs in the checkout (``cwd``), so the gold calls' ``repo_path: .`` is the checkout on every
machine. This suite found that a materialized repository's HEAD named an unborn branch
(``git_log``: "Reference at 'refs/heads/master' does not exist"); fixed in scenarios/repo.py.
"""

from __future__ import annotations

import pytest

from tests.integration.third_party.servers import PROJECT, Expect, Played, assert_scenario, played_suite

pytestmark = pytest.mark.slow

COMMIT = "9f53a94587d8cc9bce6f5304e919a7720384167f"  # the suite's repo.commit
EXPECTED = {
    "status-and-log": [
        Expect(
            "git_status",
            "Repository status:\nOn branch proctor-pinned\nnothing to commit, working tree clean",
        ),
        Expect(
            "git_log",
            f"Commit history:\nCommit: {COMMIT}\nAuthor: proctor\nDate: 2026-01-01 00:00:00+00:00\n"
            "Message: proctor pinned snapshot\n\n",
        ),
    ],
    "show-at-head": [
        Expect("git_show", "prices.csv\nstock.py"),
        Expect("git_show", (PROJECT / "inventory" / "stock.py").read_text()),
    ],
    "outside-the-repository": [
        Expect(
            "git_status",
            "Error executing tool git_status: Repository path '..' is outside the allowed repository '{REPO}'",
            is_error=True,
        )
    ],
}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return played_suite("git", tmp_path_factory)


def test_git_server_introduces_itself_and_lists_its_tools(played: Played) -> None:
    server = played.connected["git"]
    assert (server.name, server.version, server.protocol_version) == ("mcp-git", "2026.10.19", "2026-07-28")
    assert played.tools == {
        "git": [
            "git_add",
            "git_branch",
            "git_checkout",
            "git_commit",
            "git_create_branch",
            "git_diff",
            "git_diff_staged",
            "git_diff_unstaged",
            "git_log",
            "git_reset",
            "git_show",
            "git_status",
        ]
    }


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_git_gold_calls_answer_as_observed(played: Played, scenario: str) -> None:
    assert_scenario(played, scenario, EXPECTED)
