"""Why trials errored is said where users look: the headless summary, the report, the gate.

Each cause comes from a real failure: a server command with a typo (the supervisor's own
"No such file or directory"), the real ``openai`` SDK against a closed port on 127.0.0.1, and a
run of an Anthropic model with no key in the environment.
"""

from __future__ import annotations

import asyncio
import io
import json
import random
import socket
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import httpx2
import pytest
import yaml

from proctor.app.cli import main
from proctor.engine.providers.base import ProviderError, UserMessage
from proctor.engine.providers.openai_provider import OpenAIProvider
from proctor.engine.providers.prices import PriceTable
from proctor.engine.providers.retry import Backoff
from proctor.engine.reports.error_causes import MAX_CAUSE_CHARS, cause_of, group_errors
from proctor.store.events import RunFinished, RunStarted
from proctor.store.write.writer import StoreWriter, TrialRow

TYPO = Path(sys.executable).with_name("pythn3-misspelled")
DIES_WITH = "weather: the forecast key is missing"  # what the server prints before it exits


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def _suite(
    root: Path,
    models: list[str],
    command: str = sys.executable,
    args: tuple[str, ...] = ("-m", "proctor.scenarios.demo.servers.weather"),
) -> Path:
    (root / "scenarios").mkdir(parents=True)
    suite = {
        "name": "errors",
        "mcpServers": {"weather": {"command": command, "args": list(args)}},
        "arms": {"baseline": {"baseline": True}, "weather": {"servers": ["weather"]}},
        "models": models,
        "limits": {"trial_timeout_s": 20},
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    scenario = {"id": "rain", "prompt": "Will it rain in Paris?", "claims": ["It will rain in Paris."]}
    (root / "scenarios" / "rain.yaml").write_text(yaml.safe_dump(scenario))
    return root


def test_a_misspelled_server_command_is_refused_before_the_first_trial(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite", ["offline:default"], command=str(TYPO))
    db = tmp_path / "run.db"
    code, out, err = _cli("run", str(suite), "--headless", "--db", str(db))
    assert code == 2 and out == ""
    assert f"{suite / 'suite.yaml'}: field 'mcpServers.weather.command': '{TYPO}': no such file" in err
    assert not db.exists()


def test_a_server_that_dies_at_start_is_named_with_its_server_everywhere(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite", ["offline:default"], args=("-c", f"raise SystemExit({DIES_WITH!r})"))
    db = tmp_path / "run.db"
    code, out, _ = _cli("run", str(suite), "--headless", "--db", str(db))
    cause = f"server 'weather' did not start: {DIES_WITH}"
    assert code != 0
    assert "errors by cause" in out and f"1 trial (weather): {cause}" in out
    assert "first message: weather: could not start" in out

    _, md, _ = _cli("report", str(db), "--format", "md")
    assert f"1 of 1 trials ended in error; they have no pass/fail verdict. Why: 1 trial: {cause}." in md
    _, raw, _ = _cli("report", str(db), "--format", "json")
    (group,) = json.loads(raw)["errors"]
    assert (group["cause"], group["trials"], group["arms"]) == (cause, 1, ["weather"])
    assert DIES_WITH in group["first"]

    code, _, err = _cli("gate", str(db), "--baseline", "baseline", "--min-delta", "0")
    assert code == 2 and f"1 trial: {cause} (arms weather)" in err


async def test_a_closed_openai_endpoint_is_named_in_the_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    provider = OpenAIProvider(
        "gpt-test",
        api_key="",
        base_url=f"http://127.0.0.1:{port}/v1",
        prices=PriceTable(),
        backoff=Backoff(base_s=0.01, multiplier=1.0, max_s=0.01, jitter=0.0),
        rng=random.Random(0),
        deadline_s=10.0,
        request_timeout_s=5.0,
        http_client=httpx2.AsyncClient(),
    )
    try:
        with pytest.raises(ProviderError) as raised:
            await provider.session(1).turn("", [UserMessage("hi")], [])
    finally:
        await provider.aclose()
    message = str(raised.value)
    assert message.startswith(f"openai: connection failed to http://127.0.0.1:{port}/v1 (gave up after ")
    (group,) = group_errors([("baseline", message), ("weather", message)])
    assert group.line().startswith(
        f"2 trials: openai: connection failed to http://127.0.0.1:{port}/v1 after "
    )


def test_a_run_without_its_key_is_refused_once_before_the_first_trial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    suite = _suite(tmp_path / "suite", ["anthropic:claude-test"])
    db = tmp_path / "run.db"
    code, out, err = _cli("run", str(suite), "--headless", "--db", str(db))
    assert code == 2 and out == ""
    line = (
        f"{suite / 'suite.yaml'}: field 'models': anthropic:claude-test: no API key: set ANTHROPIC_API_KEY "
        "(or choose the offline agent with --models offline:default)"
    )
    assert line in err and err.count("no API key") == 1
    assert not db.exists()  # nothing to report as if it had run


async def _stopped_before_its_trials(db: Path, message: str) -> None:
    """A run as the engine leaves one that stopped on an error before any trial (its executor
    failed to start): two trials queued, the run's end saying why."""
    async with await StoreWriter.open(db) as writer:
        await writer.create_run("r1", "errors", {"models": ["anthropic:claude-test"]})
        await writer.add_trials(
            "r1", [TrialRow("rain", arm, "anthropic:claude-test", 0, 0) for arm in ("baseline", "weather")]
        )
        writer.emit("r1", RunStarted(run_id="r1", suite="errors", config={}, trials=2))
        writer.emit("r1", RunFinished(run_id="r1", status="error", message=message))


def test_a_run_stopped_before_its_trials_says_so_first_in_the_report(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    asyncio.run(_stopped_before_its_trials(db, "anthropic:claude-test: no API key"))
    _, md, _ = _cli("report", str(db), "--format", "md")
    head, rest = md.split("## Verdict", 1)
    assert "**Nothing ran: none of the 2 trials was played (run status error).**" in head
    assert rest.split("\n## ", 1)[0].strip() == "Nothing to conclude: none of the 2 trials ran."
    assert "contains 0 for each" not in md
    caveats = md.split("## Caveats", 1)[1].split("\n## ", 1)[0]
    assert (
        "the run stopped with an error before its trials finished: anthropic:claude-test: no API key"
        in caveats
    )
    assert "2 of 2 trial(s) never ran" in caveats
    _, raw, _ = _cli("report", str(db), "--format", "json")
    assert json.loads(raw)["progress"] == {"trials": 2, "done": 0, "in_progress": False, "left_out": []}
    code, out, err = _cli("gate", str(db), "--baseline", "baseline", "--min-delta", "0")
    assert out.startswith("gate: Nothing ran: none of the 2 trials was played (run status error).")
    assert code == 2 and "2 trials: the run stopped before they ran: anthropic:claude-test: no API key" in err


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        (
            "fs: could not start: MCPError: Connection closed\n[server stderr]\nproctor: could not start "
            "'/x/.bin/server-filesytem': [Errno 2] No such file or directory: '/x/.bin/server-filesytem' "
            "(failed to start 2 times; not tried again in this run: fix the server and resume)",
            "server 'fs' did not start: No such file or directory: …/server-filesytem",
        ),
        (
            "git: could not start: MCPError: Connection closed\n[server stderr]\nError: Cannot find module 'x'",
            "server 'git' did not start: Error: Cannot find module 'x'",
        ),
        ("agent crashed\nTraceback ...", "agent crashed"),
        ("", "no error message recorded"),
    ],
)
def test_a_cause_is_one_line_naming_the_server(error: str, cause: str) -> None:
    assert cause_of(error) == cause


def test_a_node_server_that_cannot_find_its_module_is_named_by_that_line(tmp_path: Path) -> None:
    """node prints the reason first, then a stack and ``code: 'MODULE_NOT_FOUND'``: the cause is the reason."""
    missing = tmp_path / "server-filesytem.js"
    suite = _suite(tmp_path / "suite", ["offline:default"], command="node")
    config = yaml.safe_load((suite / "suite.yaml").read_text())
    config["mcpServers"]["weather"]["args"] = [str(missing)]
    (suite / "suite.yaml").write_text(yaml.safe_dump(config))
    db = tmp_path / "run.db"
    code, out, _ = _cli("run", str(suite), "--headless", "--db", str(db))
    assert code != 0
    # The reason line, not the stack or "code: 'MODULE_NOT_FOUND'"; the path in it is as long as
    # the temporary folder's, so the summary may wrap or cut it: its start is what is held.
    assert "server 'weather' did not start: Error: Cannot find module '" in " ".join(out.split())
    _, raw, _ = _cli("report", str(db), "--format", "json")
    (group,) = json.loads(raw)["errors"]
    expected = f"server 'weather' did not start: Error: Cannot find module '{missing}'"
    assert group["cause"].startswith(expected[: MAX_CAUSE_CHARS - 1])  # cut there, if at all
