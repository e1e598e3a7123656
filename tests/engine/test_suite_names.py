"""Credential-shaped suite, arm and server names are redacted where a suite enters a run."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from proctor.engine.suites import admit, load_suite
from proctor.engine.tools.mcp_connection import _safe_name
from proctor.store.redaction import redact

GH1 = "ghp_" + "F1rstT0ken" * 4
GH2 = "ghp_" + "S3cndT0ken" * 4


def _suite(root: Path) -> Path:
    (root / "scenarios").mkdir(parents=True)
    server = {"command": sys.executable, "args": ["-c", "pass"]}
    suite = {
        "name": f"nightly {GH1}",
        "mcpServers": {GH1: server, GH2: server, "plain": server},
        "arms": {f"arm-{GH1}": {"servers": [GH1, "plain"]}, f"arm-{GH2}": {"servers": [GH2]}},
    }
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    scenario = {"id": "s1", "prompt": "Find it.", "gold_tool_calls": [[{"tool": "find", "server": GH2}]]}
    (root / "scenarios" / "s1.yaml").write_text(yaml.safe_dump(scenario))
    return root


def test_names_are_redacted_consistently_and_stay_distinct(tmp_path: Path) -> None:
    loaded = load_suite(_suite(tmp_path / "suite"))
    assert loaded.suite.name == "nightly [redacted: github-token]"
    servers = list(loaded.servers)
    assert servers == ["[redacted: github-token]", "[redacted: github-token] #2", "plain"]
    arms = loaded.suite.arms
    assert set(arms) == {"arm-[redacted: github-token]", "arm-[redacted: github-token] #2"}
    assert arms["arm-[redacted: github-token]"].servers == ["[redacted: github-token]", "plain"]
    assert arms["arm-[redacted: github-token] #2"].servers == ["[redacted: github-token] #2"]
    assert loaded.scenarios[0].gold_tool_calls[0][0].server == "[redacted: github-token] #2"
    dumped = loaded.suite.model_dump_json() + "".join(loaded.servers)
    assert GH1[4:] not in dumped and GH2[4:] not in dumped


def test_admitting_twice_changes_nothing(tmp_path: Path) -> None:
    loaded = load_suite(_suite(tmp_path / "suite"))
    again = admit(loaded)
    assert again.suite == loaded.suite and list(again.servers) == list(loaded.servers)


def test_a_log_file_name_is_redacted_ascii_and_bounded() -> None:
    assert _safe_name(f"srv_{GH1}") == "srv__redacted__github-token_"
    assert _safe_name("..") == "server" and _safe_name("../../etc/x") == "_.._etc_x"
    long = _safe_name("s" * 400)
    assert len(long) <= 100 and long != _safe_name("s" * 401)
    assert _safe_name("ünï") == "_n_"
    assert redact(_safe_name(GH1)) == _safe_name(GH1)
