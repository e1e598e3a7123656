"""Import LiveMCPBench (ICIP-CAS, Apache-2.0) tasks, tool catalogue and labelled trajectories.

Three kinds of JSON file, each a list of objects, recognised by their fields (so a folder can
be given and each top-level ``*.json`` in it is sorted out; ``--tools``/``--trajectories`` name
files explicitly):

* tasks (``annotated_data/all_annotations.json``): ``task_id``, ``Question``, ``category``,
  ``answers``, ``file_name``, ``Annotator Metadata.Steps`` (numbered lines: the key points).
* catalogue (``tools/LiveMCPTool/tools.json``): ``name``, ``description``,
  ``config.mcpServers`` (Claude Desktop style). Every server becomes an ``mcpServers`` entry
  (its catalogue description helps tool retrieval) and one arm, ``livemcptool``, holds them all
  behind top-k tool retrieval, as LiveMCPBench's agent sees them.
* trajectories (``baseline/annotation/<model>_<embedding>.json`` with evaluator verdicts
  merged in): the task fields plus ``messages`` (OpenAI chat format), ``response``,
  ``human_task_success`` (``success``/``failure``), ``judge_verdicts`` (``{judge: {reward,
  judge, judge_reason}}``), optionally ``model``. Each becomes a trial of arm ``livemcptool``
  and model ``imported:<model or file stem>`` in ``imported.db``; the router's ``execute-tool``
  calls are recorded as calls of the tool they executed (``server_name``/``tool_name``/
  ``params``), ``route`` calls as server ``copilot``. Human labels and judge verdicts become
  judgments with source ``livemcpbench:human`` and ``livemcpbench:judge``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from proctor.scenarios.import_common import (
    ImportedJudgment,
    ImportedSuite,
    ImportedTranscript,
    ImportFormatError,
    json_object,
    key_points_from_steps,
    last_assistant_text,
    number_epochs,
    openai_messages_to_turns,
    read_json,
    records_of,
    scenario_id,
    text_field,
    title_of,
    validated,
)
from proctor.scenarios.import_mcpservers import enabled, normalize_servers

ARM = "livemcptool"
ROUTER_SERVER = "copilot"
ATTRIBUTION = "LiveMCPBench, ICIP-CAS, Apache-2.0"
FileKind = Literal["tasks", "catalogue", "trajectories"]


def kind_of(records: list[dict[str, Any]]) -> FileKind | None:
    """Which LiveMCPBench file this is, from its first entry's fields (None: not one of ours)."""
    if not records:
        return None
    first = records[0]
    if "messages" in first:
        return "trajectories"
    if "config" in first and "tools" in first:
        return "catalogue"
    if "Question" in first or "task_id" in first:
        return "tasks"
    return None


Loaded = list[tuple[Path, list[dict[str, Any]]]]


def _files(path: Path, tools: Path | None, trajectories: Sequence[Path]) -> dict[FileKind, Loaded]:
    """Each file's records, sorted by kind (a file named twice is read once)."""
    found: dict[FileKind, Loaded] = {"tasks": [], "catalogue": [], "trajectories": []}
    candidates = sorted(path.glob("*.json")) if path.is_dir() else [path]
    if path.is_dir() and not candidates:
        raise ImportFormatError(f"{path}: no *.json files in this folder")
    explicit: list[tuple[Path, FileKind]] = [(t, "trajectories") for t in trajectories]
    if tools is not None:
        explicit.append((tools, "catalogue"))
    named = {p.absolute() for p, _ in explicit}
    for f in candidates:
        if f.absolute() in named:
            continue
        records = records_of(read_json(f), f)
        kind = kind_of(records)
        if kind is None:
            if not path.is_dir():
                raise ImportFormatError(
                    f"{f}: not a LiveMCPBench file; expected tasks (task_id, Question, Annotator Metadata), "
                    "a tool catalogue (config.mcpServers, tools) or trajectories (messages)"
                )
            continue
        found[kind].append((f, records))
    for f, kind in explicit:
        found[kind].append((f, records_of(read_json(f), f)))
    return found


def _task(entry: dict[str, Any], where: str) -> dict[str, Any]:
    question = text_field(entry, "Question", where)
    meta = entry.get("Annotator Metadata")
    if not isinstance(meta, dict):
        raise ImportFormatError(
            f"{where}, field 'Annotator Metadata': missing or not an object; it must hold 'Steps' (the key points)"
        )
    points = key_points_from_steps(text_field(meta, "Steps", f"{where}, field 'Annotator Metadata'"))
    scenario: dict[str, Any] = {
        "id": scenario_id(text_field(entry, "task_id", where)),
        "title": title_of(question),
        "prompt": question,
        "key_points": points,
    }
    category = entry.get("category")
    if isinstance(category, str) and category.strip():
        scenario["category"] = category.strip()
    answer = entry.get("answers")
    if isinstance(answer, str) and answer.strip():
        scenario["claims"] = [answer.strip()]
    return scenario


def _catalogue(files: Loaded) -> tuple[dict[str, dict[str, Any]], list[str]]:
    raw: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    for f, records in files:
        for i, entry in enumerate(records):
            where = f"{f}: entry {i} ({entry.get('name', '?')})"
            config = entry.get("config")
            servers = config.get("mcpServers") if isinstance(config, dict) else None
            if not isinstance(servers, dict) or not servers:
                raise ImportFormatError(
                    f"{where}, field 'config.mcpServers': missing or empty; it defines the server"
                )
            for name, cfg in servers.items():
                if not isinstance(cfg, dict):
                    raise ImportFormatError(f"{where}, field 'config.mcpServers.{name}': expected an object")
                cfg = dict(cfg)
                description = entry.get("description")
                if isinstance(description, str) and "description" not in cfg:
                    cfg["description"] = description.strip()
                key = str(name)
                if key in raw and raw[key] != cfg:
                    n = 2
                    while f"{key}-{n}" in raw:
                        n += 1
                    notes.append(
                        f"{where}: server name {key!r} is taken by another entry; imported as {key}-{n}"
                    )
                    key = f"{key}-{n}"
                raw[key] = cfg
    servers_out, server_notes = normalize_servers(raw, ", ".join(str(f) for f, _ in files))
    return servers_out, notes + server_notes


def _copilot_call(name: str, arguments: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    if name in ("execute-tool", "execute_tool"):
        server, tool = arguments.get("server_name"), arguments.get("tool_name")
        if isinstance(server, str) and isinstance(tool, str):
            try:
                params = json_object(arguments.get("params"), name)
            except ImportFormatError:
                params = {"_unparsed": str(arguments.get("params"))}
            return server, tool, params
    if name == "route":
        return ROUTER_SERVER, name, arguments
    return "", name, arguments


def _human(entry: dict[str, Any], where: str) -> ImportedJudgment | None:
    label = entry.get("human_task_success")
    if label is None or label == "":
        return None
    if isinstance(label, bool):
        passed = label
    elif isinstance(label, str) and label.strip().lower() in ("success", "failure"):
        passed = label.strip().lower() == "success"
    else:
        raise ImportFormatError(
            f'{where}, field \'human_task_success\': {label!r} is not a label; use "success" or "failure"'
        )
    verdict = {
        "score": 1.0 if passed else 0.0,
        "passed": passed,
        "rationale": f"human label: {'success' if passed else 'failure'}",
        "label": label,
    }
    return ImportedJudgment(judge="human", source="livemcpbench:human", verdict=verdict)


def _judges(entry: dict[str, Any], where: str) -> list[ImportedJudgment]:
    verdicts = entry.get("judge_verdicts")
    if verdicts is None:
        return []
    if not isinstance(verdicts, dict):
        raise ImportFormatError(
            f"{where}, field 'judge_verdicts': expected an object {{judge: {{reward, judge, judge_reason}}}}"
        )
    out = []
    for judge, v in verdicts.items():
        if not isinstance(v, dict):
            raise ImportFormatError(
                f"{where}, field 'judge_verdicts.{judge}': expected {{reward, judge, judge_reason}}"
            )
        reward, status = v.get("reward"), v.get("judge")
        score: float | None = None
        if isinstance(reward, int | float) and not isinstance(reward, bool):
            score = min(max(float(reward), 0.0), 1.0)
        elif isinstance(status, str) and status.strip().lower() in ("success", "failure"):
            score = 1.0 if status.strip().lower() == "success" else 0.0
        reason = v.get("judge_reason")
        if score is None:
            out.append(
                ImportedJudgment(
                    str(judge), "livemcpbench:judge", None, error="the source verdict has no reward or status"
                )
            )
            continue
        verdict = {
            "score": score,
            "passed": score >= 0.5,
            "rationale": reason if isinstance(reason, str) else "",
            "status": status if isinstance(status, str) else "",
            "reward": reward,
        }
        out.append(ImportedJudgment(str(judge), "livemcpbench:judge", verdict))
    return out


def _model(entry: dict[str, Any], file: Path, model: str | None) -> str:
    name = model or (entry["model"] if isinstance(entry.get("model"), str) and entry["model"] else file.stem)
    return name if ":" in name else f"imported:{name}"


def read_livemcpbench(
    path: Path,
    *,
    tools: Path | None = None,
    trajectories: Sequence[Path] = (),
    model: str | None = None,
    top_k: int = 8,
) -> ImportedSuite:
    files = _files(path, tools, trajectories)
    scenarios: list[tuple[str, dict[str, Any]]] = []
    known: set[str] = set()
    notes: list[str] = []
    for f, records in files["tasks"] + files["trajectories"]:
        for i, entry in enumerate(records):
            if isinstance(entry.get("file_name"), str) and entry["file_name"].strip():
                notes.append(f"{f}: entry {i} needs the file {entry['file_name']!r}, which is not imported")
    for f, records in files["tasks"]:
        for i, entry in enumerate(records):
            where = f"{f}: entry {i} (task_id {entry.get('task_id', '?')})"
            sc = _task(entry, where)
            scenarios.append((where, sc))
            known.add(sc["id"])
    transcripts: list[ImportedTranscript] = []
    for f, records in files["trajectories"]:
        for i, entry in enumerate(records):
            where = f"{f}: entry {i} (task_id {entry.get('task_id', '?')})"
            sid = scenario_id(text_field(entry, "task_id", where))
            if sid not in known:
                if "Question" not in entry:
                    raise ImportFormatError(
                        f"{where}: task {sid} is in no tasks file and the entry has no 'Question'; "
                        "give the tasks file too"
                    )
                scenarios.append((where, _task(entry, where)))
                known.add(sid)
            turns = openai_messages_to_turns(
                entry.get("messages"), f"{where}, field 'messages'", _copilot_call
            )
            response = entry.get("response")
            final = (
                response.strip()
                if isinstance(response, str) and response.strip()
                else last_assistant_text(turns)
            )
            human = _human(entry, where)
            judgments = ([human] if human else []) + _judges(entry, where)
            transcripts.append(
                ImportedTranscript(
                    sid, ARM, _model(entry, f, model), 0, turns, final, tuple(judgments), where
                )
            )
    suite: dict[str, Any] = {
        "name": scenario_id(f"livemcpbench-{path.stem}"),
        "description": f"Imported from LiveMCPBench ({path.name}). Task data: {ATTRIBUTION}.",
        "arms": {"baseline": {"baseline": True, "description": "no MCP servers"}},
        "models": ["offline:default"],
    }
    if files["catalogue"]:
        servers, server_notes = _catalogue(files["catalogue"])
        notes += server_notes
        suite["mcpServers"] = servers
        if enabled(servers):
            suite["arms"][ARM] = {
                "servers": enabled(servers),
                "tool_retrieval": {"top_k": top_k},
                "description": "the LiveMCPTool catalogue behind top-k tool retrieval",
            }
    else:
        notes.append(
            "no tool catalogue given (tools.json): the suite has only the baseline arm; pass --tools FILE"
        )
    sources = [path, *(f for f, _ in files["catalogue"]), *(f for f, _ in files["trajectories"])]
    return validated(
        "livemcpbench",
        list(dict.fromkeys(sources)),
        suite,
        scenarios,
        transcripts=number_epochs(transcripts),
        notes=notes,
    )


__all__ = ["ARM", "ROUTER_SERVER", "kind_of", "read_livemcpbench"]
