"""``import otel`` on agents that call their own function tools AND an MCP server (``otel_real/``,
made by ``make_mixed_traces.py`` with pydantic-ai and openai-agents, the real
server-filesystem): an agent's own tools are built-in calls, never MCP calls; adoption counts MCP
calls only; a session that never called its server keeps the "MCP tools were never called"
caveat; built-in search/read calls beside the server's tools for that job are misses."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest
import yaml

from proctor.app.cli import main
from proctor.app.views.score_views import arm_rows
from proctor.app.views.transcript_state import TranscriptState
from proctor.scenarios.importers.common import ImportedTrajectory
from proctor.scenarios.importers.otel import read_otel
from proctor.store.read.reader import StoreReader
from proctor.store.redaction import redact
from proctor.widgets.arms_panel import arms_text

REAL = Path(__file__).parent / "otel_real"
STACKS = ["pydantic_ai_mixed", "openai_agents_mixed"]
GREETING, TODOS = (
    "Where is the greeting defined in the project?",
    "Go through the TODO list of the project item by item.",
)
FILESYSTEM = (
    Path(__file__).parents[2] / "reference_servers" / "node_modules" / ".bin" / "mcp-server-filesystem"
)


def proctor(*args: str | Path) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        code = main([str(a) for a in args])
    return code, out.getvalue()


def trials(path: Path, **kw: Any) -> dict[tuple[str, str], ImportedTrajectory]:
    imported = read_otel(path, scrub=redact, **kw)
    prompts = {s["id"]: s["prompt"] for s in imported.scenarios}
    return {(t.arm, prompts.get(t.scenario, t.scenario)): t for t in imported.trajectories}


def calls(t: ImportedTrajectory) -> Counter[tuple[str, str, bool | None]]:
    return Counter((c.server, c.tool, c.builtin) for turn in t.turns for c in turn.calls)


@pytest.mark.parametrize("stack", STACKS)
def test_an_agents_own_function_tools_are_built_in_and_only_its_server_calls_are_mcp(stack: str) -> None:
    got = trials(REAL / f"{stack}.jsonl")
    assert calls(got[("fs_agent", GREETING)]) == {
        ("", "search_code", True): 1,
        ("(server unknown)", "read_text_file", False): 1,  # inside it, the mcp SDK's client span
        ("", "count_lines", True): 1,
    }
    assert calls(got[("fs_agent", TODOS)]) == {("", "search_code", True): 1, ("", "read_source", True): 32}
    assert all(
        c.builtin for arm, _ in got if arm == "baseline" for turn in got[(arm, _)].turns for c in turn.calls
    )
    for t in got.values():  # results take their call's mark
        marks = {c.call_id: c.builtin for turn in t.turns for c in turn.calls}
        assert all(r.builtin is marks[r.call_id] for turn in t.turns for r in turn.results)


def test_pydantic_ais_tool_definitions_say_which_tools_are_the_agents_own() -> None:
    # model_request_parameters: toolset_id "<agent>" for its functions, the MCP tools' annotations
    t = trials(REAL / "pydantic_ai_mixed.jsonl")[("fs_agent", TODOS)]
    offered = {x.name: (x.builtin, x.annotations) for x in t.tools}
    assert {name for name, (builtin, _) in offered.items() if builtin} == {
        "search_code",
        "read_source",
        "count_lines",
    }
    assert offered["search_files"] == (False, {"readOnlyHint": True, "openWorldHint": False})
    assert offered["write_file"][1] == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }


def test_calls_nothing_attributes_to_a_server_are_said_to_be_built_in() -> None:
    notes = " | ".join(read_otel(REAL / "openai_agents_mixed.jsonl", scrub=redact).notes)
    assert "71 tool call(s) (search_code, count_lines, read_source) show no sign of an MCP server" in notes
    assert "imported as built-in calls" in notes


def _suite(root: Path, locked: bool = False) -> Path:
    """Arms fs_agent (the filesystem server) and baseline; both prompts with a claim to check."""
    suite = root / "suite"
    (suite / "scenarios").mkdir(parents=True)
    (root / "files").mkdir(exist_ok=True)
    data = {
        "name": "fs",
        "mcpServers": {"fs": {"command": str(FILESYSTEM), "args": [str(root / "files")]}},
        "arms": {"fs_agent": {"servers": ["fs"]}, "baseline": {"baseline": True}},
    }
    (suite / "suite.yaml").write_text(yaml.safe_dump(data))
    for sid, prompt, claim in [
        ("greeting", GREETING, "The greeting is defined in app.py"),
        ("todos", TODOS, "The TODO list has 32 items"),
    ]:
        (suite / "scenarios" / f"{sid}.yaml").write_text(
            yaml.safe_dump({"id": sid, "prompt": prompt, "claims": [claim]})
        )
    if locked:
        assert proctor("tools", "lock", suite)[0] == 0
    return suite


def _only(prompt: str, src: Path, dst: Path) -> Path:
    """The traces of ``src`` that hold ``prompt`` (its sessions), as the exporter wrote them."""
    requests = [json.loads(line) for line in src.read_text().splitlines()]

    def spans(r: dict[str, Any]) -> list[dict[str, Any]]:
        return [s for rs in r["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]

    wanted = {s["traceId"] for r in requests for s in spans(r) if prompt in json.dumps(s)}
    with dst.open("w") as out:
        for r in requests:
            for rs in r["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    ss["spans"] = [s for s in ss["spans"] if s["traceId"] in wanted]
            if spans(r):
                out.write(json.dumps(r) + "\n")
    return dst


def _imported(traces: Path, suite: Path, out: Path) -> tuple[dict[str, Any], str]:
    assert proctor("import", "otel", traces, "--suite", suite, "-o", out)[0] == 0
    assert proctor("judge", out / "imported.db")[0] == 0
    code, text = proctor("report", out / "imported.db", "--format", "json")
    assert code == 0
    md = proctor("report", out / "imported.db", "--format", "md")[1]
    return json.loads(text), md


def _arm(report: dict[str, Any], name: str) -> dict[str, Any]:
    arm: dict[str, Any] = next(a for a in report["arms"] if a["arm"] == name)
    return arm


@pytest.mark.parametrize("stack", STACKS)
def test_a_session_that_never_called_its_server_gets_no_adoption_and_keeps_the_caveat(
    stack: str, tmp_path: Path
) -> None:
    # Its own tools 33 times, the MCP server 0 times: before, every call counted as an MCP call
    # (adoption 1.0, 33 "MCP calls") and the caveat was gone.
    todos = _only(TODOS, REAL / f"{stack}.jsonl", tmp_path / "todos.jsonl")
    report, md = _imported(todos, _suite(tmp_path), tmp_path / "imp")
    fs = _arm(report, "fs_agent")
    assert fs["adoption"] is not None and fs["adoption"]["mean"] == 0.0
    versus = fs["vs_baseline"]
    assert versus["arm_tool_calls"] == 0 and versus["attributable"] is False
    assert "its MCP tools were never called in 1 trial(s)" in versus["caveat"]
    assert "its MCP tools were never called" in md


def test_misses_per_trial_and_per_arm_beside_adoption(tmp_path: Path) -> None:
    report, md = _imported(REAL / "pydantic_ai_mixed.jsonl", _suite(tmp_path), tmp_path / "imp")
    fs, base = _arm(report, "fs_agent"), _arm(report, "baseline")
    assert fs["adoption"]["mean"] == 0.5  # greeting: its one MCP call, fluent and found; todos: none
    assert fs["misses"] == {"calls": 34, "trials": 2, "per_trial": 17.0}
    assert base["misses"] is None and fs["vs_baseline"]["attributable"] is True
    missed = {
        t["scenario"]: t["scores"]["adoption"]["details"]["missed"]
        for t in report["trials"]
        if t["arm"] == "fs_agent"
    }
    assert missed["greeting"] == ["search_code (search)"]  # count_lines does neither job
    assert missed["todos"] == ["search_code (search)"] + ["read_source (read)"] * 32
    row = next(line for line in md.splitlines() if line.startswith("| fs\\_agent · "))
    cells = [c.strip() for c in row.split("|")[1:-1]]
    assert re.fullmatch(r"0\.500 \[0\.000, 1\.000\]", cells[3]) and cells[4] == "34 (17.0/trial)"
    html = proctor("report", tmp_path / "imp" / "imported.db", "--format", "html")[1]
    assert "34 (17.0/trial)" in html
    csv_rows = {
        r["arm"]: r
        for r in csv.DictReader(
            io.StringIO(proctor("report", tmp_path / "imp" / "imported.db", "--format", "csv")[1])
        )
    }
    assert (csv_rows["fs_agent"]["misses"], csv_rows["fs_agent"]["misses_per_trial"]) == ("34", "17.0")
    assert (csv_rows["baseline"]["misses"], csv_rows["baseline"]["adoption_mean"]) == ("", "n/a (baseline)")


def test_the_json_export_carries_each_calls_marker_and_each_trials_misses(tmp_path: Path) -> None:
    _imported(REAL / "pydantic_ai_mixed.jsonl", _suite(tmp_path), tmp_path / "imp")
    rows = [json.loads(line) for line in proctor("export", tmp_path / "imp" / "imported.db")[1].splitlines()]
    adoption = {r["scenario"]: r["data"] for r in rows if r["name"] == "adoption" and r["arm"] == "fs_agent"}
    assert {sid: d["misses"] for sid, d in adoption.items()} == {"greeting": 1, "todos": 33}
    marks = Counter(
        (r["name"], r["data"]["builtin"]) for r in rows if r["kind"] == "tool_call" and r["arm"] == "fs_agent"
    )
    assert marks == {
        ("search_code", True): 2,
        ("read_source", True): 32,
        ("count_lines", True): 1,
        ("read_text_file", False): 1,
    }


def test_the_transcript_shows_the_agents_own_calls_as_built_in(tmp_path: Path) -> None:
    _imported(REAL / "pydantic_ai_mixed.jsonl", _suite(tmp_path), tmp_path / "imp")
    with StoreReader(tmp_path / "imp" / "imported.db") as r:
        trial = next(t for t in r.trials() if t.arm == "fs_agent" and t.scenario == "greeting")
        transcript = TranscriptState(trial.id)
        transcript.load(r.trial_events(trial.id))
    calls = [e.title.rsplit(" #", 1)[0] for e in transcript.entries if e.kind == "tool_call"]
    assert calls == ["call search_code (built-in)", "call fs/read_text_file", "call count_lines (built-in)"]
    offered = next(e.body for e in transcript.entries if e.title.startswith("offered "))
    assert "search_code  (built-in)" in offered and "read_text_file  (fs)" in offered


def test_the_console_arm_panel_shows_an_arms_misses(tmp_path: Path) -> None:
    _imported(REAL / "pydantic_ai_mixed.jsonl", _suite(tmp_path), tmp_path / "imp")
    with StoreReader(tmp_path / "imp" / "imported.db") as r:
        ended = {t.id: t for t in r.trials()}
        scores = {t: {s.name: s for s in r.scores(t)} for t in ended}
    rows = {row.arm: row for row in arm_rows(ended, scores, ["fs_agent", "baseline"])}
    assert (rows["fs_agent"].misses, rows["fs_agent"].tool_calls) == (34, 1)
    assert "34 misses: own search/read" in arms_text(list(rows.values())).plain


@pytest.mark.slow
def test_a_tools_lock_tells_what_a_trace_without_tool_lists_was_offered(tmp_path: Path) -> None:
    # openai-agents records no tool definitions: without the lock, the TODO session's offer is
    # unknown (misses "–") and the greeting's is only the MCP tool it called (read_text_file).
    if not FILESYSTEM.exists():
        pytest.fail(f"{FILESYSTEM} is missing: `make test` installs the reference servers")
    report, _ = _imported(REAL / "openai_agents_mixed.jsonl", _suite(tmp_path / "a"), tmp_path / "a" / "imp")
    assert _arm(report, "fs_agent")["misses"] == {"calls": 0, "trials": 1, "per_trial": 0.0}
    suite = _suite(tmp_path / "b", locked=True)  # the real server lists its tools for the lock
    report, _ = _imported(REAL / "openai_agents_mixed.jsonl", suite, tmp_path / "b" / "imp")
    assert _arm(report, "fs_agent")["misses"] == {"calls": 34, "trials": 2, "per_trial": 17.0}
