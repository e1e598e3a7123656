"""Make the traces of agents that call their own function tools AND an MCP server (see README.md).

Run with any Python 3.11 after ``make test`` installed the reference servers:
``python make_mixed_traces.py [STACK ...]``. It reuses ``make_traces.py``'s venvs under
/tmp/otelgen (pinned versions there), writes a small project folder, starts a fake
OpenAI-compatible endpoint on 127.0.0.1, and runs each stack in its venv. The agent has three
plain function tools of its own (``search_code``, ``read_source``, ``count_lines``) and, as an MCP
server over stdio, the real ``@modelcontextprotocol/server-filesystem`` 2026.8.31 (from
``tests/reference_servers``) on that folder, four of its tools (``SERVED``). A scripted model plays two sessions:

- "Where is the greeting defined in the project?": its own ``search_code`` (a search), the
  server's ``read_text_file`` (MCP), its own ``count_lines`` (neither search nor read), then the
  answer. One MCP call, two of its own.
- "Go through the TODO list of the project item by item.": its own ``search_code`` once, then its
  own ``read_source`` for each of the 32 items in one turn, then the answer. 33 calls of its own,
  none to the MCP server it was given.

Then an agent named ``baseline`` with the same three tools and no MCP server plays both (reading
the greeting's line with its own ``read_source``): the arm the first is compared with.

``versions/STACK.txt`` is the venv's ``pip freeze``. Not imported by the tests.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import make_traces as base  # noqa: E402  (the venvs, the exporter setup, the HTTP reply writer)

ROOT = Path("/tmp/otelgen/project")
FILESYSTEM = HERE.parents[2] / "reference_servers" / "node_modules" / ".bin" / "mcp-server-filesystem"
GREETING, TODOS = (
    "Where is the greeting defined in the project?",
    "Go through the TODO list of the project item by item.",
)
PROMPTS = [GREETING, TODOS]
STACKS = {"pydantic_ai_mixed": "pai", "openai_agents_mixed": "agents"}
MODEL = "gpt-fake"
ITEMS = 32
# The server's tools the agent is given (both stacks filter the server's 14 this way): one for
# each job a miss is counted for, one that is neither, one that writes.
SERVED = frozenset({"search_files", "read_text_file", "list_directory", "write_file"})


def write_project() -> None:
    ROOT.mkdir(parents=True, exist_ok=True)
    (ROOT / "app.py").write_text(
        '"""A tiny app."""\n\nGREETING = "hello"\n\n\ndef greet(name):\n    return f"{GREETING}, {name}"\n'
    )
    (ROOT / "todo.txt").write_text("".join(f"TODO {n}: item number {n}\n" for n in range(1, ITEMS + 1)))


# -- the agent's own tools (plain Python functions) ------------------------------------------


def search_code(pattern: str) -> str:
    """Search the project's files for a text; prints path:line: text."""
    hits = []
    for path in sorted(ROOT.iterdir()):
        for n, line in enumerate(path.read_text().splitlines(), start=1):
            if pattern.lower() in line.lower():
                hits.append(f"{path.name}:{n}: {line}")
    return "\n".join(hits) or "no match"


def read_source(path: str, line: int) -> str:
    """Read one line of a project file."""
    lines = (ROOT / path).read_text().splitlines()
    return lines[line - 1] if 0 < line <= len(lines) else "no such line"


def count_lines(path: str) -> str:
    """Count the lines of a project file."""
    return str(len((ROOT / path).read_text().splitlines()))


# -- the scripted model --------------------------------------------------------------------


def next_step(prompt: str, answered: int, mcp: bool) -> list[tuple[str, dict[str, Any]]] | str:
    """The calls of the next turn, or the answer, after ``answered`` tool results; ``mcp``: the
    agent has the filesystem server (the baseline agent reads the line with its own tool)."""
    if prompt.startswith("Where"):
        read = (
            ("read_text_file", {"path": str(ROOT / "app.py")})
            if mcp
            else ("read_source", {"path": "app.py", "line": 3})
        )
        script: list[list[tuple[str, dict[str, Any]]]] = [
            [("search_code", {"pattern": "greeting"})],
            [read],
            [("count_lines", {"path": "app.py"})],
        ]
        if answered < len(script):
            return script[answered]
        return 'The greeting is defined in `app.py:3` (`GREETING = "hello"`); app.py has 7 lines.'
    if answered == 0:
        return [("search_code", {"pattern": "TODO"})]
    if answered == 1:
        return [("read_source", {"path": "todo.txt", "line": n}) for n in range(1, ITEMS + 1)]
    return f"The TODO list has {ITEMS} items, from `todo.txt:1` to `todo.txt:{ITEMS}`."


def chat_reply(body: dict[str, Any]) -> dict[str, Any]:
    messages = body["messages"]
    prompt = next(m["content"] for m in messages if m.get("role") == "user")
    offered = {t.get("function", {}).get("name") for t in body.get("tools") or []}
    step = next_step(prompt, sum(m.get("role") == "tool" for m in messages), "read_text_file" in offered)
    if isinstance(step, str):
        return {"role": "assistant", "content": step}
    turn = sum(m.get("role") == "assistant" for m in messages)
    calls = [{"id": f"call_{turn}_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
             for i, (name, args) in enumerate(step)]  # fmt: skip
    return {"role": "assistant", "content": "Let me look.", "tool_calls": calls}


class _Model(base._Model):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        message = chat_reply(body)
        usage = {"prompt_tokens": 40 + 10 * len(body["messages"]), "completion_tokens": 9, "total_tokens": 0}
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        reply = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1_760_000_000, "model": body["model"],
                 "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}  # fmt: skip
        self._send(json.dumps(reply), "application/json")


# -- the stacks ----------------------------------------------------------------------------


def run_pydantic_ai_mixed(out: Path, base_url: str) -> None:
    """pydantic-ai (its own instrumentation, version 5): three plain tools next to an MCPToolset."""
    tp = base._providers(out)
    from fastmcp.client import Client
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import Agent
    from pydantic_ai.agent import InstrumentationSettings
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    def model(messages: list[Any], info: Any) -> ModelResponse:
        answered = sum(isinstance(p, ToolReturnPart) for m in messages for p in getattr(m, "parts", []))
        mcp = any(t.name == "read_text_file" for t in info.function_tools)
        step = next_step(str(messages[0].parts[-1].content), answered, mcp)
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        return ModelResponse(parts=[TextPart("Let me look."), *(ToolCallPart(n, a) for n, a in step)])

    settings = InstrumentationSettings(tracer_provider=tp, version=5, include_content=True)

    def agent_named(name: str, toolsets: list[Any]) -> Any:
        agent = Agent(
            FunctionModel(model), toolsets=toolsets, capabilities=[Instrumentation(settings)], name=name
        )
        for tool in (search_code, read_source, count_lines):
            agent.tool_plain(tool)
        return agent

    server = MCPToolset(Client(StdioTransport(str(FILESYSTEM), [str(ROOT)]))).filtered(
        lambda ctx, tool: tool.name in SERVED
    )
    agents = [agent_named("fs_agent", [server]), agent_named("baseline", [])]

    async def main() -> None:
        for agent in agents:
            async with agent:
                for prompt in PROMPTS:
                    await agent.run(prompt)

    asyncio.run(main())
    tp.shutdown()


def run_openai_agents_mixed(out: Path, base_url: str) -> None:
    """openai-agents: three function tools next to MCPServerStdio, traced by OpenLLMetry's agents
    instrumentation."""
    tp = base._providers(out)
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_trace_processors
    from agents.mcp import MCPServerStdio, create_static_tool_filter
    from openai import AsyncOpenAI
    from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    set_trace_processors([])  # nothing to the OpenAI tracing backend
    OpenAIAgentsInstrumentor().instrument(tracer_provider=tp)
    client = AsyncOpenAI(base_url=base_url, api_key="sk-fixture-not-a-key")
    tools = [function_tool(f) for f in (search_code, read_source, count_lines)]

    async def main() -> None:
        params = {"command": str(FILESYSTEM), "args": [str(ROOT)]}
        model = OpenAIChatCompletionsModel(model=MODEL, openai_client=client)
        served = create_static_tool_filter(allowed_tool_names=sorted(SERVED))
        async with MCPServerStdio(params=params, name="fs", tool_filter=served) as server:  # type: ignore[arg-type]
            agent = Agent(name="fs_agent", instructions="Answer from the project's files.", tools=tools,
                          mcp_servers=[server], model=model)  # fmt: skip
            for prompt in PROMPTS:
                await Runner.run(agent, prompt, max_turns=8)
        baseline = Agent(
            name="baseline", instructions="Answer from the project's files.", tools=tools, model=model
        )
        for prompt in PROMPTS:
            await Runner.run(baseline, prompt, max_turns=8)

    asyncio.run(main())
    tp.shutdown()


# -- the driver ----------------------------------------------------------------------------


def drive(stacks: list[str]) -> None:
    if not FILESYSTEM.exists():
        raise SystemExit(
            f"{FILESYSTEM} is missing: run `make test` (or npm ci in tests/reference_servers) first"
        )
    write_project()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    for stack in stacks:
        out = HERE / f"{stack}.jsonl"
        out.unlink(missing_ok=True)
        py = base.VENVS / STACKS[stack] / "bin" / "python"
        if not py.exists():
            raise SystemExit(f"{py} is missing: run make_traces.py first (it makes the venvs)")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_"))}
        env |= {"OPENAI_API_KEY": "sk-fixture-not-a-key", "TRACELOOP_TRACE_CONTENT": "true"}
        subprocess.run(
            [str(py), __file__, "--run", stack, str(out), base_url], check=True, timeout=300, env=env
        )
        versions = subprocess.run(
            [str(py), "-m", "pip", "freeze"], capture_output=True, text=True, check=True
        )
        (HERE / "versions" / f"{stack}.txt").write_text(versions.stdout)
        print(f"{stack}: {out.name}, {out.stat().st_size} bytes")
    httpd.shutdown()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--run"]:
        stack, path, url = sys.argv[2:5]
        globals()[f"run_{stack}"](Path(path), url)
    else:
        drive(sys.argv[1:] or list(STACKS))
