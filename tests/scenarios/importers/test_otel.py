"""OpenTelemetry GenAI traces as imported trials: proctor's own export round trip, traces shaped
like other instrumentations' (the semantic conventions' MCP example, Pydantic AI, OpenLLMetry),
malformed files, redaction, and imported trials scored by ``proctor judge``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from proctor.app.cli import main
from proctor.app.exit_codes import ExitCode
from proctor.engine.runs.imported_runs import save_import
from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.session import run_suite
from proctor.scenarios.demo import SUITE_DIR
from proctor.scenarios.importers.common import ImportFormatError
from proctor.scenarios.importers.otel import read_otel
from proctor.scenarios.loader import load_suite
from proctor.store.events import FinalAnswer, ModelResponse, ToolCall, ToolResult, TrialFinished
from proctor.store.read.reader import StoreReader
from proctor.store.redaction import redact
from proctor.store.scores import ScoreName

T0 = 1_760_000_000_000_000_000  # ns


def run(*argv: str | Path) -> int:
    return main([str(a) for a in argv])


# -- building OTLP/JSON by hand, as an exporter writes it ---------------------------------


def _value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, dict):
        return {"kvlistValue": {"values": [{"key": k, "value": _value(x)} for k, x in v.items()]}}
    if isinstance(v, list):
        return {"arrayValue": {"values": [_value(x) for x in v]}}
    return {"stringValue": v}


def span(
    trace: int,
    sid: int,
    parent: int | None,
    name: str,
    ms: tuple[int, int],
    attrs: dict[str, Any],
    **extra: Any,
) -> dict[str, Any]:
    out = {
        "traceId": f"{trace:032x}",
        "spanId": f"{sid:016x}",
        "name": name,
        "kind": extra.pop("kind", 1),
        "startTimeUnixNano": str(T0 + ms[0] * 1_000_000),
        "endTimeUnixNano": str(T0 + ms[1] * 1_000_000),
        "attributes": [{"key": k, "value": _value(v)} for k, v in attrs.items()],
        **extra,
    }
    return out | ({"parentSpanId": f"{parent:016x}"} if parent else {})


def request(*spans: dict[str, Any]) -> dict[str, Any]:
    resource = {"attributes": [{"key": "service.name", "value": {"stringValue": "agent-under-test"}}]}
    return {
        "resourceSpans": [
            {"resource": resource, "scopeSpans": [{"scope": {"name": "x"}, "spans": list(spans)}]}
        ]
    }


def set_attr(s: dict[str, Any], key: str, value: Any) -> None:
    s["attributes"] = [a for a in s["attributes"] if a["key"] != key] + [{"key": key, "value": _value(value)}]


def write_lines(path: Path, *requests: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in requests))
    return path


def messages(role: str, *parts: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"role": role, "parts": list(parts)}]


def text(content: str) -> dict[str, Any]:
    return {"type": "text", "content": content}


def mcp_example_trace(trace: int, prompt: str, city: str) -> list[dict[str, Any]]:
    """The shape of the MCP semantic conventions' "Tool call" example (semantic-conventions-genai,
    docs/gen-ai/mcp.md, stdio transport): ``invoke_agent`` > ``chat``, an MCP client span
    ``tools/call get-weather`` (execute_tool, structured arguments and result, jsonrpc.request.id,
    mcp.session.id) with the server's own ``tools/call`` span under it, then a second ``chat``;
    the messages as in docs/gen-ai/non-normative/examples-llm-calls.md. Values are made up."""
    asked = {"type": "tool_call", "id": "call_1", "name": "get-weather", "arguments": {"location": city}}
    mcp = {"mcp.method.name": "tools/call", "mcp.session.id": "8267461134f2", "jsonrpc.request.id": "3"}
    result = {"temperature_range": {"high": 75, "low": 60}, "conditions": "sunny"}
    return [
        span(trace, 1, None, "invoke_agent weather-forecast-agent", (0, 900), {
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather-forecast-agent",
            "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4",
        }),
        span(trace, 2, 1, "chat gpt-4", (10, 300), {
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4",
            "gen_ai.usage.input_tokens": 52, "gen_ai.usage.output_tokens": 17,
            "gen_ai.input.messages": json.dumps(messages("user", text(prompt))),
            "gen_ai.output.messages": json.dumps(messages("assistant", asked)),
        }, kind=3),
        span(trace, 3, 1, "tools/call get-weather", (310, 500), mcp | {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get-weather",
            "gen_ai.tool.call.arguments": {"location": city}, "gen_ai.tool.call.result": result,
        }, kind=3),
        span(trace, 4, 3, "tools/call get-weather", (320, 490), mcp | {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get-weather",
        }, kind=2),
        span(trace, 5, 1, "chat gpt-4", (510, 890), {
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4",
            "gen_ai.usage.input_tokens": 90, "gen_ai.usage.output_tokens": 12,
            "gen_ai.output.messages": json.dumps(messages("assistant", text(f"It is sunny in {city}, 60-75°F."))),
        }, kind=3),
    ]  # fmt: skip


def pydantic_ai_trace(trace: int) -> list[dict[str, Any]]:
    """The shape Pydantic AI's instrumentation (version 3) writes, as its tests/test_logfire.py
    snapshots it: ``invoke_agent my_agent`` with usage totals, ``chat test`` spans with
    ``gen_ai.system`` and JSON-text messages, and ``execute_tool my_ret`` (no operation name)
    under a ``running tools`` span, arguments and result as JSON text."""
    call = {"type": "tool_call", "id": "pyd_ai_1", "name": "my_ret", "arguments": {"x": 0}}
    chat = {"gen_ai.operation.name": "chat", "gen_ai.system": "test", "gen_ai.request.model": "test"}
    return [
        span(trace, 1, None, "invoke_agent my_agent", (0, 100), {
            "gen_ai.agent.name": "my_agent", "gen_ai.operation.name": "invoke_agent", "final_result": "The answer is 1.",
            "gen_ai.usage.input_tokens": 103, "gen_ai.usage.output_tokens": 12,
        }),
        span(trace, 2, 1, "chat test", (5, 20), chat | {
            "gen_ai.input.messages": json.dumps(messages("user", text("Hello"))),
            "gen_ai.output.messages": json.dumps(messages("assistant", call)),
            "gen_ai.usage.input_tokens": 51, "gen_ai.usage.output_tokens": 4,
        }),
        span(trace, 3, 1, "running tools", (21, 40), {"tools": ["my_ret"]}),
        span(trace, 4, 3, "execute_tool my_ret", (22, 39), {
            "gen_ai.tool.name": "my_ret", "gen_ai.tool.call.id": "pyd_ai_1",
            "gen_ai.tool.call.arguments": '{"x":0}', "gen_ai.tool.call.result": "1",
        }),
        span(trace, 5, 1, "chat test", (41, 99), chat | {
            "gen_ai.output.messages": json.dumps(messages("assistant", text("The answer is 1."))),
            "gen_ai.usage.input_tokens": 52, "gen_ai.usage.output_tokens": 8,
        }),
    ]  # fmt: skip


def _trials(db: Path) -> dict[tuple[str, str, str, int], dict[str, Any]]:
    out = {}
    with StoreReader(db) as r:
        for t in r.trials():
            ev = [e.event for e in r.trial_events(t.id) if not e.abandoned]
            out[(t.scenario, t.arm, t.model, t.epoch)] = {
                "calls": [(e.call_id, e.server, e.tool, e.arguments) for e in ev if isinstance(e, ToolCall)],
                "results": [(e.call_id, e.content, e.is_error) for e in ev if isinstance(e, ToolResult)],
                "steps": [[c.call_id for c in e.tool_calls] for e in ev if isinstance(e, ModelResponse)],
                "usage": [e.usage for e in ev if isinstance(e, ModelResponse)],
                "final": [e.text for e in ev if isinstance(e, FinalAnswer)],
                "finished": [e for e in ev if isinstance(e, TrialFinished)],
            }
    return out


# -- proctor's own export ------------------------------------------------------------------


def _scores(db: Path) -> dict[tuple[tuple[str, str, int], str], float | None]:
    with StoreReader(db) as r:
        key = {t.id: (t.scenario, t.arm, t.epoch) for t in r.trials()}
        return {(key[s.trial_id], s.name): s.value for s in r.scores()}


def _as_executed(call: tuple[str, str, str, dict[str, Any]]) -> tuple[str, str]:
    """A call through tool retrieval's router (``execute``) as the MCP call it made."""
    _, _, tool, args = call
    if tool == "execute":
        tool, args = args["tool"], args["arguments"]
    return tool, json.dumps(args, sort_keys=True)


def test_proctors_export_of_a_real_run_round_trips_and_is_scored_again(tmp_path: Path) -> None:
    db, traces, out = tmp_path / "run.db", tmp_path / "t.jsonl", tmp_path / "imp"
    arms, scenarios = (
        ["baseline", "codeintel", "codeintel+distractors"],
        ["retry-delay-cap", "backoff-vs-jitter"],
    )
    assert (
        asyncio.run(run_suite(load_suite(SUITE_DIR), RunOptions(db=db, arms=arms, scenarios=scenarios)))
        == "finished"
    )
    assert run("export", db, "--format", "otel", "-o", traces) == ExitCode.OK
    assert run("import", "otel", traces, "-o", out, "--suite", SUITE_DIR) == ExitCode.OK
    original, imported = _trials(db), _trials(out / "imported.db")
    assert original.keys() == imported.keys() and len(original) == 6
    for key, trial in original.items():
        for field in ("results", "steps", "usage", "final"):
            assert imported[key][field] == trial[field], (key, field)
        if (
            key[1] == "codeintel+distractors"
        ):  # the export shows the router's calls as the MCP calls they made
            assert [_as_executed(c) for c in imported[key]["calls"]] == [
                _as_executed(c) for c in trial["calls"]
            ]
        else:
            assert imported[key]["calls"] == trial["calls"], key
        assert imported[key]["finished"][0].usage == trial["finished"][0].usage
        assert imported[key]["finished"][0].wall_s > 0
    assert all(trial["calls"] for trial in imported.values())
    suite = load_suite(out)  # the demo suite, its repository made absolute, and the scenarios used
    assert sorted(s.id for s in suite.scenarios) == sorted(scenarios) and suite.scenarios[0].claims
    assert suite.suite.repo is not None and Path(suite.suite.repo.source or "").is_absolute()

    assert run("judge", out / "imported.db") == ExitCode.OK  # no agent runs: the stored answers are scored
    before, after = _scores(db), _scores(out / "imported.db")
    assert before.keys() == after.keys()
    assert {name for _, name in after} >= {
        ScoreName.GROUNDING,
        ScoreName.CLAIMS,
        ScoreName.TFS,
        ScoreName.PASSED,
    }
    for key, value in before.items():
        if key[1] in (
            ScoreName.EFFICIENCY,
            ScoreName.FAIRNESS,
        ):  # wall time: the root span's, ms off the runner's
            assert after[key] == pytest.approx(value, abs=0.01), key
        else:
            assert after[key] == value, key


def test_without_a_suite_proctor_traces_keep_their_scenario_and_say_the_prompt_is_missing(
    tmp_path: Path,
) -> None:
    traces = write_lines(tmp_path / "t.jsonl", request(
        span(7, 1, None, "invoke_agent mcp", (0, 10), {
            "gen_ai.operation.name": "invoke_agent", "proctor.scenario": "s-1", "proctor.arm": "mcp+x",
            "proctor.model": "offline:default", "proctor.epoch": 1, "proctor.final_answer": "done",
        }),
    ))  # fmt: skip
    imported = read_otel(traces, scrub=redact)
    (t,) = imported.trajectories
    assert (t.scenario, t.arm, t.model, t.epoch, t.final_answer) == (
        "s-1",
        "mcp+x",
        "offline:default",
        0,
        "done",
    )
    assert imported.scenarios[0]["prompt"] == "(the traces record no prompt; proctor scenario s-1)"
    assert (
        "1 scenario(s) have no prompt in the traces; pass --suite to take them from a suite" in imported.notes
    )


# -- other instrumentations ----------------------------------------------------------------


def test_genai_traces_of_other_instrumentations_become_trials(tmp_path: Path) -> None:
    # Two runs of one prompt (epochs of one scenario), a third prompt, spans of a trace split
    # over two lines as a collector's batches do, and a Pydantic AI trace.
    first = mcp_example_trace(0xA1, "What's the weather in Paris?", "Paris")
    traces = write_lines(
        tmp_path / "t.jsonl",
        request(*first[:3]),
        request(*first[3:], *mcp_example_trace(0xA2, "What's the weather in Paris?", "Paris")),
        request(*mcp_example_trace(0xA3, "And in Oslo?", "Oslo")),
        request(*pydantic_ai_trace(0xB1)),
        request(span(0xC1, 1, None, "GET /health", (0, 1), {"http.request.method": "GET"})),
    )
    imported = read_otel(traces, scrub=redact)
    paris, again, oslo, pyd = imported.trajectories
    assert (paris.scenario, again.scenario) == (
        again.scenario,
        paris.scenario,
    ) and paris.scenario != oslo.scenario
    assert paris.scenario.startswith("what-s-the-weather-in-paris-") and (paris.epoch, again.epoch) == (0, 1)
    assert (paris.arm, paris.model) == ("weather-forecast-agent", "openai:gpt-4")
    first_turn, last_turn = paris.turns
    (call,) = first_turn.calls  # the MCP server's own span is the same call, not a second one
    assert (call.call_id, call.server, call.tool, call.arguments) == (
        "call_1",
        "(server unknown)",  # the trace names no server, and there is no suite arm to take it from
        "get-weather",
        {"location": "Paris"},
    )
    (result,) = first_turn.results
    assert json.loads(result.content) == {"temperature_range": {"high": 75, "low": 60}, "conditions": "sunny"}
    assert (result.is_error, result.latency_s) == (False, 0.19)
    assert (first_turn.input_tokens, first_turn.output_tokens, first_turn.tokens_estimated) == (52, 17, False)
    assert last_turn.text == paris.final_answer == "It is sunny in Paris, 60-75°F."
    assert paris.wall_s == 0.9 and not paris.error
    assert {s["id"]: s["prompt"] for s in imported.scenarios}[
        paris.scenario
    ] == "What's the weather in Paris?"

    assert (pyd.arm, pyd.model, pyd.final_answer) == ("my_agent", "test:test", "The answer is 1.")
    assert [(c.tool, c.arguments) for c in pyd.turns[0].calls] == [("my_ret", {"x": 0})]
    assert [r.content for r in pyd.turns[0].results] == ["1"]
    assert sum(t.input_tokens or 0 for t in pyd.turns) == 103  # the chat spans', not the agent's totals too
    assert imported.notes[0] == f"{traces}: 1 trace(s) without GenAI spans were skipped"

    saved = save_import(imported, tmp_path / "out")
    with StoreReader(saved.db or Path()) as r:
        run_config = r.run()
        finished = [
            e.event for t in r.trials() for e in r.trial_events(t.id) if isinstance(e.event, TrialFinished)
        ]
    assert run_config is not None and run_config.config["imported"]["tokens"] == "recorded by the source"
    assert [(f.usage.input_tokens, f.usage.estimated) for f in finished] == [(142, False)] * 3 + [
        (103, False)
    ]


def test_openllmetry_flattened_messages_failed_tools_and_errors(tmp_path: Path) -> None:
    """OpenLLMetry (traceloop/openllmetry) writes messages flattened, as its Anthropic
    instrumentation's tests assert them: an ``anthropic.chat`` span with ``gen_ai.prompt.0.role``/
    ``.content``, ``gen_ai.completion.0.tool_calls.N.id``/``.name``/``.arguments`` and
    ``gen_ai.usage.prompt_tokens``/``completion_tokens``. The tool span is a GenAI ``execute_tool``
    one (OpenLLMetry's own ``traceloop.*`` tool spans: test_otel_real.py)."""
    chat = {
        "llm.request.type": "chat",
        "gen_ai.system": "Anthropic",
        "gen_ai.request.model": "claude-x",
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": "List the repos",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.tool_calls.0.id": "t1",
        "gen_ai.completion.0.tool_calls.0.name": "mcp__github__list_repos",
        "gen_ai.completion.0.tool_calls.0.arguments": '{"org": "acme"',  # cut short: kept as unparsed
        "gen_ai.usage.prompt_tokens": 30,
        "gen_ai.usage.completion_tokens": 5,
    }
    failed = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.call.id": "t1",
        "error.type": "tool_error",
        "gen_ai.tool.call.result": {"content": [{"type": "text", "text": "rate limited"}], "isError": True},
    }
    traces = write_lines(tmp_path / "t.jsonl", request(
        span(0xD1, 1, None, "agent", (0, 50), {}, status={"code": 2, "message": "gave up"}),
        span(0xD1, 2, 1, "anthropic.chat", (1, 10), chat),
        span(0xD1, 3, 1, "execute_tool mcp__github__list_repos", (11, 20), failed),
    ))  # fmt: skip
    (t,) = read_otel(traces, scrub=redact).trajectories
    assert (t.arm, t.model, t.error, t.final_answer) == ("github", "Anthropic:claude-x", "gave up", "")
    (call,) = t.turns[0].calls
    assert (call.server, call.tool, call.arguments) == (
        "github",
        "list_repos",
        {"_unparsed": '{"org": "acme"'},
    )
    assert [(r.content, r.is_error) for r in t.turns[0].results] == [("rate limited", True)]
    assert (t.turns[0].input_tokens, t.turns[0].output_tokens) == (30, 5)


def test_a_trace_matching_a_suite_prompt_is_scored_against_that_scenario(tmp_path: Path) -> None:
    answer = "compute_backoff (tinyq/retry.py:66) computes it; MAX_RETRY_DELAY (tinyq/retry.py:23), 300 seconds, caps it."
    trace = mcp_example_trace(0xE1, load_suite(SUITE_DIR).scenario("retry-delay-cap").prompt or "", "x")
    set_attr(trace[-1], "gen_ai.output.messages", json.dumps(messages("assistant", text(answer))))
    traces = write_lines(tmp_path / "t.jsonl", request(*trace))
    out = tmp_path / "imp"
    assert run("import", "otel", traces, "-o", out, "--suite", SUITE_DIR) == ExitCode.OK
    assert run("judge", out / "imported.db") == ExitCode.OK
    with StoreReader(out / "imported.db") as r:
        (trial,) = r.trials()
        scores = {s.name: s for s in r.scores(trial.id)}
    assert trial.scenario == "retry-delay-cap" and trial.arm == "weather-forecast-agent"
    assert scores[ScoreName.CLAIMS].value is not None and scores[ScoreName.CLAIMS].value > 0
    assert scores[ScoreName.GROUNDING].details["counts"]["grounded"] == 2  # both citations resolve
    assert scores[ScoreName.EFFICIENCY].value is not None  # recorded tokens and wall time


# -- secrets and bad input -----------------------------------------------------------------


def test_api_keys_in_traces_are_redacted_in_the_suite_and_the_database(tmp_path: Path) -> None:
    key, token = "sk-ant-api03-" + "a" * 40, "ghp_" + "b" * 36
    trace = mcp_example_trace(0xF1, f"Use {key} to call the API", "Rome")
    set_attr(trace[2], "gen_ai.tool.call.result", f"token {token}")
    set_attr(trace[2], "gen_ai.tool.call.arguments", {"location": "Rome", "auth": f"Bearer {token}"})
    set_attr(trace[0], "gen_ai.agent.name", f"agent-{token}")
    out = tmp_path / "imp"
    assert run("import", "otel", write_lines(tmp_path / "t.jsonl", request(*trace)), "-o", out) == ExitCode.OK
    written = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    assert key.encode() not in written and token.encode() not in written
    scenario = yaml.safe_load(next((out / "scenarios").glob("*.yaml")).read_text())
    assert scenario["prompt"] == "Use [redacted: anthropic-key] to call the API"
    with StoreReader(out / "imported.db") as r:
        results = [e.event for e in r.trial_events(1) if isinstance(e.event, ToolResult)]
        calls = [e.event for e in r.trial_events(1) if isinstance(e.event, ToolCall)]
        (trial,) = r.trials()
    assert [e.content for e in results] == ["token [redacted: github-token]"]
    assert [c.arguments["auth"] for c in calls] == ["Bearer [redacted: github-token]"]
    assert trial.arm == "agent-[redacted: github-token]"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"resourceSpans": []}\n{"resourceSpans": [}\n',
            "line 2, column 20: not valid JSON (Expecting value); each line must hold one OTLP/JSON "
            "ExportTraceServiceRequest (or the file one whole request)",
        ),
        (
            '{\n  "data": [1,\n}',
            "line 3, column 1: not valid JSON (Expecting value); each line must hold one OTLP/JSON "
            "ExportTraceServiceRequest (or the file one whole request)",
        ),
        (
            '{"traces": [], "spans": []}',
            "line 1: not OTLP/JSON traces (an ExportTraceServiceRequest has 'resourceSpans'; got keys spans, "
            "traces); write traces with an OpenTelemetry collector's file exporter, or `proctor export --format otel`",
        ),
        (
            json.dumps(request(span(1, 1, None, "x", (0, 1), {}) | {"startTimeUnixNano": "soon"})),
            "line 1: not valid OTLP/JSON (Failed to parse resourceSpans field: Failed to parse scopeSpans field: "
            "Failed to parse spans field: Failed to parse startTimeUnixNano field: invalid literal for int() with "
            "base 10: 'soon'); write traces with an OpenTelemetry collector's file exporter, or `proctor export "
            "--format otel`",
        ),
        (
            json.dumps(request(span(1, 1, None, "execute_tool", (0, 1), {"gen_ai.operation.name": "execute_tool"}))),
            "line 1, trace 00000000000000000000000000000001, span 'execute_tool': a tool call "
            "(gen_ai.operation.name execute_tool, or mcp.method.name tools/call) without attribute "
            "'gen_ai.tool.name' nor the tool in its name ('tools/call NAME'); set gen_ai.tool.name to the name "
            "of the tool called",
        ),
        (
            json.dumps(request(span(1, 1, None, "chat m", (0, 1), {
                "gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": "52"}))),
            "line 1, trace 00000000000000000000000000000001, span 'chat m', attribute "
            "'gen_ai.usage.input_tokens': expected a whole number of tokens, got '52'",
        ),
        (
            json.dumps(request(span(1, 1, None, "chat m", (0, 1), {"gen_ai.operation.name": "chat"}))),
            "line 1, trace 00000000000000000000000000000001: records no user prompt (gen_ai.input.messages of its "
            "agent or first chat span, or the chat's log records) and no proctor.scenario; turn on the "
            "instrumentation's message content capture (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, "
            "TRACELOOP_TRACE_CONTENT=true). opentelemetry-instrumentation-openai-v2 (2.3b0) writes message content "
            "to OTLP log records, not span attributes, even with that variable set: export the logs too (a "
            "LoggerProvider with the same file exporter) and pass them with --logs or in the same file. Or pass "
            "--suite and set proctor.scenario on the trace's root span",
        ),
        (
            json.dumps(request(span(1, 1, None, "GET /", (0, 1), {"http.request.method": "GET"}))),
            ": no GenAI traces (no span has gen_ai.operation.name invoke_agent, chat or execute_tool, nor "
            "mcp.method.name tools/call); record the agent with an OpenTelemetry GenAI instrumentation",
        ),
        ("", ": is empty; write traces with an OpenTelemetry collector's file exporter, or `proctor export --format otel`"),
    ],
)  # fmt: skip
def test_bad_input_names_the_file_line_and_field_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    bad = tmp_path / "traces.jsonl"
    bad.write_text(content)
    with pytest.raises(ImportFormatError) as caught:
        read_otel(bad, scrub=redact)
    assert str(caught.value) == f"{bad}{'' if message.startswith(':') else ': '}{message}"
    out = tmp_path / "out"
    assert run("import", "otel", bad, "-o", out) == ExitCode.BAD_INPUT
    assert capsys.readouterr().err == f"proctor import: {caught.value}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["traces.jsonl"]  # staged: nothing half-written
