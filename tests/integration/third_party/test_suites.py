"""The third-party suites and the README's list of servers agree with what is pinned."""

from __future__ import annotations

import re

from proctor.scenarios.loader import load_suite
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
