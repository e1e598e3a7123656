"""The requests the real model APIs refuse, as the wire fakes refuse them: 400 with the API's text.

Written from the providers' documentation and from 400s recorded in public issues, independently
of proctor's own checks (engine/providers/model_rules.py, tool_rules.py), so a test against a fake
fails the way a run with a real key fails. Each rule names where it is documented or recorded.
"""

from __future__ import annotations

import re
from typing import Any

from tests.fakes.http_fake import JsonReply

# https://platform.claude.com/docs/en/about-claude/models/migration-guide ("Migrating to Claude
# Opus 4.7": temperature, top_p and top_k removed); the 400 text as recorded in
# sipeed/picoclaw#2939 and Comfy-Org/ComfyUI#13923.
ANTHROPIC_NO_SAMPLING = re.compile(r"claude-(fable-5|mythos-5|opus-4-[78]|opus-5|sonnet-5)")
# https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use: "name ... Must
# match the regex ^[a-zA-Z0-9_-]{1,64}$"; OpenAI's function name: "a-z, A-Z, 0-9, or contain
# underscores and dashes, with a maximum length of 64"
# (https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools).
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
# https://platform.openai.com/docs/guides/reasoning: reasoning models (gpt-5, o-series) take
# max_completion_tokens, and only the default temperature; the 400 texts as recorded in
# vercel/ai packages/openai/src/chat/__fixtures__/reasoning-model-legacy-parameter-error.json and
# getquicker.net topic 35659.
OPENAI_REASONING = re.compile(r"^(gpt-5(?![.\d]*-chat)|o\d)")
# Each -pro model's page at https://platform.openai.com/docs/models: "available in the Responses API
# only"; Chat Completions answers 404 as recorded in continuedev/continue#8326 and
# egoist/chatwise-releases#1122.
OPENAI_RESPONSES_ONLY = re.compile(r"^(gpt-5[.\d]*|o\d+)-pro\b")
# Recorded 400 (getsentry/sentry-mcp#106, microsoft/genaiscript#1381): descriptions over 1,024.
OPENAI_DESCRIPTION_MAX = 1024
# https://api-docs.deepseek.com/guides/thinking_mode#tool-calls: reasoning_content of a turn that
# called tools must be passed back; the 400 text as recorded in abhigyanpatwari/GitNexus#43.
DEEPSEEK_THINKING = re.compile(r"^deepseek-(reasoner|v4)")


def anthropic_error(message: str) -> JsonReply:
    return JsonReply(400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}})


def openai_error(message: str, param: str | None, code: str | None) -> JsonReply:
    return JsonReply(
        400, {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}
    )


def anthropic_refusal(body: dict[str, Any]) -> JsonReply | None:
    """The 400 the Messages API answers ``body`` with, or None when it accepts it."""
    model = str(body.get("model", ""))
    if ANTHROPIC_NO_SAMPLING.match(model):
        for name in ("temperature", "top_p", "top_k"):
            if name in body:
                return anthropic_error(f"`{name}` is deprecated for this model.")
    for i, tool in enumerate(body.get("tools") or []):
        if not TOOL_NAME.match(str(tool.get("name", ""))):
            return anthropic_error(
                f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            )
        schema = tool.get("input_schema") or {}
        if any(k in schema for k in ("anyOf", "oneOf", "allOf")):
            return anthropic_error(
                f"tools.{i}.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level"
            )
    return None


def openai_refusal(body: dict[str, Any]) -> JsonReply | None:
    """The 400 Chat Completions answers ``body`` with, or None when it accepts it."""
    model = str(body.get("model", "")).rsplit("/", 1)[-1]
    if OPENAI_RESPONSES_ONLY.match(model):
        return JsonReply(
            404,
            {
                "error": {
                    "message": "This model is only supported in v1/responses and not in v1/chat/completions.",
                    "type": "invalid_request_error",
                    "param": "model",
                    "code": None,
                }
            },
        )
    if OPENAI_REASONING.match(model):
        if "max_tokens" in body:
            return openai_error(
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
                "max_tokens",
                "unsupported_parameter",
            )
        temperature = body.get("temperature")
        if temperature is not None and temperature != 1:
            return openai_error(
                f"Unsupported value: 'temperature' does not support {temperature!r} with this model. "
                "Only the default (1) value is supported.",
                "temperature",
                "unsupported_value",
            )
    for i, tool in enumerate(body.get("tools") or []):
        function = tool.get("function") or {}
        name = str(function.get("name", ""))
        where = f"tools[{i}].function"
        if len(name) > 64:
            return openai_error(
                f"Invalid '{where}.name': string too long. Expected a string with maximum length 64, "
                f"but got a string with length {len(name)} instead.",
                f"{where}.name",
                "string_above_max_length",
            )
        if not TOOL_NAME.match(name):
            return openai_error(
                f"Invalid '{where}.name': string does not match pattern. Expected a string that matches "
                "the pattern '^[a-zA-Z0-9_-]+$'.",
                f"{where}.name",
                "invalid_value",
            )
        description = str(function.get("description", ""))
        if len(description) > OPENAI_DESCRIPTION_MAX:
            return openai_error(
                f"Invalid '{where}.description': string too long. Expected a string with maximum length "
                f"{OPENAI_DESCRIPTION_MAX}, but got a string with length {len(description)} instead.",
                f"{where}.description",
                "string_above_max_length",
            )
    if DEEPSEEK_THINKING.match(model):
        for i, message in enumerate(body.get("messages") or []):
            if (
                message.get("role") == "assistant"
                and message.get("tool_calls")
                and not message.get("reasoning_content")
            ):
                return openai_error(
                    f"Missing `reasoning_content` field in the assistant message at message index {i}. For "
                    "more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
                    None,
                    "invalid_request_error",
                )
    return None


def responses_refusal(body: dict[str, Any]) -> JsonReply | None:
    """The 400 the Responses API answers ``body`` with, or None when it accepts it."""
    model = str(body.get("model", "")).rsplit("/", 1)[-1]
    if OPENAI_REASONING.match(model) and "temperature" in body:
        # vercel/ai packages/openai/src/responses/__fixtures__/reasoning-model-temperature-error.json
        return openai_error(
            "Unsupported parameter: 'temperature' is not supported with this model.", "temperature", None
        )
    return None
