"""Cut the recorded model API traffic the provider tests replay out of public test suites.

    .venv/bin/python tests/fakes/cassettes/extract.py MIRRORS_DIR

``MIRRORS_DIR`` holds bare git clones named ``OWNER+NAME/repo`` (what the ``fetch`` tool gives:
pydantic/pydantic-ai, vercel/ai, simonw/llm-anthropic). Each excerpt is read at the commit
named below and written as ``NAME.json``: where it came from, its licence, the request as
recorded (when the recording kept it) and the response as the server sent it (SSE frames, or
a JSON body). Nothing is edited except where ``derived`` says so, in words, in the file itself.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

OUT = Path(__file__).parent
PYDANTIC_AI = ("pydantic/pydantic-ai", "4fda38988f2939fa6ea9cdefcf120693e10ef491", "MIT")
VERCEL_AI = ("vercel/ai", "ed857f50f112e23930b0c2dd8d532cc8bebbc911", "Apache-2.0")
LLM_ANTHROPIC = ("simonw/llm-anthropic", "3ae428f3b5143cc81da25af0271d8fa55bda3f05", "Apache-2.0")
PAI = "tests/models/cassettes"
OPAQUE_MAX = 120  # encrypted search results are opaque: cut, as 'derived' says


def read(mirrors: Path, source: tuple[str, str, str], path: str) -> str:
    repo = mirrors / source[0].replace("/", "+") / "repo"
    return subprocess.run(
        ["git", "--git-dir", str(repo), "show", f"{source[1]}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def sse_frames(body: str) -> list[str]:
    """A recorded event-stream body as its frames, each ending in a blank line."""
    return [frame.strip("\n") + "\n\n" for frame in re.split(r"\n\n+", body) if frame.strip()]


def frames_of_json_lines(text: str, *, named: bool) -> list[str]:
    """vercel/ai's ``.chunks.txt``: one event's JSON per line (the ``data:`` of each frame)."""
    frames = []
    for line in text.splitlines():
        if line.strip():
            event = f"event: {json.loads(line)['type']}\n" if named else ""
            frames.append(f"{event}data: {line}\n\n")
    return frames


def cassette(mirrors: Path, path: str, source: tuple[str, str, str] = PYDANTIC_AI) -> list[dict[str, Any]]:
    interactions: list[dict[str, Any]] = yaml.safe_load(read(mirrors, source, path))["interactions"]
    return interactions


def request_of(interaction: dict[str, Any]) -> Any:
    request = interaction["request"]
    if "parsed_body" in request:
        return request["parsed_body"]
    return json.loads(request["body"]) if request.get("body") else None


def response_of(interaction: dict[str, Any]) -> dict[str, Any]:
    response = interaction["response"]
    status = response.get("status", {}).get("code", 200)
    body = response.get("body", {}).get("string") if response.get("body") else None
    if body is not None and "data:" in body:
        return {"status": status, "sse": sse_frames(body)}
    return {"status": status, "json": response.get("parsed_body") or json.loads(body or "null")}


def cut_opaque(frames: list[str]) -> list[str]:
    def cut(match: re.Match[str]) -> str:
        return f'"{match.group(1)}":"{match.group(2)[:OPAQUE_MAX]}…"'

    return [
        re.sub(rf'"(encrypted_content|encrypted_index)":"([^"]{{{OPAQUE_MAX},}})"', cut, f) for f in frames
    ]


def cut_opaque_values(value: Any) -> Any:
    """The same cut inside a recorded request (it sends the search results back)."""
    if isinstance(value, dict):
        return {
            k: (
                v[:OPAQUE_MAX] + "…"
                if k in ("encrypted_content", "encrypted_index")
                and isinstance(v, str)
                and len(v) > OPAQUE_MAX
                else cut_opaque_values(v)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [cut_opaque_values(v) for v in value]
    return value


def excerpt(
    source: tuple[str, str, str], path: str, turns: list[dict[str, Any]], derived: str = ""
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "source": {"repo": source[0], "commit": source[1], "path": path, "license": source[2]}
    }
    if derived:
        out["derived"] = derived
    out["turns"] = turns
    return out


def build(mirrors: Path) -> dict[str, dict[str, Any]]:
    made: dict[str, dict[str, Any]] = {}

    path = f"{PAI}/test_anthropic/test_pause_turn_web_search_streaming_vcr.yaml"
    turns = []
    for it in cassette(mirrors, path):
        response = response_of(it)
        response["sse"] = cut_opaque(response["sse"])
        turns.append({"request": cut_opaque_values(request_of(it)), "response": response})
    made["anthropic_pause_turn_web_search"] = excerpt(
        PYDANTIC_AI, path, turns, f"encrypted_content/encrypted_index values cut to {OPAQUE_MAX} characters"
    )

    path = f"{PAI}/test_anthropic/test_anthropic_model_thinking_part_stream.yaml"
    (it,) = cassette(mirrors, path)
    made["anthropic_thinking_stream"] = excerpt(
        PYDANTIC_AI, path, [{"request": request_of(it), "response": response_of(it)}]
    )

    path = "packages/anthropic/src/__fixtures__/anthropic-refusal.chunks.txt"
    frames = frames_of_json_lines(read(mirrors, VERCEL_AI, path), named=True)
    made["anthropic_refusal"] = excerpt(
        VERCEL_AI,
        path,
        [{"request": None, "response": {"status": 200, "sse": frames}}],
        "each line framed as 'event: TYPE' + 'data: LINE', as the Messages API streams it",
    )

    path = "tests/cassettes/test_anthropic/test_prompt.yaml"
    (it,) = cassette(mirrors, path, LLM_ANTHROPIC)
    response = response_of(it)
    response["sse"] = [
        f.replace('"stop_reason":"end_turn"', '"stop_reason":"max_tokens"') for f in response["sse"]
    ]
    made["anthropic_max_tokens"] = excerpt(
        LLM_ANTHROPIC,
        path,
        [{"request": request_of(it), "response": response}],
        "stop_reason end_turn replaced by max_tokens (a documented stop reason no public recording "
        "found holds), everything else as recorded",
    )

    path = f"{PAI}/test_openrouter/test_openrouter_stream_error.yaml"
    (it,) = cassette(mirrors, path)
    made["openrouter_length_stop"] = excerpt(
        PYDANTIC_AI, path, [{"request": request_of(it), "response": response_of(it)}]
    )

    path = f"{PAI}/test_openrouter/test_openrouter_streaming_reasoning.yaml"
    (it,) = cassette(mirrors, path)
    response = response_of(it)
    response["sse"] = [f.replace('"finish_reason":"stop"', '"finish_reason":null') for f in response["sse"]]
    made["openrouter_no_finish_reason"] = excerpt(
        PYDANTIC_AI,
        path,
        [{"request": request_of(it), "response": response}],
        "finish_reason 'stop' replaced by null: the stream kimi-k2 through OpenRouter sends "
        "(OpenRouterTeam/ai-sdk-provider#420); everything else as recorded",
    )

    path = "packages/openai-compatible/src/chat/__fixtures__/xai-tool-call.chunks.txt"
    frames = [*frames_of_json_lines(read(mirrors, VERCEL_AI, path), named=False), "data: [DONE]\n\n"]
    made["xai_reasoning_tool_call"] = excerpt(
        VERCEL_AI,
        path,
        [{"request": None, "response": {"status": 200, "sse": frames}}],
        "each line framed as 'data: LINE', and the stream closed with 'data: [DONE]'",
    )

    path = "packages/deepseek/src/chat/__fixtures__/deepseek-tool-call.chunks.txt"
    frames = [*frames_of_json_lines(read(mirrors, VERCEL_AI, path), named=False), "data: [DONE]\n\n"]
    made["deepseek_reasoner_tool_call"] = excerpt(
        VERCEL_AI,
        path,
        [{"request": None, "response": {"status": 200, "sse": frames}}],
        "each line framed as 'data: LINE', and the stream closed with 'data: [DONE]'",
    )

    path = f"{PAI}/test_groq/test_groq_model_thinking_part.yaml"
    it = cassette(mirrors, path)[0]
    made["groq_think_in_content"] = excerpt(
        PYDANTIC_AI, path, [{"request": request_of(it), "response": response_of(it)}]
    )

    path = f"{PAI}/test_openai_responses/test_openai_responses_stream.yaml"
    turns = [{"request": request_of(it), "response": response_of(it)} for it in cassette(mirrors, path)]
    made["responses_function_call_stream"] = excerpt(PYDANTIC_AI, path, turns)

    path = "packages/openai/src/responses/__fixtures__/openai-reasoning-encrypted-content.1.chunks.txt"
    lines = read(mirrors, VERCEL_AI, path).splitlines()
    starts = [i for i, line in enumerate(lines) if '"type":"response.created"' in line] + [len(lines)]
    turns = []
    for a, b in itertools.pairwise(starts):
        frames = cut_opaque(frames_of_json_lines("\n".join(lines[a:b]), named=True))
        turns.append({"request": None, "response": {"status": 200, "sse": frames}})
    made["responses_reasoning_function_call"] = excerpt(
        VERCEL_AI,
        path,
        turns,
        "split into one stream per response.created; each line framed as 'event: TYPE' + 'data: LINE'; "
        f"encrypted_content cut to {OPAQUE_MAX} characters",
    )
    return made


if __name__ == "__main__":
    for name, data in build(Path(sys.argv[1])).items():
        (OUT / f"{name}.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
        print(name, sum(len(t["response"].get("sse", [])) for t in data["turns"]), "frames")
