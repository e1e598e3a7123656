"""Inspect AI interop against inspect-ai itself, in the venv ``make test`` builds for it.

Logs are written by inspect-ai running make_logs.py (mockllm tasks with an in-process tool and an
MCP stdio server, limits, errors, epochs); proctor's exports are read back by
``inspect_ai.log.read_eval_log``.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from proctor.app.cli import main
from proctor.app.exit_codes import ExitCode
from proctor.scenarios.importers.inspect import read_inspect
from proctor.scenarios.importers.inspect_log import READER_ENV
from proctor.store.redaction import redact
from tests.bench._inspect_venv import DEFAULT_VENV, installed_python

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[1] / "scenarios" / "importers" / "fixtures" / "inspect"
LOGS = ("tools.eval", "tools-b.eval", "tools.json", "mcp.eval", "limits.eval")

# Run in the Inspect venv: each log as inspect-ai reads it, reduced to what the round trip keeps.
READ_SCRIPT = r"""
import json, sys
from inspect_ai.log import read_eval_log

def call(c):
    return {"function": c.function, "arguments": c.arguments}

out = []
for path in sys.argv[1:]:
    log = read_eval_log(path, resolve_attachments=True)
    samples = []
    for s in log.samples or []:
        samples.append({
            "id": str(s.id),
            "epoch": s.epoch,
            "messages": [
                [m.role, m.text, [call(c) for c in (getattr(m, "tool_calls", None) or [])]] for m in s.messages
            ],
            "usage": {k: [u.input_tokens, u.output_tokens] for k, u in s.model_usage.items()},
            "scores": {k: [v.value, v.answer, v.explanation] for k, v in (s.scores or {}).items()},
            "error": s.error.message if s.error else None,
            "limit": s.limit.type if s.limit else None,
        })
    out.append({"status": log.status, "task": log.eval.task, "model": log.eval.model, "samples": samples})
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def inspect_python() -> Path:
    python = installed_python()
    if python is None:
        pytest.fail(
            f"the Inspect AI venv is not installed at {DEFAULT_VENV}. Run `make test`: it builds it from "
            "tests/reference_servers/requirements-inspect.txt before running the tests.",
            pytrace=False,
        )
    return python


def _inspect_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("INSPECT_")}


def read_with_inspect_ai(python: Path, tmp: Path, *logs: Path) -> list[dict[str, Any]]:
    script = tmp / "read_logs.py"
    script.write_text(READ_SCRIPT)
    done = subprocess.run(
        [str(python), str(script), *map(str, logs)],
        capture_output=True,
        text=True,
        cwd=tmp,
        env=_inspect_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: list[dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run(*argv: str | Path) -> int:
    return main([str(a) for a in argv])


def _by_key(log: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    return {(s["id"], s["epoch"]): s for s in log["samples"]}


def test_an_inspect_log_imported_and_exported_keeps_samples_messages_calls_usage_and_scores(
    inspect_python: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(READER_ENV, "proctor")
    original = FIXTURES / "tools.eval"
    assert run("import", "inspect", original, "-o", tmp_path / "imp") == ExitCode.OK
    exported = tmp_path / "run.eval"
    assert (
        run("export", tmp_path / "imp" / "imported.db", "--format", "inspect", "-o", exported) == ExitCode.OK
    )
    before, after = read_with_inspect_ai(inspect_python, tmp_path, original, exported)
    assert after["status"] == "success" and after["model"] == before["model"]
    old, new = _by_key(before), _by_key(after)
    assert old.keys() == new.keys() and len(new) == 4
    for key, sample in old.items():
        got = new[key]
        # Inspect's system/user messages are the prompt; proctor keeps the user's, then every turn.
        assert got["messages"] == [m for m in sample["messages"] if m[0] != "system"]
        assert got["usage"] == sample["usage"]
        assert got["scores"]["includes"] == sample["scores"]["includes"]
        assert {"keywords", "efficiency"} <= got["scores"].keys() or "passed" not in got["scores"]


def test_an_export_of_limits_errors_and_an_mcp_tool_is_read_by_inspect_ai(
    inspect_python: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(READER_ENV, "proctor")
    logs = (FIXTURES / "mcp.eval", FIXTURES / "limits.eval")
    assert run("import", "inspect", *logs, "-o", tmp_path / "imp") == ExitCode.OK
    exported = tmp_path / "run.eval"
    assert (
        run("export", tmp_path / "imp" / "imported.db", "--format", "inspect", "-o", exported) == ExitCode.OK
    )
    (log,) = read_with_inspect_ai(inspect_python, tmp_path, exported)
    samples = {s["id"]: s for s in log["samples"]}
    assert set(samples) == {"limits-broken", "limits-chatty", "limits-costly", "clock-leap-day"}
    assert samples["limits-broken"]["error"] and "broken" in samples["limits-broken"]["error"]
    assert (samples["limits-chatty"]["limit"], samples["limits-costly"]["limit"]) == ("message", "token")
    mcp = samples["clock-leap-day"]["messages"]
    assert mcp[1][2] == [{"function": "weekday", "arguments": {"date": "2024-02-29"}}]
    assert mcp[2][:2] == ["tool", "Thursday"]


def test_proctors_reader_and_inspect_ais_give_the_same_trials(
    inspect_python: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What inspect-ai reads, written back as a JSON log, imports as proctor's own reader imports the .eval."""
    monkeypatch.setenv(READER_ENV, "proctor")
    script = tmp_path / "to_json.py"
    script.write_text(
        "import sys\nfrom inspect_ai.log import read_eval_log, write_eval_log\n"
        "log = read_eval_log(sys.argv[1], resolve_attachments=True)\n"
        "write_eval_log(log, sys.argv[2], format='json')\n"
    )
    for name in ("tools.eval", "mcp.eval", "limits.eval"):
        as_json = tmp_path / f"{name}.json"
        subprocess.run(
            [str(inspect_python), str(script), str(FIXTURES / name), str(as_json)],
            check=True,
            timeout=120,
            cwd=tmp_path,
            env=_inspect_env(),
            capture_output=True,
        )
        ours = [replace(t, origin="") for t in read_inspect([FIXTURES / name], scrub=redact).trajectories]
        theirs = [replace(t, origin="") for t in read_inspect([as_json], scrub=redact).trajectories]
        assert sorted(ours, key=lambda t: (t.scenario, t.epoch)) == sorted(
            theirs, key=lambda t: (t.scenario, t.epoch)
        ), name


def test_logs_regenerated_by_inspect_ai_import_like_the_committed_ones(
    inspect_python: Path, tmp_path: Path
) -> None:
    out = tmp_path / "logs"
    done = subprocess.run(
        [str(inspect_python), str(FIXTURES / "make_logs.py"), str(out)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_inspect_env(),
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for name in LOGS:
        fresh = read_inspect([out / name], scrub=redact)
        committed = read_inspect([FIXTURES / name], scrub=redact)

        def shape(imported: Any) -> list[tuple[Any, ...]]:
            return sorted(
                (
                    t.scenario,
                    t.epoch,
                    t.final_answer,
                    t.stop,
                    bool(t.error),
                    len(t.turns),
                    [(c.tool, c.arguments) for turn in t.turns for c in turn.calls],
                )
                for t in imported.trajectories
            )

        assert shape(fresh) == shape(committed), name
