"""Fail before the first trial, not after forty: a missing command, a missing key and an endpoint
that refuses connections are refused with exit 2 before any trial, naming the file, the field and
the fix, once; ``--keep-going`` runs the arms that can run and says which were left out."""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import socket
import stat
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import yaml

from proctor.app.cli import main
from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.session import run_suite
from proctor.engine.suites import load_suite
from proctor.scenarios.demo import SUITE_DIR

FIX_COMMAND = "is not a command on the server's PATH; install it, or give its full path"


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def _demo_copy(tmp_path: Path, command: str = "codeintel-mcp") -> Path:
    """The demo suite, its codeintel server started by ``command`` (not on any PATH)."""
    suite = tmp_path / "demo"
    shutil.copytree(SUITE_DIR, suite, ignore=shutil.ignore_patterns("__pycache__"))
    text = (suite / "suite.yaml").read_text()
    old = "  codeintel:\n    command: ${PYTHON}\n    args: [-m, proctor.scenarios.demo.servers.codeintel, "
    assert old in text
    (suite / "suite.yaml").write_text(
        text.replace(old, f"  codeintel:\n    command: {command}\n    args: [", 1)
    )
    return suite


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed when the block ends: nothing listens there


def _small_suite(root: Path, **extra: object) -> Path:
    (root / "scenarios").mkdir(parents=True)
    suite = {"name": "small", "arms": {"baseline": {"baseline": True}}, **extra}
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    scenario = {"id": "one", "prompt": "Say hello.", "claims": ["It says hello."]}
    (root / "scenarios" / "one.yaml").write_text(yaml.safe_dump(scenario))
    return root


def test_a_server_command_that_does_not_exist_is_refused_before_any_trial(tmp_path: Path) -> None:
    suite = _demo_copy(tmp_path)
    db = tmp_path / "run.db"
    code, out, err = _cli("run", str(suite), "--headless", "--db", str(db))
    assert code == 2 and out == ""
    line = f"{suite / 'suite.yaml'}: field 'mcpServers.codeintel.command': 'codeintel-mcp' {FIX_COMMAND}"
    assert line in err
    assert err.count("codeintel-mcp") == 1  # printed once
    assert err.startswith("proctor run: nothing ran: 1 problem before the first trial:")
    assert "--keep-going to run what can run (arms baseline, codeintel_stale; models offline:default)" in err
    assert not db.exists() and "trials done" not in err


def test_keep_going_runs_the_arms_that_can_run_and_says_which_were_left_out(tmp_path: Path) -> None:
    suite = _demo_copy(tmp_path)
    db = tmp_path / "run.db"
    code, out, err = _cli(
        "run", str(suite), "--headless", "--db", str(db), "--keep-going",
        "--arms", "baseline,codeintel", "--scenarios", "retry-delay-cap,dead-letter",
    )  # fmt: skip
    assert code == 0, err
    assert "proctor: --keep-going: left out arm(s) codeintel, for:" in err
    assert "running arms baseline with models offline:default" in err
    assert "baseline" in out and "codeintel" not in out.split("errors by cause")[0]
    _, md, _ = _cli("report", str(db), "--format", "md")
    head = md.split("## Verdict", 1)[0]
    assert "Left out before the first trial (--keep-going): arm codeintel:" in head
    assert "'mcpServers.codeintel.command'" in head
    _, raw, _ = _cli("report", str(db), "--format", "json")
    progress = json.loads(raw)["progress"]
    assert (progress["trials"], progress["done"], len(progress["left_out"])) == (2, 2, 1)


def test_keep_going_with_nothing_left_to_run_is_refused(tmp_path: Path) -> None:
    suite = _demo_copy(tmp_path)
    db = tmp_path / "run.db"
    code, _, err = _cli(
        "run", str(suite), "--headless", "--db", str(db), "--keep-going", "--arms", "codeintel"
    )
    assert code == 2 and "'mcpServers.codeintel.command'" in err and "--keep-going to run" not in err
    assert not db.exists()


def test_a_missing_api_key_is_refused_before_any_trial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    db = tmp_path / "run.db"
    code, out, err = _cli("demo", "--headless", "--db", str(db), "--models", "anthropic:claude-sonnet-4-5")
    assert code == 2 and out == ""
    assert (
        "--models: anthropic:claude-sonnet-4-5: no API key: set ANTHROPIC_API_KEY "
        "(or choose the offline agent with --models offline:default)"
    ) in err
    assert err.count("no API key") == 1 and not db.exists()


def test_keep_going_leaves_out_a_model_without_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    suite = _small_suite(tmp_path / "suite", models=["anthropic:claude-test", "offline:default"])
    db = tmp_path / "run.db"
    code, _, err = _cli("run", str(suite), "--headless", "--db", str(db), "--keep-going")
    assert code == 0, err
    assert "left out model(s) anthropic:claude-test" in err
    _, raw, _ = _cli("report", str(db), "--format", "json")
    report = json.loads(raw)
    assert {t["model"] for t in report["trials"]} == {"offline:default"}
    (left,) = report["progress"]["left_out"]
    assert left.startswith(f"model anthropic:claude-test: {suite / 'suite.yaml'}: field 'models': ")


def test_an_http_server_url_that_refuses_connections_is_refused(tmp_path: Path) -> None:
    port = _closed_port()
    suite = _small_suite(
        tmp_path / "suite",
        mcpServers={"tickets": {"url": f"http://127.0.0.1:{port}/mcp"}},
        arms={"baseline": {"baseline": True}, "tickets": {"servers": ["tickets"]}},
    )
    code, _, err = _cli("run", str(suite), "--headless", "--db", str(tmp_path / "run.db"))
    assert code == 2
    assert (
        f"{suite / 'suite.yaml'}: field 'mcpServers.tickets.url': nothing accepts connections at "
        f"http://127.0.0.1:{port}/mcp (connection refused); start the server first"
    ) in err


def test_a_provider_base_url_on_a_closed_port_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    port = _closed_port()
    suite = _small_suite(
        tmp_path / "suite",
        models=["openai:local-model"],
        providers={"openai": {"base_url": f"http://127.0.0.1:{port}/v1"}},
    )
    code, _, err = _cli("run", str(suite), "--headless", "--db", str(tmp_path / "run.db"))
    assert code == 2
    assert (
        f"{suite / 'suite.yaml'}: field 'providers.openai.base_url': openai:local-model: nothing answers at "
        f"http://127.0.0.1:{port}/v1 (connection refused); start the model server, or fix the URL"
    ) in err


def test_the_runner_refuses_the_same_plan_without_the_cli(tmp_path: Path) -> None:
    from proctor.engine.runs.preflight import PreflightError

    loaded = load_suite(_demo_copy(tmp_path))
    db = tmp_path / "run.db"
    with pytest.raises(PreflightError) as refused:
        asyncio.run(run_suite(loaded, RunOptions(db=db, arms=["codeintel"])))
    (problem,) = refused.value.problems
    assert (problem.field, problem.arms) == ("mcpServers.codeintel.command", frozenset({"codeintel"}))
    assert not db.exists()


def test_a_command_is_looked_up_as_the_server_will_start_it(tmp_path: Path) -> None:
    from proctor.engine.runs.preflight import command_problem

    script = tmp_path / "serve.sh"
    script.write_text("#!/bin/sh\n")
    assert command_problem("./serve.sh", os.defpath, str(tmp_path)) == (
        "'./serve.sh' is not executable; chmod +x it, or start it through its interpreter"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    assert command_problem("./serve.sh", os.defpath, str(tmp_path)) is None
    assert "no such file" in str(command_problem("./other.sh", os.defpath, str(tmp_path)))
    assert command_problem(Path(sys.executable).name, str(Path(sys.executable).parent), None) is None
    assert FIX_COMMAND in str(command_problem("serve.sh", str(tmp_path / "nowhere"), None))


def test_an_endpoint_that_accepts_is_no_problem() -> None:
    from proctor.engine.runs.preflight import endpoint_problem

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        assert endpoint_problem(f"http://127.0.0.1:{s.getsockname()[1]}/mcp") is None
    assert endpoint_problem(f"http://127.0.0.1:{_closed_port()}/") == "connection refused"
