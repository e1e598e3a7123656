"""Drift on third-party servers, end to end: an ``offline:gold`` run of a suite is replayed
(``proctor replay``) against a changed copy of its server (``changed_copy``), and the report's
drift section says, call by call, what changed.

- mcp-server-git on another commit of the pinned project: the log and the edited file change, the
  status and the folder listing do not, and the refusal names the other checkout.
- mcp-server-time with a patched tool description: every result is identical (the clock masked
  by the suite's ``replay.ignore``): a changed description is invisible to a replay, which is
  why tool surfaces are locked separately.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from proctor.app.cli import main
from tests.integration.third_party.changed_copy import changed_project, changed_suite, patched_description
from tests.integration.third_party.gold_runs import Recording, proctor
from tests.integration.third_party.servers import PROJECT
from tests.integration.third_party.test_changed_copy import TIME_OLD

pytestmark = pytest.mark.slow


def _replay_missing() -> bool:
    """Whether this proctor has no ``replay`` command yet (argparse refuses the choice: exit 2)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            main(["replay", "--help"])
    except SystemExit as exc:
        return exc.code != 0
    return False


@pytest.fixture(autouse=True)
def _replay_command() -> None:
    if _replay_missing():
        pytest.skip("`proctor replay` is not in this proctor yet")


def _replay(recording: Recording, suite: Path, new: Recording) -> dict[str, Any]:
    """``proctor replay`` of ``recording`` against ``suite`` into ``new``: the report's drift section."""
    code, output = proctor("replay", recording.db, "--suite", suite, "--db", new.db, cache=new.cache)
    assert code == 0, output
    code, output = proctor("report", new.db, "--format", "json")
    assert code == 0, output
    drift: dict[str, Any] = json.loads(output)["drift"]
    return drift


def _arguments(call: dict[str, Any]) -> dict[str, Any]:
    """A call's arguments (the report gives them as JSON text)."""
    arguments = call["arguments"]
    parsed: dict[str, Any] = json.loads(arguments) if isinstance(arguments, str) else arguments
    return parsed


def _statuses(drift: dict[str, Any]) -> dict[tuple[str, str], str]:
    """(scenario, tool and arguments) -> the call's drift status."""
    return {
        (call["scenario"], f"{call['tool']} {json.dumps(_arguments(call), sort_keys=True)}"): call["status"]
        for call in drift["calls"]
    }


def test_git_on_another_commit_drifts_where_the_commit_shows(
    recordings: Callable[[str], Recording], tmp_path: Path
) -> None:
    stock = (
        (PROJECT / "inventory" / "stock.py").read_text().replace("REORDER_LEVEL = 12", "REORDER_LEVEL = 20")
    )
    repo = changed_project(tmp_path / "project", {"inventory/stock.py": stock})
    changed = changed_suite("git", tmp_path / "v2", repo=repo)
    drift = _replay(recordings("git"), changed, Recording(tmp_path / "v2.db", tmp_path / "cache"))
    assert _statuses(drift) == {
        ("status-and-log", 'git_status {"repo_path": "."}'): "identical",
        ("status-and-log", 'git_log {"max_count": 5, "repo_path": "."}'): "changed",
        ("show-at-head", 'git_show {"repo_path": ".", "revision": "HEAD:inventory"}'): "identical",
        ("show-at-head", 'git_show {"repo_path": ".", "revision": "HEAD:inventory/stock.py"}'): "changed",
        ("outside-the-repository", 'git_status {"repo_path": ".."}'): "changed",  # its path names the commit
    }
    shown = next(c for c in drift["calls"] if _arguments(c).get("revision") == "HEAD:inventory/stock.py")
    assert "-REORDER_LEVEL = 12" in shown["text_diff"] and "+REORDER_LEVEL = 20" in shown["text_diff"]


def test_a_patched_description_leaves_every_replayed_result_identical(
    recordings: Callable[[str], Recording], tmp_path: Path
) -> None:
    clock = {
        "server": "time",
        "tool": "get_current_time",
        "paths": ["$.datetime"],
        "patterns": [r"T\d\d:\d\d:\d\d"],
    }
    copy = patched_description(
        "time",
        tmp_path / "v2",
        TIME_OLD,
        'description="Convert a time between two time zones"',
        settings={"replay": {"ignore": [clock]}},
    )
    drift = _replay(recordings("time"), copy, Recording(tmp_path / "v2.db", tmp_path / "cache"))
    assert set(_statuses(drift).values()) == {"identical"}, drift["calls"]
    assert [s["server"] for s in drift["servers"]] == ["time"] and drift["drifted"] == 0
