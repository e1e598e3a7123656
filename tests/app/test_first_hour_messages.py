"""The first hour's mistakes, each answered by a message that says what to do next."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from proctor.app.cli import build_parser, main

DEMO = Path(__file__).resolve().parents[2] / "scenarios" / "demo"


def test_top_level_help_lists_no_internal_command_and_no_suppress_marker() -> None:
    text = build_parser().format_help()
    assert "==SUPPRESS==" not in text and "engine-process" not in text
    assert "demo" in text and "report" in text


def test_every_positional_argument_of_gate_is_described() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    gate = sub.choices["gate"]  # type: ignore[attr-defined]
    db = next(a for a in gate._actions if a.dest == "db")
    assert db.help and "run database" in db.help


def test_run_without_db_records_in_runs_suite_name_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(DEMO, suite, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(tmp_path)
    code = main(["run", str(suite), "--headless", "--arms", "baseline", "--scenarios", "retry-delay-cap"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "no --db given; recording the run in runs/demo.db" in err
    assert (tmp_path / "runs" / "demo.db").is_file()


def _demo_copy(tmp_path: Path) -> Path:
    suite = tmp_path / "suite"
    shutil.copytree(DEMO, suite, ignore=shutil.ignore_patterns("__pycache__"))
    return suite


def _run_err(suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    code = main(["run", str(suite), "--headless", "--db", str(tmp_path / "r.db")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert not (tmp_path / "r.db").exists()
    return err


def test_a_suite_with_several_mistakes_is_reported_whole_with_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _demo_copy(tmp_path)
    yaml_file = suite / "suite.yaml"
    yaml_file.write_text(
        yaml_file.read_text().replace("servers: [codeintel_stale]", "servers: [codeintel_stal]")
    )
    one = suite / "scenarios" / "01_retry_delay.yaml"
    one.write_text(one.read_text().replace("complexity: dual-serial", "complexity: bogus"))
    eight = suite / "scenarios" / "08_backoff_callers.yaml"
    eight.write_text(eight.read_text().replace("category: references", "categroy: references"))
    err = _run_err(suite, tmp_path, capsys)
    assert "3 problems in the suite" in err
    line = yaml_file.read_text().splitlines().index("    servers: [codeintel_stal]") + 1
    assert f"{yaml_file}:{line}: field 'arms.codeintel_stale.servers': unknown server 'codeintel_stal'" in err
    assert f"{one}: invalid\n  line 7: field 'complexity'" in err
    assert f"{eight}: invalid\n  line 6: field 'categroy': unknown field" in err


def test_a_claim_containing_colon_space_gets_a_hint_to_quote_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _demo_copy(tmp_path)
    one = suite / "scenarios" / "01_retry_delay.yaml"
    one.write_text(
        one.read_text().replace(
            "  - The retry delay is computed by compute_backoff in tinyq/retry.py.",
            "  - The cap is: 300 seconds.",
        )
    )
    err = _run_err(suite, tmp_path, capsys)
    assert "line 9: field 'claims.0'" in err
    assert "contains ': '" in err and "quote the whole text" in err


def test_a_gold_call_on_an_undefined_server_says_the_server_is_undefined(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _demo_copy(tmp_path)
    one = suite / "scenarios" / "01_retry_delay.yaml"
    one.write_text(one.read_text().replace("server: codeintel,", "server: nosuch,"))
    err = _run_err(suite, tmp_path, capsys)
    assert (
        "field 'gold_tool_calls.0.0.server': server 'nosuch' is not defined in suite.yaml's mcpServers" in err
    )
    assert "offered by no arm" not in err


def _git_repo(path: Path) -> None:
    path.mkdir()
    (path / "a.txt").write_text("a\n")
    env = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    for args in (["init", "-q"], ["add", "a.txt"], [*env, "commit", "-q", "-m", "one"]):
        subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, timeout=30)


def test_a_repository_commit_that_does_not_exist_is_named_in_suite_yaml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _demo_copy(tmp_path)
    _git_repo(tmp_path / "checkout")
    yaml_file = suite / "suite.yaml"
    missing = "deadbeef" * 5
    text = yaml_file.read_text().replace(
        "  source: repo\n  commit: b9f904d97a8a1dbe1d0e0b10d7bfe4fe6d625e01",
        f"  path: {tmp_path / 'checkout'}\n  commit: {missing}",
    )
    yaml_file.write_text(text)
    err = _run_err(suite, tmp_path, capsys)
    assert f"{yaml_file}: field 'repo'" in err and "scenarios/" not in err
    assert f"commit {missing} does not exist in {tmp_path / 'checkout'}" in err
    assert not err.rstrip().endswith(":")


WEATHER_ONLY = """
name: w
mcpServers:
  weather:
    command: ${PYTHON}
    args: [-m, proctor.scenarios.demo.servers.weather]
arms:
  weather: {servers: [weather]}
models: ["offline:default"]
"""


def test_servers_check_needs_no_scenario_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "suite.yaml").write_text(WEATHER_ONLY)
    code = main(["servers", "check", str(tmp_path)])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "get_forecast" in out.out


def test_servers_call_with_an_unknown_tool_names_the_server_and_lists_its_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "suite.yaml").write_text(WEATHER_ONLY)
    code = main(["servers", "call", str(tmp_path), "weather", "nosuch"])
    err = capsys.readouterr().err
    assert code == 2
    assert "server 'weather' has no tool 'nosuch'; its tools: get_forecast, list_cities" in err
