"""One proctor trial as one Inspect AI ``EvalSample`` (plain JSON, no ``inspect_ai`` import).

The messages are Inspect's chat types: the scenario's prompt as a ``user`` message, each model
response as an ``assistant`` message (``tool_calls``: ``id``, ``function``, ``arguments``,
``type: function``), each tool result as a ``tool`` message (``tool_call_id``, ``function``,
``error`` when the call failed). proctor's scores become Inspect scores under their own names
(``fairness``, ``grounding``, ...; value the score, details in ``metadata``), each judge's
latest verdict a score ``judge:NAME``, and a score imported from Inspect (source
``inspect:scorer``) goes back under its scorer's name with its value, answer and explanation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from proctor.store.events import ModelResponse, ToolResult, TrialFinished
from proctor.store.records import JudgmentRecord, ScoreRecord, StoredEvent, TrialRecord

INSPECT_SCORE_SOURCE = "inspect:scorer"  # as scenarios/importers/inspect_samples.py writes it
# EvalSampleLimit.type values (inspect_ai 0.3.285) a trial's stop may name as ``<type>_limit``.
LIMIT_TYPES = frozenset({"context", "time", "working", "message", "token", "turn", "cost"})


def _assistant(ev: ModelResponse) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": ev.text,
        "source": "generate",
        "model": ev.model,
    }
    if ev.tool_calls:
        message["tool_calls"] = [
            {"id": c.call_id, "function": c.name, "arguments": c.arguments, "type": "function"}
            for c in ev.tool_calls
        ]
    return message


def _tool(ev: ToolResult) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "tool",
        "content": ev.content,
        "tool_call_id": ev.call_id,
        "function": ev.tool,
    }
    if ev.is_error:
        message["error"] = {"type": "unknown", "message": ev.content or ev.error_type or "error"}
    return message


def messages_of(prompt: str, events: Sequence[StoredEvent]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt, "source": "input"}]
    for stored in events:
        ev = stored.event
        if isinstance(ev, ModelResponse):
            messages.append(_assistant(ev))
        elif isinstance(ev, ToolResult):
            messages.append(_tool(ev))
    return messages


def _score_value(value: float | None) -> float | str:
    return "N" if value is None else value  # Inspect's NOANSWER: a score with no value


def scores_of(
    scores: Sequence[ScoreRecord], judgments: Sequence[JudgmentRecord]
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for s in scores:
        out[str(s.name)] = {
            "value": _score_value(s.value),
            "metadata": {"proctor_score": str(s.name), **s.details},
        }
    latest: dict[str, JudgmentRecord] = {}
    for j in judgments:
        if j.verdict is not None and (j.judge not in latest or j.pass_no >= latest[j.judge].pass_no):
            latest[j.judge] = j
    for j in latest.values():
        verdict = j.verdict or {}
        if j.source == INSPECT_SCORE_SOURCE and isinstance(verdict.get("scorer"), str):
            score = {
                "value": verdict.get("value") if verdict.get("value") is not None else "N",
                "answer": verdict.get("answer"),
                "explanation": verdict.get("explanation"),
                "metadata": verdict.get("metadata"),
            }
            out[verdict["scorer"]] = {k: v for k, v in score.items() if v is not None}
            continue
        number = verdict.get("score")
        value = float(number) if isinstance(number, int | float) and not isinstance(number, bool) else None
        out[f"judge:{j.judge}"] = {
            "value": _score_value(value),
            "explanation": str(verdict.get("rationale") or ""),
            "metadata": {"source": j.source, "pass_no": j.pass_no, "verdict": verdict},
        }
    return out


def usage_of(trial: TrialRecord) -> dict[str, dict[str, int]]:
    ins, outs = trial.input_tokens or 0, trial.output_tokens or 0
    read, write = trial.cache_read_tokens or 0, trial.cache_write_tokens or 0
    usage = {"input_tokens": ins, "output_tokens": outs, "total_tokens": ins + outs + read + write}
    if read:
        usage["input_tokens_cache_read"] = read
    if write:
        usage["input_tokens_cache_write"] = write
    return {trial.model: usage}


def sample_of(
    trial: TrialRecord,
    sample_id: str,
    prompt: str,
    target: str | list[str],
    events: Sequence[StoredEvent],
    scores: Sequence[ScoreRecord],
    judgments: Sequence[JudgmentRecord],
) -> dict[str, Any]:
    """The trial as an ``EvalSample``; proctor's identity of the trial is in ``metadata.proctor``."""
    messages = messages_of(prompt, events)
    finished = next((e.event for e in events if isinstance(e.event, TrialFinished)), None)
    answers = [m for m in messages if m["role"] == "assistant"]
    final = trial.final_answer or (answers[-1]["content"] if answers else "")
    usage = usage_of(trial)
    choice_message = answers[-1] if answers else {"role": "assistant", "content": final, "source": "generate"}
    sample: dict[str, Any] = {
        "id": sample_id,
        "epoch": trial.epoch + 1,
        "input": prompt,
        "target": target,
        "messages": messages,
        "output": {
            "model": trial.model,
            "choices": [{"message": choice_message, "stop_reason": "stop"}],
            "completion": final,
            "usage": usage[trial.model],
        },
        "scores": scores_of(scores, judgments),
        "metadata": {
            "proctor": {
                "trial_id": trial.id,
                "scenario": trial.scenario,
                "arm": trial.arm,
                "model": trial.model,
                "epoch": trial.epoch,
                "status": trial.status,
                "stop": trial.stop,
                "tokens_estimated": trial.tokens_estimated,
                "cost_usd": trial.cost_usd,
            }
        },
        "model_usage": usage,
        "total_time": trial.wall_s or 0.0,
        "working_time": trial.wall_s or 0.0,
        "events": [],
        "attachments": {},
    }
    error = trial.error or (finished.error if finished else "")
    if trial.status == "error" or error:
        sample["error"] = {"message": error or "error", "traceback": "", "traceback_ansi": ""}
    stop = trial.stop or ""
    if stop.endswith("_limit") and stop.removesuffix("_limit") in LIMIT_TYPES:
        sample["limit"] = {
            "type": stop.removesuffix("_limit"),
            "limit": 0.0,
            "reason": f"proctor stop: {stop}",
        }
    return sample


def summary_of(sample: dict[str, Any]) -> dict[str, Any]:
    """The sample's entry in ``summaries.json`` (what Inspect View lists before opening one)."""
    keys = (
        "id",
        "epoch",
        "input",
        "target",
        "metadata",
        "scores",
        "model_usage",
        "total_time",
        "working_time",
    )
    summary = {k: sample[k] for k in keys}
    summary["error"] = sample["error"]["message"] if "error" in sample else None
    summary["limit"] = sample["limit"]["type"] if "limit" in sample else None
    summary["completed"] = True
    summary["message_count"] = len(sample["messages"])
    return summary


__all__ = ["INSPECT_SCORE_SOURCE", "messages_of", "sample_of", "scores_of", "summary_of", "usage_of"]
