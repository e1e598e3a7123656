"""Make the OTLP/JSON fixtures of this folder by running real instrumentation (see README.md).

Run with any Python 3.11: ``python make_traces.py [STACK ...]``. It makes one venv per stack
under /tmp/otelgen (pinned versions below), starts a fake OpenAI-compatible endpoint on
127.0.0.1, and runs each stack in its venv: an agent asks the model, the model (scripted here)
calls ``get_current_time`` of ``mcp-server-time`` (a real stdio MCP server, its own venv), then
answers. Two prompts: Paris (the call succeeds) and Mars (the server answers an error); the priced
pydantic-ai run asks only Paris. Spans (and log records, where the stack writes content there) go
through opentelemetry-exporter-otlp-json-file, one ExportTraceServiceRequest (or
ExportLogsServiceRequest) per line; ``versions/STACK.txt`` is the venv's ``pip freeze``. Not
imported by the tests.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VENVS = Path(os.environ.get("OTELGEN_VENVS", "/tmp/otelgen"))  # where the venvs go
OTEL = ["opentelemetry-sdk==1.45.2", "opentelemetry-exporter-otlp-json-file==0.66b1"]
STACKS: dict[str, list[str]] = {
    "server": ["mcp-server-time==2026.10.19"],
    "mcp_sdk": ["mcp==2.3.0", "openai==3.57.0", *OTEL],
    "mcp_sdk_only": ["mcp==2.3.0", "openai==3.57.0", *OTEL],
    "openai_v2": ["mcp==2.3.0", "openai==3.57.0", "opentelemetry-instrumentation-openai-v2==2.3b0", "wrapt==1.17.3", "httpx", *OTEL],
    "openinference": ["mcp==2.3.0", "openai==3.57.0", "openinference-instrumentation-openai==0.1.66",
                      "openinference-instrumentation-mcp==2.0.13", *OTEL],
    "pydantic_ai": ["mcp==2.3.0", "pydantic-ai==2.62.0", "fastmcp-slim==4.2.3", *OTEL],
    "pydantic_ai_priced": ["mcp==2.3.0", "pydantic-ai==2.62.0", "fastmcp-slim==4.2.3", *OTEL],
    "openllmetry": ["mcp==1.30.0", "openai==3.57.0", "opentelemetry-instrumentation-openai==0.62.4",
                    "opentelemetry-instrumentation-mcp==0.62.4", *OTEL],
    "openai_agents": ["openai-agents==0.24.0", "opentelemetry-instrumentation-openai-agents==0.62.4", *OTEL],
}  # fmt: skip
VENV_OF = {"mcp_sdk": "base", "mcp_sdk_only": "base", "openai_v2": "base", "openinference": "oi", "pydantic_ai": "pai",
           "pydantic_ai_priced": "pai", "openllmetry": "ollm", "openai_agents": "agents", "server": "srv"}  # fmt: skip
PROMPTS = ["What time is it in Paris right now?", "What time is it on Mars right now?"]
MODEL = "gpt-fake"


# -- the scripted model, as an OpenAI-compatible endpoint ---------------------------------


def scripted_reply(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """First turn: "Let me check." and a get_current_time call; after the tool: the answer."""
    user = next(m for m in reversed(messages) if m.get("role") == "user")
    prompt = user["content"] if isinstance(user["content"], str) else json.dumps(user["content"])
    tool = [m for m in messages if m.get("role") == "tool"]
    if not tool:
        tz = "Europe/Paris" if "Paris" in prompt else "Mars/Olympus_Mons"
        n = sum(m.get("role") == "user" for m in messages)
        call = {"id": f"call_{tz.split('/')[0].lower()}_{n}", "type": "function",
                "function": {"name": "get_current_time", "arguments": json.dumps({"timezone": tz})}}  # fmt: skip
        return {"role": "assistant", "content": "Let me check.", "tool_calls": [call]}
    content = tool[-1].get("content")
    text = content if isinstance(content, str) else json.dumps(content)
    when = re.search(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})", text)
    if when:
        return {"role": "assistant", "content": f"It is {when[2]} in Paris ({when[1]})."}
    return {"role": "assistant", "content": "I could not tell: the time server does not know Mars."}


class _Model(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        message = scripted_reply(body["messages"])
        usage = {"prompt_tokens": 40 + 10 * len(body["messages"]), "completion_tokens": 9, "total_tokens": 0}
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        reply = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1_760_000_000, "model": body["model"],
                 "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}  # fmt: skip
        if body.get("stream"):
            delta = dict(message)
            if "tool_calls" in delta:
                delta["tool_calls"] = [c | {"index": i} for i, c in enumerate(delta["tool_calls"])]
            chunks = [
                {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]},
                {"choices": [], "usage": usage},
            ]
            data = "".join(
                f"data: {json.dumps(c | {'id': 'c', 'object': 'chat.completion.chunk', 'created': 1, 'model': MODEL})}\n\n"
                for c in chunks
            )
            self._send(data + "data: [DONE]\n\n", "text/event-stream")
        else:
            self._send(json.dumps(reply), "application/json")

    def _send(self, text: str, kind: str) -> None:
        raw = text.encode()
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: Any) -> None:
        pass


# -- the stacks (each runs in its own venv) ------------------------------------------------


def _providers(out: Path) -> Any:
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    tp = TracerProvider(resource=Resource.create({"service.name": "otel-fixture-agent"}))
    tp.add_span_processor(SimpleSpanProcessor(FileSpanExporter(str(out))))
    trace.set_tracer_provider(tp)
    return tp


def _logs(out: Path) -> Any:
    from opentelemetry._logs import set_logger_provider
    from opentelemetry.exporter.otlp.json.file._log_exporter import FileLogExporter
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor

    lp = LoggerProvider()
    lp.add_log_record_processor(SimpleLogRecordProcessor(FileLogExporter(str(out))))
    set_logger_provider(lp)
    return lp


def _server_params() -> tuple[str, list[str]]:
    return str(VENVS / "srv" / "bin" / "mcp-server-time"), ["--local-timezone", "UTC"]


def _tool_specs(tools: Any) -> list[dict[str, Any]]:
    def schema(t: Any) -> Any:
        return getattr(t, "input_schema", None) or getattr(t, "inputSchema", None)

    return [{"type": "function", "function": {"name": t.name, "description": t.description or "",
             "parameters": schema(t)}} for t in tools]  # fmt: skip


async def _chat_loop(prompt: str, call_tool: Any, tools: list[dict[str, Any]], base_url: str) -> str:
    """A hand-written agent loop: the openai SDK for the model, MCP for the tools."""
    from openai import AsyncOpenAI

    oai = AsyncOpenAI(base_url=base_url, api_key="sk-fixture-not-a-key")
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    for _ in range(4):
        reply = await oai.chat.completions.create(model=MODEL, messages=messages, tools=tools)  # type: ignore[arg-type]
        m = reply.choices[0].message
        messages.append(m.model_dump(exclude_none=True))
        if not m.tool_calls:
            return m.content or ""
        for tc in m.tool_calls:
            text, _ = await call_tool(tc.function.name, json.loads(tc.function.arguments))
            messages.append({"role": "tool", "tool_call_id": tc.id, "content": text})
    return ""


async def _mcp2_agent(base_url: str, root_span: bool = False) -> None:
    """Each prompt through the loop; ``root_span``: the app's own ``invoke_agent`` span around it,
    with the prompt and answer as the GenAI conventions write them (nothing else records them)."""
    from mcp import Client, StdioServerParameters
    from opentelemetry import trace

    command, args = _server_params()
    async with Client(StdioServerParameters(command=command, args=args)) as client:
        tools = _tool_specs((await client.list_tools()).tools)

        async def call(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
            r = await client.call_tool(name, arguments)
            return "".join(getattr(c, "text", "") for c in r.content), bool(r.is_error)

        for prompt in PROMPTS:
            if not root_span:
                await _chat_loop(prompt, call, tools, base_url)
                continue
            with trace.get_tracer("time-agent").start_as_current_span("invoke_agent time_agent") as span:
                span.set_attribute("gen_ai.operation.name", "invoke_agent")
                span.set_attribute("gen_ai.agent.name", "time_agent")
                span.set_attribute("gen_ai.request.model", MODEL)
                span.set_attribute("gen_ai.provider.name", "openai")
                said = [{"role": "user", "parts": [{"type": "text", "content": prompt}]}]
                span.set_attribute("gen_ai.input.messages", json.dumps(said))
                answer = await _chat_loop(prompt, call, tools, base_url)
                said = [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
                span.set_attribute("gen_ai.output.messages", json.dumps(said))


async def _mcp1_agent(base_url: str) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command, args = _server_params()
    params = StdioServerParameters(command=command, args=args)
    async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
        await session.initialize()
        tools = _tool_specs((await session.list_tools()).tools)

        async def call(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
            res = await session.call_tool(name, arguments)
            return "".join(getattr(c, "text", "") for c in res.content), bool(res.isError)

        for prompt in PROMPTS:
            await _chat_loop(prompt, call, tools, base_url)


def run_mcp_sdk(out: Path, base_url: str) -> None:
    """(a) A hand-written loop: the mcp SDK's own client spans under the app's agent span."""
    tp = _providers(out)
    asyncio.run(_mcp2_agent(base_url, root_span=True))
    tp.shutdown()


def run_mcp_sdk_only(out: Path, base_url: str) -> None:
    """(a2) No model and no app span: a script calls the tools through the mcp SDK's Client, so the
    file holds only the SDK's own client spans (no prompt anywhere). The server is the reference
    servers' mcp-server-time (tests/reference_servers/.venv-official), the same pinned version."""
    del base_url
    tp = _providers(out)
    asyncio.run(_mcp2_calls())
    tp.shutdown()


async def _mcp2_calls() -> None:
    from mcp import Client, StdioServerParameters

    official = HERE.parents[2] / "reference_servers" / ".venv-official" / "bin" / "mcp-server-time"
    command, args = (str(official), ["--local-timezone", "UTC"]) if official.exists() else _server_params()
    async with Client(StdioServerParameters(command=command, args=args)) as client:
        await client.list_tools()
        for tz in ("Europe/Paris", "Mars/Olympus_Mons"):  # the second is the server's error
            await client.call_tool("get_current_time", {"timezone": tz})
        args = {"source_timezone": "Europe/Paris", "time": "09:30", "target_timezone": "Asia/Tokyo"}
        await client.call_tool("convert_time", args)


def run_openai_v2(out: Path, base_url: str) -> None:
    """(c) opentelemetry-instrumentation-openai-v2 with content capture: content goes to logs."""
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
    tp, lp = _providers(out), _logs(out.with_name(out.stem + ".logs.jsonl"))
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=tp, logger_provider=lp)
    asyncio.run(_mcp2_agent(base_url))
    tp.shutdown()
    lp.shutdown()


def run_openinference(out: Path, base_url: str) -> None:
    """(e) OpenInference's openai and mcp instrumentations."""
    tp = _providers(out)
    from openinference.instrumentation.mcp import MCPInstrumentor
    from openinference.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=tp)
    MCPInstrumentor().instrument(tracer_provider=tp)
    asyncio.run(_mcp2_agent(base_url))
    tp.shutdown()


def run_openllmetry(out: Path, base_url: str) -> None:
    """(d) OpenLLMetry's openai and mcp instrumentations on mcp 1.x, no app root span."""
    tp = _providers(out)
    from opentelemetry.instrumentation.mcp import McpInstrumentor
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=tp)
    McpInstrumentor().instrument(tracer_provider=tp)
    asyncio.run(_mcp1_agent(base_url))
    tp.shutdown()


def run_pydantic_ai(out: Path, base_url: str) -> None:
    """(b) pydantic-ai's own instrumentation (version 5), a FunctionModel, an MCP toolset."""
    tp = _providers(out)
    from fastmcp.client import Client
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import Agent
    from pydantic_ai.agent import InstrumentationSettings
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    def model(messages: list[Any], info: Any) -> ModelResponse:
        returns = [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
        prompt = str(messages[0].parts[-1].content)
        if not returns:
            tz = "Europe/Paris" if "Paris" in prompt else "Mars/Olympus_Mons"
            return ModelResponse(
                parts=[TextPart("Let me check."), ToolCallPart("get_current_time", {"timezone": tz})]
            )
        text = str(returns[-1].content)
        return ModelResponse(parts=[TextPart(scripted_reply([{"role": "user", "content": prompt},
                                                             {"role": "tool", "content": text}])["content"])])  # fmt: skip

    command, args = _server_params()
    server = MCPToolset(Client(StdioTransport(command, args)))
    settings = InstrumentationSettings(tracer_provider=tp, version=5, include_content=True)
    agent = Agent(
        FunctionModel(model), toolsets=[server], capabilities=[Instrumentation(settings)], name="time_agent"
    )

    async def main() -> None:
        async with agent:
            for prompt in PROMPTS:
                await agent.run(prompt)

    asyncio.run(main())
    tp.shutdown()


def run_pydantic_ai_priced(out: Path, base_url: str) -> None:
    """(b2) pydantic-ai with its OpenAI model named gpt-4o (against the fake): it prices the calls
    itself (genai-prices) and records ``operation.cost``."""
    tp = _providers(out)
    from fastmcp.client import Client
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import Agent
    from pydantic_ai.agent import InstrumentationSettings
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    command, args = _server_params()
    server = MCPToolset(Client(StdioTransport(command, args)))
    model = OpenAIChatModel(
        "gpt-4o", provider=OpenAIProvider(base_url=base_url, api_key="sk-fixture-not-a-key")
    )
    settings = InstrumentationSettings(tracer_provider=tp, version=5, include_content=True)
    agent = Agent(model, toolsets=[server], capabilities=[Instrumentation(settings)], name="time_agent")

    async def main() -> None:
        async with agent:
            await agent.run(PROMPTS[0])

    asyncio.run(main())
    tp.shutdown()


def run_openai_agents(out: Path, base_url: str) -> None:
    """(f) openai-agents with MCPServerStdio, traced by OpenLLMetry's agents instrumentation."""
    tp = _providers(out)
    from agents import Agent, OpenAIChatCompletionsModel, Runner, set_trace_processors
    from agents.mcp import MCPServerStdio
    from openai import AsyncOpenAI
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    set_trace_processors([])  # nothing to the OpenAI tracing backend
    OpenAIAgentsInstrumentor().instrument(tracer_provider=tp)
    client = AsyncOpenAI(base_url=base_url, api_key="sk-fixture-not-a-key")
    command, args = _server_params()

    async def main() -> None:
        async with MCPServerStdio(params={"command": command, "args": args}, name="time") as server:
            agent = Agent(name="time_agent", instructions="Answer with the time.", mcp_servers=[server],
                          model=OpenAIChatCompletionsModel(model=MODEL, openai_client=client))  # fmt: skip
            for prompt in PROMPTS:
                await Runner.run(agent, prompt)

    asyncio.run(main())
    tp.shutdown()


# -- the driver ----------------------------------------------------------------------------


def _venv(stack: str) -> Path:
    venv = VENVS / VENV_OF[stack]
    if not (venv / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        wanted = sorted({p for s, v in VENV_OF.items() if v == VENV_OF[stack] for p in STACKS[s]})
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *wanted], check=True, timeout=900)
    return venv


def drive(stacks: list[str]) -> None:
    _venv("server")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    for stack in stacks:
        out = HERE / f"{stack}.jsonl"
        for old in (out, out.with_name(f"{stack}.logs.jsonl")):
            old.unlink(missing_ok=True)
        py = _venv(stack) / "bin" / "python"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_"))}
        env |= {"OPENAI_API_KEY": "sk-fixture-not-a-key", "TRACELOOP_TRACE_CONTENT": "true"}
        subprocess.run(
            [str(py), __file__, "--run", stack, str(out), base_url], check=True, timeout=300, env=env
        )
        versions = subprocess.run(
            [str(py), "-m", "pip", "freeze"], capture_output=True, text=True, check=True
        )
        print(f"{stack}: {out.name}, {out.stat().st_size} bytes")
        (HERE / "versions").mkdir(exist_ok=True)
        (HERE / "versions" / f"{stack}.txt").write_text(versions.stdout)
    httpd.shutdown()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--run"]:
        stack, path, url = sys.argv[2:5]
        globals()[f"run_{stack}"](Path(path), url)
    else:
        drive(sys.argv[1:] or [s for s in STACKS if s != "server"])
