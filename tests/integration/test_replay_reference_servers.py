"""``proctor replay`` against real servers: record a run, change what the server sees, replay, diff.

The recording is a real ``proctor run``: a scripted OpenAI-compatible model (a local fake) asks
for the calls, and the real servers answer them (``@modelcontextprotocol/server-filesystem`` from
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
from tests.fakes import fake_openai as fo
from tests.fakes.http_fake import SseReply

pytestmark = pytest.mark.slow

REFERENCE = Path(__file__).resolve().parents[1] / "reference_servers"
FILESYSTEM = REFERENCE / "node_modules" / ".bin" / "mcp-server-filesystem"
GIT_SERVER = REFERENCE / ".venv-git" / "bin" / "mcp-server-git"
KEY_VAR = "PROCTOR_REPLAY_TEST_KEY"


@pytest.fixture(autouse=True)
def _servers_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    missing = [p for p in (FILESYSTEM, GIT_SERVER) if not p.exists()]
    if missing:
        pytest.fail(f"reference servers not installed ({', '.join(map(str, missing))}); run `make test`")
    monkeypatch.setenv(KEY_VAR, "sk-test-not-a-real-key")


def proctor(*args: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


Call = tuple[str, dict[str, Any]]


def _script(*steps: list[Call]) -> list[SseReply]:
    """One model turn per step (its calls requested together), then an answer."""
    replies = []
    n = 0
    for step in steps:
        pieces = []
        for k, (tool, args) in enumerate(step):
            pieces.append(fo.CallPiece(k, json.dumps(args), call_id=f"call_{n}", name=tool))
            n += 1
        replies.append(fo.completion_reply(calls=pieces))
    return [*replies, fo.completion_reply(text=["Done."])]


def _suite(root: Path, servers: dict[str, Any], extra: dict[str, Any] | None = None) -> Path:
    (root / "scenarios").mkdir(parents=True)
    suite = {
        "name": "replayed",
        "mcpServers": servers,
        "arms": {"mcp": {"servers": list(servers)}},
        "models": ["openai:gpt-fake"],
        "concurrency": {"global": 1},
    } | (extra or {})
    (root / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    (root / "scenarios" / "one.yaml").write_text(yaml.safe_dump({"id": "one", "prompt": "Look around."}))
    return root


def _record(tmp: Path, servers: dict[str, Any], steps: list[list[Call]]) -> Path:
    """A real run: the scripted model asks, the real servers answer."""
    script = _script(*steps)
    with fo.FakeOpenAI() as model:
        model.enqueue(*script)
        providers = {"providers": {"openai": {"base_url": model.openai_base_url, "api_key_env": KEY_VAR}}}
        suite = _suite(tmp / "suite", servers, providers)
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
    drift = _drift(new)
    assert _statuses(drift) == {
        "call_0": "identical",
        "call_1": "changed",
        "call_2": "new_error",
        "call_3": "fixed_error",
        "call_4": "changed",
    }
    changed = {c["call_id"]: c for c in drift["calls"]}
    assert {
        "path": "structuredContent.content",
        "op": "~",
        "old": '"alpha\\n"',
        "new": '"alpha, second edition\\n"',
    } in changed["call_1"]["changes"]
    assert "ENOENT" in changed["call_2"]["notes"][0]
    assert any(line.startswith("-modified: ") for line in changed["call_4"]["text_diff"]), changed["call_4"]
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
    assert tool_events[:2] == [("tool_call", "call_0"), ("tool_call", "call_1")]
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
    assert _statuses(_drift(masked))["call_4"] == "identical"
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
        "call_0": "changed",  # a new head: another hash, date and message
        "call_1": "identical",  # the first commit itself did not change
        "call_2": "identical",  # a clean tree then and now
        "call_3": "identical",  # the same error both times
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
