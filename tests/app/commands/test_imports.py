"""``proctor import otel --suite``: the suite's tools lock says which tools its servers list; a lock
it cannot read stops the import with the file and the fix, before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from proctor.app.cli import main
from proctor.app.exit_codes import ExitCode
from proctor.engine.tools.surface_lock import LOCK_NAME

TRACES = Path(__file__).parents[2] / "scenarios" / "importers" / "otel_real" / "openai_agents_mixed.jsonl"


def test_an_unreadable_tools_lock_names_the_file_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite"
    (suite / "scenarios").mkdir(parents=True)
    data = {
        "name": "fs",
        "mcpServers": {"fs": {"command": "true"}},
        "arms": {"fs_agent": {"servers": ["fs"]}},
    }
    (suite / "suite.yaml").write_text(yaml.safe_dump(data))
    (suite / "scenarios" / "a.yaml").write_text(yaml.safe_dump({"id": "a", "prompt": "Where is it?"}))
    (suite / LOCK_NAME).write_text('{"version": 1, "servers": ')
    out = tmp_path / "imp"
    code = main(["import", "otel", str(TRACES), "--suite", str(suite), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == ExitCode.BAD_INPUT
    assert f"{suite / LOCK_NAME}: not a readable tool lock" in err
    assert "write it again with proctor tools lock" in err
    assert not out.exists()
