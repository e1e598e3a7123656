"""``proctor tools diff|lock`` exit codes and output, on lock files and a server that fails to start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from proctor.app.cli import main
from proctor.engine.tools.surface import ToolDefinition, surface_of
from proctor.engine.tools.surface_lock import write_lock

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}


def _lock(path: Path, description: str, schema: dict[str, object] = SCHEMA) -> Path:
    write_lock(path, surface_of([ToolDefinition("fs", "search", description, dict(schema))]))
    return path


def test_diff_exits_0_when_same_and_1_when_different(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _lock(tmp_path / "a.json", "Search files.")
    b = _lock(tmp_path / "b.json", "Search files.", {**SCHEMA, "required": ["q"]})
    assert main(["tools", "diff", str(a), str(a)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "tool surfaces are the same"
    assert main(["tools", "diff", str(a), str(b), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["breaking"] is True
    assert doc["changes"][0]["input_schema"] == [
        {"path": "properties.q", "change": "now required", "breaking": True}
    ]


def test_a_server_that_does_not_start_fails_the_command_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite"
    (suite / "scenarios").mkdir(parents=True)
    config = {
        "name": "broken",
        "mcpServers": {"gone": {"command": str(tmp_path / "no-such-server")}},
        "arms": {"gone": {"servers": ["gone"]}},
    }
    (suite / "suite.yaml").write_text(yaml.safe_dump(config))
    assert main(["tools", "lock", str(suite)]) == 3
    assert "server did not start: gone:" in capsys.readouterr().err
    assert not (suite / "tools.lock.json").exists()
    assert main(["tools", "lock", "--check", str(suite)]) == 2  # nothing to check against
    assert "no tool lock to check against" in capsys.readouterr().err
