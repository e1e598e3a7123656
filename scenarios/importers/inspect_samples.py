"""One Inspect AI sample as one imported trial: its messages, calls, usage, timing, end and scores.

Read from an ``EvalSample`` (``inspect_log.py`` resolves its attachments):

- ``messages``: each ``assistant`` message is a turn (its text parts; ``tool_calls`` with
  ``id``, ``function``, ``arguments``), each ``tool`` message the result of ``tool_call_id``
  (its text; ``error`` makes it an error result). ``system``/``user`` messages are the prompt.
- ``events``: the ``model`` event whose output is an assistant message (by message id, else
  the k-th model event for the k-th message) gives that turn's recorded ``output.usage``
  (``input_tokens``/``output_tokens``) and ``working_time``; a ``tool`` event gives its call's
  ``working_time`` and, when the log records one, the MCP server (its ``metadata``/``view``;
  else the call's server is ``inspect``). What the sample's ``model_usage`` counts beyond the
  turns' events is recorded on the last turn (still recorded, not estimated).
- ``total_time`` is the trial's wall time; ``error.message`` ends the trial in error;
  ``limit.type`` (``token``, ``message``, ``time``, ``working``, ...) is the trial's stop
  (``token_limit``, ...).
- ``scores``: each scorer's ``Score`` (``value``, ``answer``, ``explanation``, ``metadata``) is
  an imported judgment ``inspect:<scorer>`` of source ``inspect:scorer``, kept apart from the
  judges proctor runs. Its ``score`` is the value as a number where Inspect's own rule gives one
  (C/I/P/N, yes/no, true/false, numbers), else None.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from proctor.scenarios.importers.common import (
    ImportedCall,
    ImportedJudgment,
    ImportedResult,
    ImportedTrajectory,
    ImportedTurn,
    ImportFormatError,
)

SCORE_SOURCE = "inspect:scorer"
# The server of a call whose log names none (Inspect 0.3.285 records none, MCP tools included):
# Inspect's tools are not proctor's built-in repository tools, so they must not read as those.
DEFAULT_SERVER = "inspect"
JUDGE_PREFIX = "inspect:"
# Inspect's value_to_float: the letters its scorers use, then yes/no and true/false.
_LETTER_VALUES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
_WORD_VALUES = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}


def content_text(content: Any) -> str:
    """A message's ``content``: a string, or the ``text`` parts of a content list (reasoning,
    images and other parts are not the message's prose)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p["text"]
            for p in content
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        )
    return ""


def prompt_of(sample: dict[str, Any]) -> str:
    """The sample's ``input``: a string, or its user messages' text."""
    raw = sample.get("input")
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list):
        return "\n\n".join(
            content_text(m.get("content")) for m in raw if isinstance(m, dict) and m.get("role") == "user"
        ).strip()
    return ""


def _number(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return int(value)


def _model_and_tool_events(events: Sequence[Any]) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The model events in order, and the tool events by call id: one pass (a sample has many events)."""
    models: list[dict[str, Any]] = []
    tools: dict[str, dict[str, Any]] = {}
    for e in events:
        kind = e.get("event") if type(e) is dict else None
        if kind == "model":
            models.append(e)
        elif kind == "tool":
            tools[str(e.get("id"))] = e
    return models, tools


def _server_of(event: dict[str, Any] | None) -> str:
    """The MCP server an Inspect tool event names (its ``metadata`` or ``view``), else ``inspect``."""
    if not event:
        return DEFAULT_SERVER
    for holder in (event.get("metadata"), event.get("view")):
        if isinstance(holder, dict):
            for key in ("mcp_server", "server", "server_name"):
                if isinstance(holder.get(key), str) and holder[key]:
                    return str(holder[key])
    return DEFAULT_SERVER


def _usage_of(event: dict[str, Any]) -> tuple[int | None, int | None]:
    output = event.get("output") if isinstance(event.get("output"), dict) else {}
    usage = output.get("usage") if isinstance(output, dict) else None
    if not isinstance(usage, dict):
        return None, None
    return _number(usage.get("input_tokens")), _number(usage.get("output_tokens"))


def _total_usage(sample: dict[str, Any]) -> tuple[int | None, int | None]:
    usage = sample.get("model_usage")
    if not isinstance(usage, dict) or not usage:
        return None, None
    ins = sum(_number(u.get("input_tokens")) or 0 for u in usage.values() if isinstance(u, dict))
    outs = sum(_number(u.get("output_tokens")) or 0 for u in usage.values() if isinstance(u, dict))
    return ins, outs


def _call(raw: Any, where: str, tools: dict[str, dict[str, Any]]) -> ImportedCall:
    if not isinstance(raw, dict) or not isinstance(raw.get("function"), str):
        raise ImportFormatError(f"{where}: expected a tool call {{id, function, arguments}}")
    call_id = str(raw.get("id") or "")
    args = raw.get("arguments")
    arguments = args if isinstance(args, dict) else {"_unparsed": str(raw.get("parse_error") or args)}
    return ImportedCall(call_id, _server_of(tools.get(call_id)), raw["function"], arguments)


def _event_of_message(model_events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Model events by the id of the assistant message they produced."""
    out = {}
    for ev in model_events:
        output = ev.get("output")
        choices = output.get("choices") if isinstance(output, dict) else None
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message")
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                out[message["id"]] = ev
    return out


def turns_of(sample: dict[str, Any], where: str) -> tuple[ImportedTurn, ...]:
    """The sample's assistant turns with their calls, results, usage and latencies."""
    messages = sample.get("messages") or []
    if not isinstance(messages, list):
        raise ImportFormatError(f"{where}, field 'messages': expected a list of chat messages")
    raw_events = sample.get("events")
    events: list[Any] = raw_events if isinstance(raw_events, list) else []
    model_events, tools = _model_and_tool_events(events)
    by_message = _event_of_message(model_events)
    assistants = [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]
    in_order = len(model_events) == len(assistants)
    turns: list[tuple[str, list[ImportedCall], list[ImportedResult], dict[str, Any] | None]] = []
    calls_by_id: dict[str, ImportedCall] = {}
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise ImportFormatError(f"{where}, messages[{i}]: expected a message object")
        role = msg.get("role")
        if role == "assistant":
            calls = [
                _call(raw, f"{where}, messages[{i}].tool_calls[{j}]", tools)
                for j, raw in enumerate(msg.get("tool_calls") or [])
            ]
            calls_by_id.update((c.call_id, c) for c in calls)
            event = by_message.get(str(msg.get("id")))
            if event is None and in_order:
                event = model_events[len(turns)]
            turns.append((content_text(msg.get("content")).strip(), calls, [], event))
        elif role == "tool":
            if not turns:
                turns.append(("", [], [], None))
            turns[-1][2].append(_result(msg, calls_by_id, tools))
        elif role not in ("system", "user"):
            raise ImportFormatError(
                f"{where}, messages[{i}], field 'role': {role!r} is not a chat role "
                "(valid: system, user, assistant, tool)"
            )
    return _with_usage(turns, _total_usage(sample))


def _result(
    msg: dict[str, Any], calls_by_id: dict[str, ImportedCall], tools: dict[str, dict[str, Any]]
) -> ImportedResult:
    call_id = str(msg.get("tool_call_id") or "")
    known = calls_by_id.get(call_id)
    error = msg.get("error")
    text = content_text(msg.get("content"))
    if isinstance(error, dict) and not text:
        text = str(error.get("message") or error.get("type") or "error")
    latency = tools.get(call_id, {}).get("working_time")
    return ImportedResult(
        call_id,
        known.server if known else "",
        known.tool if known else str(msg.get("function") or ""),
        text,
        is_error=error is not None,
        latency_s=float(latency) if isinstance(latency, int | float) else 0.0,
    )


def _with_usage(
    turns: list[tuple[str, list[ImportedCall], list[ImportedResult], dict[str, Any] | None]],
    totals: tuple[int | None, int | None],
) -> tuple[ImportedTurn, ...]:
    """Each turn with its model call's usage; what the sample's ``model_usage`` counts beyond
    them (a call whose output a limit discarded, or a log without model events) goes to the
    last turn, so a trial's tokens are the sample's recorded total."""
    out: list[ImportedTurn] = []
    for text, calls, results, event in turns:
        ins, outs = _usage_of(event) if event is not None else (None, None)
        wt = event.get("working_time") if event is not None else None
        latency = float(wt) if isinstance(wt, int | float) else 0.0
        out.append(ImportedTurn(text, tuple(calls), tuple(results), ins, outs, False, latency))
    if out and totals != (None, None):
        seen_in = sum(t.input_tokens or 0 for t in out)
        seen_out = sum(t.output_tokens or 0 for t in out)
        extra_in, extra_out = max(0, (totals[0] or 0) - seen_in), max(0, (totals[1] or 0) - seen_out)
        last = out[-1]
        if extra_in or extra_out or last.input_tokens is None:
            out[-1] = replace(
                last,
                input_tokens=(last.input_tokens or 0) + extra_in,
                output_tokens=(last.output_tokens or 0) + extra_out,
            )
    return tuple(out)


def score_number(value: Any) -> float | None:
    """A score value as Inspect's ``value_to_float`` reads it; None for lists, dicts and text."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        if value in _LETTER_VALUES:
            return _LETTER_VALUES[value]
        if value.lower() in _WORD_VALUES:
            return _WORD_VALUES[value.lower()]
        try:
            return float(value)
        except ValueError:
            return None
    return None


def judgments_of(sample: dict[str, Any]) -> tuple[ImportedJudgment, ...]:
    scores = sample.get("scores")
    if not isinstance(scores, dict):
        return ()
    out = []
    for name, score in scores.items():
        if not isinstance(score, dict):
            continue
        value = score.get("value")
        verdict = {
            "score": score_number(value),
            "value": value,
            "answer": score.get("answer"),
            "explanation": score.get("explanation"),
            "metadata": score.get("metadata"),
            "scorer": name,
        }
        out.append(ImportedJudgment(f"{JUDGE_PREFIX}{name}", SCORE_SOURCE, verdict))
    return tuple(out)


def end_of(sample: dict[str, Any]) -> tuple[str, str]:
    """(error, stop): the sample's error message, and why it ended ("" when it answered)."""
    error = sample.get("error")
    message = ""
    if isinstance(error, dict):
        message = str(error.get("message") or "error")
    elif isinstance(error, str) and error:
        message = error
    limit = sample.get("limit")
    if isinstance(limit, dict) and isinstance(limit.get("type"), str):
        return message, f"{limit['type']}_limit"
    return message, "error" if message else ""


def trajectory_of(
    sample: dict[str, Any], *, scenario: str, arm: str, model: str, origin: str
) -> ImportedTrajectory:
    """The sample as a trial; ``origin`` names the log and the sample in messages."""
    turns = turns_of(sample, origin)
    error, stop = end_of(sample)
    output = sample.get("output") if isinstance(sample.get("output"), dict) else {}
    answered = [t.text for t in turns if t.text and not t.calls]
    final = ""
    choices = output.get("choices") if isinstance(output, dict) else None
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        final = content_text(message.get("content")).strip() if isinstance(message, dict) else ""
    final = final or (answered[-1] if answered else "")
    total = sample.get("total_time")
    epoch = sample.get("epoch")
    return ImportedTrajectory(
        scenario=scenario,
        arm=arm,
        model=model,
        epoch=epoch - 1 if isinstance(epoch, int) and epoch >= 1 else 0,
        turns=turns,
        final_answer=final if not error else "",
        judgments=judgments_of(sample),
        origin=origin,
        wall_s=float(total) if isinstance(total, int | float) else 0.0,
        error=error,
        stop=stop,
    )


__all__ = [
    "DEFAULT_SERVER",
    "JUDGE_PREFIX",
    "SCORE_SOURCE",
    "content_text",
    "end_of",
    "judgments_of",
    "prompt_of",
    "score_number",
    "trajectory_of",
    "turns_of",
]
