"""``proctor replay`` against real servers: record a run, change what the server sees, replay, diff.

The recording is a real ``proctor run`` with ``offline:gold``, which plays the scenario's gold calls
(a step's calls in one turn, in parallel) with no model, and the real servers answer them (``@modelcontextprotocol/server-filesystem`` from
npm and ``mcp-server-git`` from PyPI, pinned in ``tests/reference_servers``; ``make test``
installs them). Then the files or the repository change, the run is replayed through the CLI
with no model, and each call's drift class is checked: identical, changed, new error, fixed
error, and identical again once the suite's ``replay.ignore`` masks the volatile fields.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import xml.etree.ElementTree as ET
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import yaml

from proctor.app.cli import main
from proctor.store.read.reader import StoreReader

pytestmark = pytest.mark.slow

REFERENCE = Path(__file__).resolve().parents[1] / "reference_servers"
FILESYSTEM = REFERENCE / "node_modules" / ".bin" / "mcp-server-filesystem"
GIT_SERVER = REFERENCE / ".venv-git" / "bin" / "mcp-server-git"


@pytest.fixture(autouse=True)
def _servers_installed() -> None:
    missing = [p for p in (FILESYSTEM, GIT_SERVER) if not p.exists()]
    if missing:
        pytest.fail(f"reference servers not installed ({', '.join(map(str, missing))}); run `make test`")


def proctor(*args: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


Call = tuple[str, dict[str, Any]]


def _suite(
    root: Path,
    servers: dict[str, Any],
    extra: dict[str, Any] | None = None,
    steps: list[list[Call]] | None = None,
) -> Path:
    """One scenario whose gold calls are ``steps`` (a step's calls are requested together)."""
    (root / "scenarios").mkdir(parents=True)
    [server] = list(servers)
    suite = {
        "name": "replayed",
        "mcpServers": servers,
        "arms": {"mcp": {"servers": [server]}},
        "models": ["offline:gold"],
        "concurrency": {"global": 1},
    } | (extra or {})
    scenario: dict[str, Any] = {"id": "one", "prompt": "Look around."}
    if steps:
        scenario["gold_tool_calls"] = [
            [{"tool": tool, "arguments": args, "server": server} for tool, args in step] for step in steps
        ]
    (root / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    (root / "scenarios" / "one.yaml").write_text(yaml.safe_dump(scenario, sort_keys=False))
    return root


def _record(tmp: Path, servers: dict[str, Any], steps: list[list[Call]]) -> Path:
    """A real run: offline:gold asks for the calls, the real servers answer."""
    suite = _suite(tmp / "suite", servers, steps=steps)
    db = tmp / "recorded.db"
    code, out, err = proctor("run", suite, "--headless", "--db", db)
    assert code == 0, out + err
    return db


def _drift(db: Path) -> dict[str, Any]:
    code, out, err = proctor("report", db, "--format", "json")
    assert code == 0, err
    section: dict[str, Any] = json.loads(out)["drift"]
    return section


def _statuses(drift: dict[str, Any]) -> dict[str, str]:
    return {c["call_id"]: c["status"] for c in drift["calls"]}


def test_replay_classifies_each_filesystem_call_after_the_files_changed(tmp_path: Path) -> None:
    files = tmp_path / "files"
    files.mkdir()
    (files / "same.txt").write_text("unchanged\n")
    (files / "a.txt").write_text("alpha\n")
    (files / "b.txt").write_text("bravo\n")
    servers = {"fs": {"command": str(FILESYSTEM), "args": [str(files)]}}
    read = "read_text_file"
    db = _record(
        tmp_path,
        servers,
        [
            [(read, {"path": str(files / "same.txt")}), (read, {"path": str(files / "a.txt")})],  # parallel
            [(read, {"path": str(files / "b.txt")})],
            [(read, {"path": str(files / "c.txt")})],  # no such file yet: an error in the recording
            [("get_file_info", {"path": str(files / "same.txt")})],
        ],
    )
    (files / "a.txt").write_text("alpha, second edition\n")
    (files / "b.txt").unlink()
    (files / "c.txt").write_text("charlie\n")
    stat = (files / "same.txt").stat()
    os.utime(files / "same.txt", (stat.st_atime + 3600, stat.st_mtime + 3600))  # only its times change

    new = tmp_path / "replayed.db"
    code, out, err = proctor("replay", db, "--db", new)
    assert code == 0, out + err
    # The replay records the server's whole tool definitions (output schemas, annotations), so a
    # tool lock or surface diff sees the same surface as the recording's, not a false change.
    code, out, err = proctor("tools", "diff", db, new)
    assert code == 0 and "tool surfaces are the same" in out, out + err
    drift = _drift(new)
    assert _statuses(drift) == {
        "gold_1": "identical",
        "gold_2": "changed",
        "gold_3": "new_error",
        "gold_4": "fixed_error",
        "gold_5": "changed",
    }
    changed = {c["call_id"]: c for c in drift["calls"]}
    assert {
        "path": "structuredContent.content",
        "op": "~",
        "old": '"alpha\\n"',
        "new": '"alpha, second edition\\n"',
    } in changed["gold_2"]["changes"]
    assert "ENOENT" in changed["gold_3"]["notes"][0]
    assert any(line.startswith("-modified: ") for line in changed["gold_5"]["text_diff"]), changed["gold_5"]
    assert drift["servers"] == [
        {
            "server": "fs",
            "calls": 5,
            "identical": 1,
            "changed": 2,
            "new_error": 1,
            "fixed_error": 1,
            "missing": 0,
            "skipped": 0,
        }
    ]
    assert drift["drifted"] == 3

    # The replay is a run of its own: its trial holds the calls as recorded, the parallel step's
    # two calls requested before either result, and it points back to the recording.
    with StoreReader(new) as reader:
        run = reader.run()
        assert run is not None and run.config["replay"]["source_db"] == str(db.resolve())
        [trial] = reader.trials()
        kinds = [(e.kind, getattr(e.event, "call_id", "")) for e in reader.trial_events(trial.id)]
    tool_events = [k for k in kinds if k[0] in ("tool_call", "tool_result")]
    assert tool_events[:2] == [("tool_call", "gold_1"), ("tool_call", "gold_2")]
    assert trial.status == "finished" and trial.tool_calls == 5

    assert proctor("gate", new, "--max-changed", "2")[0] == 3
    junit = tmp_path / "gate.xml"
    code, out, _ = proctor("gate", new, "--max-changed", "3", "--junit", junit)
    assert code == 0 and "3 call(s) drifted" in out
    root = ET.parse(junit).getroot()
    cases = root.findall(".//testsuite[@name='replayed / drift / fs']/testcase")
    assert len(cases) == 5
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert [n.split(" #")[1] for n in failed if n] == [
        "2 fs.read_text_file",
        "3 fs.read_text_file",
        "5 fs.get_file_info",
    ]

    # The suite masks the file's times: get_file_info is identical again; the rest is unchanged.
    masked_suite = _suite(
        tmp_path / "masked",
        servers,
        {
            "replay": {
                "ignore": [
                    {
                        "server": "fs",
                        "tool": "get_file_info",
                        "patterns": ["(created|modified|accessed): [^\\n]*"],
                    }
                ]
            }
        },
    )
    masked = tmp_path / "masked.db"
    code, out, err = proctor("replay", db, "--suite", masked_suite, "--db", masked)
    assert code == 0, out + err
    assert _statuses(_drift(masked))["gold_5"] == "identical"
    assert proctor("gate", masked, "--max-changed", "2")[0] == 0

    code, out, _ = proctor("report", new, "--format", "md")
    assert (
        code == 0
        and "## Drift (replay against the recording)" in out
        and "| fs | 5 | 1 | 2 | 1 | 1 | 0 | 0 |" in out
    )


def _git(repo: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        env=os.environ | env,
        timeout=30,
    )
    return done.stdout.strip()


def test_replay_against_a_new_git_commit_sees_only_the_log_change(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "f.txt").write_text("one\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "first")
    first = _git(repo, "rev-parse", "HEAD")
    servers = {"git": {"command": str(GIT_SERVER), "args": ["--repository", str(repo)]}}
    where = {"repo_path": str(repo)}
    db = _record(
        tmp_path,
        servers,
        [
            [("git_log", where | {"max_count": 1})],
            [("git_show", where | {"revision": first})],
            [("git_status", where)],
            [("git_show", where | {"revision": "no-such-rev"})],
        ],
    )
    (repo / "f.txt").write_text("two\n")
    _git(repo, "commit", "-qam", "second")

    new = tmp_path / "replayed.db"
    code, out, err = proctor("replay", db, "--db", new)
    assert code == 0, out + err
    drift = _drift(new)
    assert _statuses(drift) == {
        "gold_1": "changed",  # a new head: another hash, date and message
        "gold_2": "identical",  # the first commit itself did not change
        "gold_3": "identical",  # a clean tree then and now
        "gold_4": "identical",  # the same error both times
    }
    log = drift["calls"][0]["text_diff"]
    assert "-Message: first" in log and "+Message: second" in log

    # Masking the hash and the date leaves the message as the one thing that changed.
    masked_suite = _suite(
        tmp_path / "masked",
        servers,
        {
            "replay": {
                "ignore": [{"server": "git", "tool": "git_*", "patterns": ["[0-9a-f]{40}", "Date: [^\\n]*"]}]
            }
        },
    )
    masked = tmp_path / "masked.db"
    assert proctor("replay", db, "--suite", masked_suite, "--db", masked)[0] == 0
    diff = _drift(masked)["calls"][0]["text_diff"]
    assert [line for line in diff if line[:1] in "+-"] == ["-Message: first", "+Message: second"]
