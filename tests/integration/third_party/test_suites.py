"""The third-party suites and the README's list of servers agree with what is pinned."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from proctor.scenarios.loader import load_suite
from tests.integration.third_party import servers
from tests.integration.third_party.servers import HERE, SERVERS, SUITES, pinned_version

README = HERE.parents[2] / "README.md"


def test_every_third_party_server_has_a_suite_of_two_to_four_scenarios_with_gold_calls() -> None:
    assert sorted(p.name for p in SUITES.iterdir() if p.is_dir()) == sorted(SERVERS)
    for suite in SERVERS:
        loaded = load_suite(SUITES / suite)
        assert 2 <= len(loaded.scenarios) <= 4, suite
        assert all(sc.gold_tool_calls for sc in loaded.scenarios), suite
        assert loaded.suite.models == ["offline:gold"], suite


def test_the_readme_lists_every_third_party_server_at_its_pinned_version() -> None:
    section = README.read_text().split("### Third-party servers the tests run against", 1)[1]
    rows = re.findall(r"^\| `([^`]+)` \| (?:npm|PyPI) \| ([^ |]+) \|", section, re.MULTILINE)
    assert dict(rows) == {package: pinned_version(suite) for suite, (_, package) in SERVERS.items()}


def test_a_server_make_test_has_not_installed_is_skipped_naming_the_stamp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(servers.STAMPS, "mcp1", tmp_path / ".installed-stamp")
    with pytest.raises(
        pytest.skip.Exception,
        match=r"mcp-server-sqlite is not installed \(.*/\.installed-stamp missing\): `make test` installs",
    ):
        servers.require_installed("sqlite")


def test_a_server_installed_at_another_version_than_the_pin_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    if not servers.STAMPS["official"].exists():
        pytest.skip("mcp-server-time is not installed: `make test` installs it")
    monkeypatch.setattr(servers, "pinned_version", lambda suite: "1999.1.1")
    with pytest.raises(pytest.fail.Exception, match=r"mcp-server-time is 2026\.10\.19, pinned 1999\.1\.1"):
        servers.require_installed("time")
