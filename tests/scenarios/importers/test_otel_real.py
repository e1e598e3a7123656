"""``import otel`` on traces made by real instrumentation (``otel_real/``, made by its
``make_traces.py``): an agent asking "What time is it in Paris/on Mars?" calls mcp-server-time's
``get_current_time`` over stdio (the Mars call fails) with a scripted model behind a local
OpenAI-compatible endpoint. Each stack records different things; the trials must come out the same."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from proctor.app.cli import main
from proctor.app.exit_codes import ExitCode
from proctor.engine.judges.base import NOTHING_TO_JUDGE_ON
from proctor.scenarios.importers.common import ImportedTrajectory, ImportFormatError
from proctor.scenarios.importers.otel import read_otel
from proctor.store.redaction import redact

REAL = Path(__file__).parent / "otel_real"
PARIS, MARS = "What time is it in Paris right now?", "What time is it on Mars right now?"
NO_MARS = "I could not tell: the time server does not know Mars."


def trials(name: str, **kw: Path) -> dict[str, ImportedTrajectory]:
    """The file's trials by prompt (Paris, Mars)."""
    imported = read_otel(REAL / f"{name}.jsonl", scrub=redact, **kw)
    prompts = {s["id"]: s["prompt"] for s in imported.scenarios}
    return {prompts[t.scenario]: t for t in imported.trajectories}


def calls(t: ImportedTrajectory) -> list[tuple[str, str, dict[str, object]]]:
    return [(c.server, c.tool, c.arguments) for turn in t.turns for c in turn.calls]


def results(t: ImportedTrajectory) -> list[tuple[str, bool]]:
    return [(r.content[:40], r.is_error) for turn in t.turns for r in turn.results]


def test_mcp_sdk_client_spans_give_the_tool_from_the_span_name() -> None:
    # "MCP send tools/call get_current_time": mcp.method.name and jsonrpc.request.id, no gen_ai.tool.name
    got = trials("mcp_sdk")
    assert set(got) == {PARIS, MARS}
    paris = got[PARIS]
    assert (paris.arm, paris.model) == ("time_agent", "openai:gpt-fake")
    assert calls(paris) == [("(server unknown)", "get_current_time", {})]  # the span records no arguments
    assert paris.final_answer.startswith("It is ") and got[MARS].final_answer == NO_MARS


def test_openai_v2_message_content_is_read_from_its_log_records() -> None:
    got = trials("openai_v2", logs=REAL / "openai_v2.logs.jsonl")
    paris, mars = got[PARIS], got[MARS]
    assert len(got) == 2  # 4 chat traces and 2 MCP call traces: two conversations
    assert calls(paris) == [("(server unknown)", "get_current_time", {"timezone": "Europe/Paris"})]
    assert results(paris)[0][0].startswith('{\n  "timezone": "Europe/Paris"')
    assert results(mars) == [("Error executing tool get_current_time: I", False)]
    assert paris.final_answer.startswith("It is ") and mars.final_answer == NO_MARS
    assert [(t.input_tokens, t.output_tokens) for t in paris.turns] == [(50, 9), (70, 9)]


def test_openai_v2_logs_in_the_same_file_are_read_too(tmp_path: Path) -> None:
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text((REAL / "openai_v2.jsonl").read_text() + (REAL / "openai_v2.logs.jsonl").read_text())
    (t,) = [t for t in read_otel(mixed, scrub=redact).trajectories if "Paris" in t.final_answer]
    assert calls(t) == [("(server unknown)", "get_current_time", {"timezone": "Europe/Paris"})]


def test_openai_v2_without_its_logs_says_where_the_content_went() -> None:
    with pytest.raises(ImportFormatError, match="writes message content to OTLP log records") as caught:
        read_otel(REAL / "openai_v2.jsonl", scrub=redact)
    assert "pass them with --logs or in the same file" in str(caught.value)


def test_openllmetry_chats_without_an_agent_span_are_one_trial_per_conversation() -> None:
    imported = read_otel(REAL / "openllmetry.jsonl", scrub=redact)
    assert len(imported.trajectories) == 2  # not one trial per chat call ("Let me check." as an answer)
    got = trials("openllmetry")
    paris, mars = got[PARIS], got[MARS]
    assert paris.final_answer.startswith("It is ") and mars.final_answer == NO_MARS
    assert [len(t.calls) for t in paris.turns] == [1, 0]
    assert calls(mars) == [("(server unknown)", "get_current_time", {"timezone": "Mars/Olympus_Mons"})]
    assert results(mars) == [("Error executing tool get_current_time: I", True)]  # traceloop's is_error
    assert [x.name for x in paris.tools] == ["get_current_time", "convert_time"]  # gen_ai.tool.definitions
    notes = " | ".join(imported.notes)
    assert "joined into 2 conversation(s)" in notes
    assert "guessed: 2 trace(s) holding only a tool call" in notes  # the mcp tool spans name no conversation


def test_openinference_attributes_give_prompt_model_usage_calls_and_offered_tools() -> None:
    got = trials("openinference")
    paris, mars = got[PARIS], got[MARS]
    assert (paris.arm, paris.model) == ("otel", "openai:gpt-fake")
    assert calls(paris) == [("(server unknown)", "get_current_time", {"timezone": "Europe/Paris"})]
    assert [(t.input_tokens, t.output_tokens) for t in paris.turns] == [(50, 9), (70, 9)]
    assert [x.name for x in paris.tools] == ["get_current_time", "convert_time"]
    assert paris.tools[0].input_schema["required"] == ["timezone"]
    assert paris.final_answer.startswith("It is ") and mars.final_answer == NO_MARS


def test_pydantic_ai_tool_errors_and_offered_tools() -> None:
    got = trials("pydantic_ai")
    paris, mars = got[PARIS], got[MARS]
    assert paris.arm == "time_agent"
    assert calls(mars) == [("(server unknown)", "get_current_time", {"timezone": "Mars/Olympus_Mons"})]
    assert results(mars) == [("Error executing tool get_current_time: I", True)]  # span status ERROR
    assert results(paris)[0] == ('{"timezone":"Europe/Paris","datetime":"2', False)
    assert [x.name for x in paris.tools] == ["get_current_time", "convert_time"]


def test_openai_agents_tool_results_are_the_text_of_their_content_block() -> None:
    got = trials("openai_agents")
    paris = got[PARIS]
    assert calls(paris) == [("(server unknown)", "get_current_time", {"timezone": "Europe/Paris"})]
    assert results(paris)[0][0].startswith('{\n  "timezone": "Europe/Paris"')  # not {"type": "text", ...}
    assert paris.final_answer == ""  # its chat spans record no output: no answer, not a made-up one


def _suite(tmp_path: Path, servers: list[str]) -> Path:
    root = tmp_path / "suite"
    (root / "scenarios").mkdir(parents=True)
    entries = {name: {"command": "mcp-server-time"} for name in servers}
    suite = {"name": "time", "mcpServers": entries, "arms": {"time_agent": {"servers": servers}}}
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    scenario = {"id": "paris", "prompt": PARIS, "gold_tool_calls": [[{"tool": "get_current_time"}]]}
    (root / "scenarios" / "paris.yaml").write_text(yaml.safe_dump(scenario))
    return root


def test_calls_without_a_server_go_to_the_arms_only_server_and_count_as_adoption(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite, out = _suite(tmp_path, ["time"]), tmp_path / "imp"
    got = trials("pydantic_ai", suite=suite)
    assert calls(got[PARIS]) == [("time", "get_current_time", {"timezone": "Europe/Paris"})]
    assert {x.server for x in got[PARIS].tools} == {"time"}
    args = ["import", "otel", REAL / "pydantic_ai.jsonl", "--suite", suite, "-o", out]
    assert main([str(a) for a in args]) == ExitCode.OK
    assert main(["judge", str(out / "imported.db")]) == ExitCode.OK
    judged = capsys.readouterr().out  # gold calls only: the offline judge says why it adds no pass
    assert f"no pass: {NOTHING_TO_JUDGE_ON}; llm_quality –" in judged
    assert main(["report", str(out / "imported.db"), "--format", "md"]) == ExitCode.OK
    report = capsys.readouterr().out
    row = next(line for line in report.splitlines() if line.startswith("| time\\_agent · "))
    cells = [
        c.strip() for c in row.split("|")[1:-1]
    ]  # arm, passed, fairness, adoption, misses, llm quality, ...
    assert re.fullmatch(r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]", cells[3])  # the arm's server's adoption
    assert cells[4] == "0 (0.0/trial)"  # every call went to the server: nothing missed
    assert cells[5] == "–"  # gold calls only: nothing for the offline judge to match
    assert "not attributable" not in report
    assert "| time | get\\_current\\_time | 2 |" in report


def test_a_call_two_of_the_arms_servers_could_serve_is_server_unknown_and_said(tmp_path: Path) -> None:
    imported = read_otel(REAL / "pydantic_ai.jsonl", scrub=redact, suite=_suite(tmp_path, ["time", "clock"]))
    assert {c.server for t in imported.trajectories for turn in t.turns for c in turn.calls} == {
        "(server unknown)"
    }
    assert any("their arm has several" in note for note in imported.notes)


def test_recorded_cost_reaches_the_trial_and_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # pydantic-ai prices its model calls itself (operation.cost on each chat span)
    (paris,) = trials("pydantic_ai_priced").values()
    assert [t.cost_usd for t in paris.turns] == [0.000215, 0.000265]
    out = tmp_path / "imp"
    assert main(["import", "otel", str(REAL / "pydantic_ai_priced.jsonl"), "-o", str(out)]) == ExitCode.OK
    capsys.readouterr()
    assert main(["report", str(out / "imported.db"), "--format", "md"]) == ExitCode.OK
    report = capsys.readouterr().out
    assert "cost recorded by the source" in report and "| $0.0005 |" in report


def test_two_runs_reusing_tool_call_ids_stay_two_runs(tmp_path: Path) -> None:
    # The scripted model gives every run the same call ids ("call_europe_1"), as some providers
    # do: an answer joins the latest chat before it that asked for that id in that conversation.
    both = tmp_path / "both.jsonl"
    both.write_text((REAL / "openinference.jsonl").read_text() + (REAL / "openllmetry.jsonl").read_text())
    imported = read_otel(both, scrub=redact)
    finals = sorted(t.final_answer[:6] for t in imported.trajectories)
    assert finals == ["I coul", "I coul", "It is ", "It is "]
    assert all(len(t.turns) == 2 for t in imported.trajectories)


TIME_SERVER = (
    Path(__file__).resolve().parents[2] / "reference_servers" / ".venv-official" / "bin" / "mcp-server-time"
)


def test_mcp_sdk_client_spans_alone_are_trials_without_a_prompt() -> None:
    # mcp_sdk_only.jsonl: no model and no app span, only "MCP send tools/call NAME" (each its own
    # trace): get_current_time Paris, get_current_time Mars, convert_time. It used to be refused
    # whole ("records no user prompt ... exit 2").
    imported = read_otel(REAL / "mcp_sdk_only.jsonl", scrub=redact)
    prompts = {s["id"]: s["prompt"] for s in imported.scenarios}
    assert prompts == {
        "calls-get_current_time": "(the traces record no prompt: MCP client calls only, get_current_time)",
        "calls-convert_time": "(the traces record no prompt: MCP client calls only, convert_time)",
    }
    got = [(t.scenario, t.epoch, calls(t), results(t), t.final_answer) for t in imported.trajectories]
    assert sorted(got) == [
        ("calls-convert_time", 0, [("(server unknown)", "convert_time", {})], [], ""),
        ("calls-get_current_time", 0, [("(server unknown)", "get_current_time", {})], [], ""),
        ("calls-get_current_time", 1, [("(server unknown)", "get_current_time", {})], [], ""),
    ]  # the spans record no arguments and no results: none is made up
    assert not any(k in s for s in imported.scenarios for k in ("claims", "keywords", "gold_tool_calls"))
    assert any("3 trace(s) hold MCP calls and no prompt" in n and "no verdict" in n for n in imported.notes)


@pytest.mark.slow
@pytest.mark.skipif(not TIME_SERVER.exists(), reason="run `make test`: it installs the reference servers")
def test_mcp_sdk_client_spans_alone_replay_against_the_server_and_feed_drift(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "time"
    (suite / "scenarios").mkdir(parents=True)
    server = {"command": str(TIME_SERVER), "args": ["--local-timezone", "UTC"]}
    (suite / "suite.yaml").write_text(
        yaml.safe_dump(
            {"name": "time", "mcpServers": {"time": server}, "arms": {"time": {"servers": ["time"]}}}
        )
    )
    (suite / "scenarios" / "paris.yaml").write_text(
        "id: paris\nprompt: Time in Paris?\nkeywords: {required: [Paris]}\n"
    )
    out = tmp_path / "imported"
    args = ["import", "otel", str(REAL / "mcp_sdk_only.jsonl"), "--suite", str(suite), "-o", str(out)]
    assert main(args) == ExitCode.OK
    assert "hold MCP calls and no prompt" in capsys.readouterr().err
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    assert main(["replay", str(out / "imported.db"), "--db", str(first)]) == ExitCode.OK
    table = capsys.readouterr().out
    assert re.search(r"│ time\s+│\s+0 │\s+0 │\s+0 │\s+0 │\s+3 │", table), table  # no result recorded: missing
    assert main(["replay", str(first), "--db", str(second)]) == ExitCode.OK
    assert re.search(
        r"│ time\s+│\s+3 │\s+0 │\s+0 │\s+0 │", capsys.readouterr().out
    )  # the server answered the same
    assert main(["gate", str(second), "--max-changed", "0"]) == ExitCode.OK
