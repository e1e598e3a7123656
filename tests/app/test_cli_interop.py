"""``proctor import/export/gate`` through the command line's ``main``."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml

from proctor.app.cli import build_parser, main
from proctor.app.exit_codes import ExitCode
from proctor.scenarios.loader import load_suite
from proctor.store.events import Scored
from proctor.store.read.reader import StoreReader
from proctor.store.write.writer import StoreWriter, TrialRow

FIXTURES = Path(__file__).parents[2] / ".." / "shared" / "fixtures"


EXIT_OK, EXIT_BAD_INPUT, EXIT_GATE_FAILED = ExitCode.OK, ExitCode.BAD_INPUT, ExitCode.FAILED


def run(*argv: str | Path) -> int:
    return main([str(a) for a in argv])


def _scored_db(path: Path, fairness: dict[str, list[float]]) -> Path:
    async def build() -> None:
        w = await StoreWriter.open(path)
        try:
            await w.create_run("r", "s", {})
            rows = [TrialRow(f"s{i}", arm, "m", 0, 1) for arm, vs in fairness.items() for i in range(len(vs))]
            await w.add_trials("r", rows)
            with StoreReader(path) as reader:
                ids = {(t.scenario, t.arm): t.id for t in reader.trials()}
            for arm, values in fairness.items():
                for i, v in enumerate(values):
                    w.emit("r", Scored(name="fairness", value=v, details={}), trial_id=ids[(f"s{i}", arm)])
        finally:
            await w.close()

    asyncio.run(build())
    return path


def test_import_livemcpbench_then_export_the_imported_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = FIXTURES / "livemcpbench"
    if not folder.exists():
        pytest.skip(f"shared fixture {folder} is absent (the shared/ folder beside the repository)")
    out = tmp_path / "live"
    assert run("import", "livemcpbench", folder, "-o", out, "--model", "claude-sonnet-4") == EXIT_OK
    printed = capsys.readouterr()
    assert f"wrote {out}: 17 scenarios, arms baseline, livemcptool" in printed.out
    assert "12 imported trials, 132 judgments" in printed.out
    assert len(load_suite(out).scenarios) == 17
    assert run("export", out / "imported.db", "--format", "jsonl") == EXIT_OK
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["model"] for r in rows if r["trial_id"] is not None} == {"imported:claude-sonnet-4"}
    assert sum(r["kind"] == "judgment" for r in rows) == 132
    assert run("export", out / "imported.db", "--format", "csv", "-o", tmp_path / "x.csv") == EXIT_OK
    assert (tmp_path / "x.csv").read_text().startswith("schema,record,run_id,")


def test_import_mcpagentbench_and_mcpservers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{"id": "a", "content": "q", "tools": [["t"]], "inputs": [[{"x": 1}]]}]))
    servers = tmp_path / "claude.json"
    servers.write_text(
        json.dumps({"mcpServers": {"mock": {"command": "python", "env": {"API_TOKEN": "literal-token-1"}}}})
    )
    assert run("import", "mcpagentbench", tasks, "--servers", servers, "-o", tmp_path / "a") == EXIT_OK
    assert list(load_suite(tmp_path / "a").suite.arms) == ["baseline", "mcp"]
    assert run("import", "mcpservers", servers, "-o", tmp_path / "s") == EXIT_OK
    err = capsys.readouterr().err
    assert "export API_TOKEN" in err and "literal-token-1" not in err
    assert "literal-token-1" not in (tmp_path / "s" / "suite.yaml").read_text()
    assert run("import", "mcpservers", servers, "-o", tmp_path / "s") == EXIT_BAD_INPUT
    assert "--force" in capsys.readouterr().err
    assert run("import", "mcpservers", servers, "-o", tmp_path / "s", "--force") == EXIT_OK


def test_bad_input_exits_2_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "atlas.csv"
    bad.write_text("TASK,PROMPT,GTFA_CLAIMS\nt1,Do it,not a list\n")
    out = tmp_path / "out"
    assert run("import", "mcp-atlas", bad, "-o", out) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "atlas.csv: row 1 (TASK t1), field 'GTFA_CLAIMS'" in err
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["atlas.csv"]
    assert run("import", "mcp-atlas", tmp_path / "nope.csv", "-o", out) == EXIT_BAD_INPUT
    assert "no such file" in capsys.readouterr().err
    assert run("export", tmp_path / "nope.db") == EXIT_BAD_INPUT
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not sqlite at all" * 10)
    assert run("gate", garbage, "--baseline", "baseline", "--min-delta", "0") == EXIT_BAD_INPUT


def test_gate_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _scored_db(tmp_path / "run.db", {"baseline": [0.4, 0.5], "mcp": [0.6, 0.7]})
    assert run("gate", db, "--baseline", "baseline", "--min-delta", "0.1") == EXIT_OK
    assert "gate: passed" in capsys.readouterr().out
    assert run("gate", db, "--baseline", "baseline", "--min-delta", "0.3") == EXIT_GATE_FAILED
    assert "gate: FAILED" in capsys.readouterr().out
    assert run("gate", db, "--baseline", "control", "--min-delta", "0") == EXIT_BAD_INPUT
    assert "arms with scores: baseline, mcp" in capsys.readouterr().err
    empty = _scored_db(tmp_path / "empty.db", {})
    assert run("gate", empty, "--baseline", "baseline", "--min-delta", "0") == EXIT_BAD_INPUT
    assert "no scored trials" in capsys.readouterr().err


def test_the_ci_example_uses_commands_that_parse() -> None:
    """The documented workflow's proctor commands are accepted by the real parsers."""
    example = Path(__file__).parents[2] / "docs" / "ci-example.yml"
    workflow = yaml.safe_load(example.read_text())
    env = {str(k): str(v) for k, v in workflow["env"].items()}
    commands = [
        re.sub(r"\$(\w+)", lambda m: env[m.group(1)], line.strip())
        for step in workflow["jobs"]["evaluate"]["steps"]
        for line in str(step.get("run", "")).splitlines()
        if line.strip().startswith("proctor ")
    ]
    assert [c.split()[1] for c in commands] == ["tools", "run", "gate", "export", "export", "report"]
    for command in commands:
        argv = shlex.split(command)[1:]
        assert build_parser().parse_args(argv).command == argv[0]


class _FakeAnchors:
    """Stands in for ``proctor.engine.grading.anchors``: the gate's wiring is what is tested here."""

    class AnchorError(Exception):
        pass

    def __init__(self, passed: bool | None) -> None:
        self.passed = passed
        self.calls: list[tuple[Path, Path]] = []

    async def verify_anchors(self, suite_dir: Path, *, lock_path: Path) -> object:
        self.calls.append((suite_dir, lock_path))
        if self.passed is None:
            raise self.AnchorError("lock schema 9; this proctor reads 1")
        passed = self.passed

        class Verdict:
            def __init__(self) -> None:
                self.passed = passed

            def message(self) -> str:
                return f"anchors verification {'passed' if passed else 'FAILED'}"

        return Verdict()


@pytest.mark.parametrize(
    ("anchors_pass", "code"), [(True, EXIT_OK), (False, EXIT_GATE_FAILED), (None, EXIT_BAD_INPUT)]
)
def test_gate_require_anchors(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    anchors_pass: bool | None,
    code: int,
) -> None:
    fake = _FakeAnchors(anchors_pass)
    monkeypatch.setitem(sys.modules, "proctor.engine.grading.anchors", fake)
    db = _scored_db(tmp_path / "run.db", {"baseline": [0.4], "mcp": [0.6]})
    lock = tmp_path / "held-out.lock"
    lock.write_text("{}")
    argv = [
        "gate",
        db,
        "--baseline",
        "baseline",
        "--min-delta",
        "0.1",
        "--require-anchors",
        lock,
        "--suite",
        tmp_path,
    ]
    assert run(*argv) == code
    assert fake.calls == [(tmp_path, lock)]
    if anchors_pass is not None:
        assert f"anchors verification {'passed' if anchors_pass else 'FAILED'}" in capsys.readouterr().out
    assert (
        run(
            "gate",
            db,
            "--baseline",
            "baseline",
            "--min-delta",
            "0.1",
            "--require-anchors",
            tmp_path / "no.lock",
        )
        == EXIT_BAD_INPUT
    )


def test_require_anchors_needs_to_know_the_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "proctor.engine.grading.anchors", _FakeAnchors(True))
    db = _scored_db(tmp_path / "run.db", {"baseline": [0.4], "mcp": [0.6]})
    lock = tmp_path / "held-out.lock"
    lock.write_text("{}")
    assert (
        run("gate", db, "--baseline", "baseline", "--min-delta", "0", "--require-anchors", lock)
        == EXIT_BAD_INPUT
    )
    assert "pass --suite DIR" in capsys.readouterr().err


def test_servers_call_prints_what_a_run_would_record(capsys: pytest.CaptureFixture[str]) -> None:
    demo = Path(__file__).resolve().parents[2] / "scenarios" / "demo"
    args = [
        "servers",
        "call",
        str(demo),
        "codeintel",
        "find_definition",
        "--args",
        '{"symbol": "compute_backoff"}',
    ]
    assert main([*args, "--json"]) == 0
    recorded = json.loads(capsys.readouterr().out)
    result = recorded["result"]
    assert result["server"] == "codeintel" and result["is_error"] is False
    assert "def compute_backoff(" in result["content"]
    assert [b["type"] for b in result["blocks"]] == ["text"]
    assert recorded["server"]["name"] == "codeintel" and "tools" in recorded["server"]["capabilities"]
    assert recorded["server"]["instructions"].startswith("Code intelligence")
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "server codeintel: codeintel · protocol 2026-07-28" in printed
    assert "codeintel.find_definition: ok" in printed and "1 content blocks: text" in printed
    assert (
        main(["servers", "call", str(demo), "codeintel", "no_such_tool"]) == 2
    )  # bad input, like a bad server
    assert "server 'codeintel' has no tool 'no_such_tool'; its tools: " in capsys.readouterr().err
    assert main(["servers", "call", str(demo), "nope", "x"]) == 2
    assert "no server 'nope'" in capsys.readouterr().err
