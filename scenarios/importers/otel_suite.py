"""The suite OpenTelemetry traces become: scenarios from their prompts (or a given suite's),
and the notes and hints the import prints."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from proctor.scenarios.importers.common import scenario_id
from proctor.scenarios.loader import LoadedSuite
from proctor.scenarios.schema import RepoSpec


def _absolute(repo: RepoSpec, root: Path) -> dict[str, Any]:
    data = repo.model_dump(exclude_none=True)
    return data | {k: str((root / data[k]).resolve()) for k in ("path", "source") if k in data}


def from_suite(loaded: LoadedSuite, sid: str | None, path: Path) -> dict[str, Any]:
    """A scenario of the suite (or, without ``sid``, the suite itself), relative paths made absolute."""
    model = loaded.suite if sid is None else loaded.scenario(sid)
    data = model.model_dump(mode="json", by_alias=True, exclude_defaults=True, exclude={"anchors_lock"})
    if model.repo is not None:
        data["repo"] = _absolute(model.repo, loaded.root)
    if sid is None:
        data["description"] = f"OpenTelemetry traces ({path.name}) scored against the suite {loaded.root}."
        if loaded.suite.servers_file:
            data["servers_file"] = str((loaded.root / loaded.suite.servers_file).resolve())
    return data


def bare_suite(path: Path) -> dict[str, Any]:
    description = f"Imported from OpenTelemetry traces ({path.name}); scenarios are their prompts."
    arms = {"baseline": {"baseline": True, "description": "no MCP servers"}}
    return {"name": scenario_id(f"otel-{path.stem}"), "description": description, "arms": arms}


def prompt_id(prompt: str) -> str:
    words = scenario_id(" ".join(prompt.lower().split()[:6]))[:48].strip("-.")
    return f"{words or 'prompt'}-{hashlib.sha256(prompt.encode()).hexdigest()[:8]}"


def import_notes(path: Path, suite: Path | None, counts: dict[str, int], unreadable: list[str]) -> list[str]:
    texts = {
        "skipped": f"{path}: {{}} trace(s) without GenAI spans were skipped",
        "no_prompt": "{} scenario(s) have no prompt in the traces; pass --suite to take them from a suite",
        "unmatched": f"{{}} trace(s) match no scenario of {suite} by id or prompt: imported without checks",
    }
    notes = [texts[k].format(n) for k, n in counts.items() if n]
    if unreadable:
        notes.append(
            f"{len(unreadable)} message attribute(s) are not JSON lists of messages (cut by a length limit?) and "
            f"were left out, the first: {unreadable[0]}"
        )
    return notes


def no_prompt_hint(origin: str, logged: bool) -> str:
    logs = (
        ""
        if logged
        else " opentelemetry-instrumentation-openai-v2 (2.3b0) writes message content to OTLP log records, not "
        "span attributes, even with that variable set: export the logs too (a LoggerProvider with the same "
        "file exporter) and pass them with --logs or in the same file."
    )
    return (
        f"{origin}: records no user prompt (gen_ai.input.messages of its agent or first chat span, or the "
        "chat's log records) and no proctor.scenario; turn on the instrumentation's message content capture "
        f"(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, TRACELOOP_TRACE_CONTENT=true).{logs} Or "
        "pass --suite and set proctor.scenario on the trace's root span"
    )


__all__ = ["bare_suite", "from_suite", "import_notes", "no_prompt_hint", "prompt_id"]
