"""Import LiveMCPBench (ICIP-CAS, Apache-2.0): tasks, tool catalogue, labelled trajectories, judges.

PATH is the repository checkout as published, or one of its files. In a checkout:

* tasks ``annotated_data/all_annotations.json``: ``task_id``, ``Question``, ``category``,
  ``answers``, ``file_name``, ``Annotator Metadata.Steps`` (numbered lines: the key points);
* catalogue ``tools/LiveMCPTool/tools.json``: ``name``, ``description``, ``config.mcpServers``.
  Every server becomes an ``mcpServers`` entry and one arm, ``livemcptool``, holds them all
  behind top-k tool retrieval, as LiveMCPBench's agent sees them;
* trajectories ``baseline/annotation/<run>.json``: the task fields plus ``messages`` (OpenAI chat
  format), ``response`` and the human label ``task_success`` ("success"/"failure");
* judge verdicts ``evaluator/output/<judge>/<run>.json``: ``task_id``, ``judge``
  ("success"/"failure"), ``reward`` (1/0), ``judge_reason``, plus the trajectory again.

Each (run, task) trajectory becomes one trial of arm ``livemcptool``, model ``imported:<run>``;
the human label becomes judgment ``human`` (source ``livemcpbench:human``) and every judge's
verdict on it a judgment named after the judge's folder (source ``livemcpbench:judge``). A
verdict whose run has no annotated trajectory brings its own ``messages``. As upstream's
``evaluator/human_agreement.py`` does, a label or verdict counts as success when its text
contains "success". Other files (CSVs, ``baseline/output``) are ignored; unknown keys never
drop a record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from proctor.scenarios.importers.chat_turns import (
    last_assistant_text,
    number_epochs,
    openai_messages_to_turns,
)
from proctor.scenarios.importers.common import (
    ImportedJudgment,
    ImportedSuite,
    ImportedTrajectory,
    ImportFormatError,
    json_object,
    key_points_from_steps,
    read_json,
    records_of,
    scenario_id,
    text_field,
    title_of,
)
from proctor.scenarios.importers.mcpservers import enabled, normalize_servers
from proctor.scenarios.importers.suite_files import validated

ARM = "livemcptool"
ROUTER_SERVER = "copilot"
ATTRIBUTION = "LiveMCPBench, ICIP-CAS, Apache-2.0"
TASKS_FILE = Path("annotated_data/all_annotations.json")
TOOLS_FILE = Path("tools/LiveMCPTool/tools.json")
TRAJECTORY_DIR = Path("baseline/annotation")
VERDICT_DIR = Path("evaluator/output")
FileKind = Literal["tasks", "catalogue", "trajectories", "verdicts"]
Loaded = list[tuple[Path, list[dict[str, Any]]]]


def kind_of(records: list[dict[str, Any]]) -> FileKind | None:
    """Which LiveMCPBench file this is, from its first entry's fields (None: not one of ours)."""
    if not records:
        return None
    first = records[0]
    if "reward" in first or "judge_reason" in first:
        return "verdicts"
    if "messages" in first:
        return "trajectories"
    if "config" in first and "tools" in first:
        return "catalogue"
    if "Question" in first or "task_id" in first:
        return "tasks"
    return None


@dataclass
class _Files:
    tasks: Loaded = field(default_factory=list)
    catalogue: Loaded = field(default_factory=list)
    trajectories: Loaded = field(default_factory=list)
    verdicts: Loaded = field(default_factory=list)

    def add(self, kind: FileKind, path: Path, records: list[dict[str, Any]]) -> None:
        getattr(self, kind).append((path, records))


def is_checkout(path: Path) -> bool:
    """A LiveMCPBench repository checkout (or a subset with its paths), not a loose folder."""
    return path.is_dir() and any((path / p).exists() for p in (TASKS_FILE, TRAJECTORY_DIR, VERDICT_DIR))


def _expect(path: Path, kind: FileKind) -> list[dict[str, Any]]:
    records = records_of(read_json(path), path)
    found = kind_of(records)
    if records and found != kind:
        raise ImportFormatError(
            f"{path}: expected LiveMCPBench {kind} here, found {found or 'unknown records'}; "
            "check the file is the one the upstream repository has at this path"
        )
    return records


def _checkout(path: Path) -> _Files:
    files = _Files()
    if (path / TASKS_FILE).is_file():
        files.add("tasks", path / TASKS_FILE, _expect(path / TASKS_FILE, "tasks"))
    if (path / TOOLS_FILE).is_file():
        files.add("catalogue", path / TOOLS_FILE, _expect(path / TOOLS_FILE, "catalogue"))
    for f in sorted((path / TRAJECTORY_DIR).glob("*.json")):
        files.add("trajectories", f, _expect(f, "trajectories"))
    for f in sorted((path / VERDICT_DIR).glob("*/*.json")):
        files.add("verdicts", f, _expect(f, "verdicts"))
    return files


def _loose(path: Path) -> _Files:
    files = _Files()
    candidates = sorted(path.glob("*.json")) if path.is_dir() else [path]
    if path.is_dir() and not candidates:
        raise ImportFormatError(f"{path}: no *.json files and no LiveMCPBench layout in this folder")
    for f in candidates:
        records = records_of(read_json(f), f)
        kind = kind_of(records)
        if kind is None:
            if not path.is_dir():
                raise ImportFormatError(
                    f"{f}: not a LiveMCPBench file; expected tasks (task_id, Question, Annotator Metadata), "
                    "a tool catalogue (config.mcpServers, tools), trajectories (messages, task_success) "
                    "or judge verdicts (task_id, judge, reward, judge_reason)"
                )
            continue
        files.add(kind, f, records)
    return files


def _files(path: Path, tools: Path | None, trajectories: Sequence[Path], verdicts: Sequence[Path]) -> _Files:
    files = _checkout(path) if is_checkout(path) else _loose(path)
    seen = {f.absolute() for group in (files.catalogue, files.trajectories, files.verdicts) for f, _ in group}
    for f, kind in [
        *((t, "trajectories") for t in trajectories),
        *((v, "verdicts") for v in verdicts),
        *(((tools, "catalogue"),) if tools is not None else ()),
    ]:
        if f.absolute() not in seen:
            seen.add(f.absolute())
            files.add(kind, f, _expect(f, kind))
    return files


def _task(entry: dict[str, Any], where: str, *, question_key: str = "Question") -> dict[str, Any]:
    question = text_field(entry, question_key, where)
    meta = entry.get("Annotator Metadata")
    points: list[str] = []
    if isinstance(meta, dict):
        points = key_points_from_steps(text_field(meta, "Steps", f"{where}, field 'Annotator Metadata'"))
    elif question_key == "Question":
        raise ImportFormatError(
            f"{where}, field 'Annotator Metadata': missing or not an object; it must hold 'Steps' (the key points)"
        )
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


def _success(value: Any, where: str, field_name: str) -> bool | None:
    """Upstream's rule: a label is success when its text contains "success" (None: unlabelled)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value >= 0.5
    if isinstance(value, str) and ("success" in value.lower() or "fail" in value.lower()):
        return "success" in value.lower()
    raise ImportFormatError(
        f'{where}, field {field_name!r}: {value!r} is not a label; use "success" or "failure"'
    )


def _human(entry: dict[str, Any], where: str) -> ImportedJudgment | None:
    passed = _success(entry.get("task_success"), where, "task_success")
    if passed is None:
        return None
    label = "success" if passed else "failure"
    verdict = {"score": float(passed), "key_points_success": passed, "rationale": f"human label: {label}"}
    return ImportedJudgment(judge="human", source="livemcpbench:human", verdict=verdict)


def _judge(entry: dict[str, Any], judge: str, where: str) -> ImportedJudgment:
    status = entry.get("judge")
    passed = _success(status, where, "judge") if isinstance(status, str) and status.strip() else None
    if passed is None:
        passed = _success(entry.get("reward"), where, "reward")
    if passed is None:
        return ImportedJudgment(
            judge, "livemcpbench:judge", None, error="the source verdict has neither 'judge' nor 'reward'"
        )
    reason = entry.get("judge_reason")
    rationale = f"{'success' if passed else 'failure'}: {reason if isinstance(reason, str) else ''}".strip()
    verdict = {"score": float(passed), "key_points_success": passed, "rationale": rationale}
    return ImportedJudgment(judge, "livemcpbench:judge", verdict)


def _model(run: str, model: str | None) -> str:
    name = model or run
    return name if ":" in name else f"imported:{name}"


@dataclass
class _Trial:
    where: str
    run: str
    entry: dict[str, Any]
    judgments: list[ImportedJudgment] = field(default_factory=list)


def _trials(files: _Files, notes: list[str]) -> list[_Trial]:
    """One trial per (run, task): annotated trajectories first, then any only judges have seen."""
    trials: dict[tuple[str, str], _Trial] = {}
    for f, records in files.trajectories:
        for i, entry in enumerate(records):
            where = f"{f}: entry {i} (task_id {entry.get('task_id', '?')})"
            key = (f.stem, text_field(entry, "task_id", where))
            if key in trials:
                notes.append(f"{where}: task {key[1]} appears twice in run {key[0]}; the first is kept")
                continue
            human = _human(entry, where)
            trials[key] = _Trial(where, f.stem, entry, [human] if human else [])
    for f, records in files.verdicts:
        judge = f.parent.name
        for i, entry in enumerate(records):
            where = f"{f}: entry {i} (task_id {entry.get('task_id', '?')})"
            key = (f.stem, text_field(entry, "task_id", where))
            trial = trials.get(key)
            if trial is None:
                if "messages" not in entry:
                    notes.append(f"{where}: no trajectory of run {key[0]} for this task; verdict skipped")
                    continue
                trial = trials[key] = _Trial(where, f.stem, entry)
            if any(j.judge == judge for j in trial.judgments):
                notes.append(f"{where}: judge {judge} judged task {key[1]} twice; the first verdict is kept")
                continue
            trial.judgments.append(_judge(entry, judge, where))
    return list(trials.values())


def read_livemcpbench(
    path: Path,
    *,
    tools: Path | None = None,
    trajectories: Sequence[Path] = (),
    verdicts: Sequence[Path] = (),
    model: str | None = None,
    top_k: int = 8,
) -> ImportedSuite:
    files = _files(path, tools, trajectories, verdicts)
    scenarios: list[tuple[str, dict[str, Any]]] = []
    known: set[str] = set()
    notes: list[str] = []
    for f, records in files.tasks:
        for i, entry in enumerate(records):
            where = f"{f}: entry {i} (task_id {entry.get('task_id', '?')})"
            if isinstance(entry.get("file_name"), str) and entry["file_name"].strip():
                notes.append(f"{where} needs the file {entry['file_name']!r}, which is not imported")
            sc = _task(entry, where)
            if sc["id"] not in known:
                scenarios.append((where, sc))
                known.add(sc["id"])
    imported: list[ImportedTrajectory] = []
    for trial in _trials(files, notes):
        entry, where = trial.entry, trial.where
        sid = scenario_id(text_field(entry, "task_id", where))
        if sid not in known:
            question_key = "Question" if "Question" in entry else "question"
            if question_key not in entry:
                raise ImportFormatError(
                    f"{where}: task {sid} is in no tasks file and the entry has no 'Question'; "
                    f"give the tasks file too ({TASKS_FILE})"
                )
            scenarios.append((where, _task(entry, where, question_key=question_key)))
            known.add(sid)
        turns = openai_messages_to_turns(entry.get("messages"), f"{where}, field 'messages'", _copilot_call)
        response = entry.get("response")
        final = (
            response.strip() if isinstance(response, str) and response.strip() else last_assistant_text(turns)
        )
        imported.append(
            ImportedTrajectory(
                sid, ARM, _model(trial.run, model), 0, turns, final, tuple(trial.judgments), where
            )
        )
    suite: dict[str, Any] = {
        "name": scenario_id(f"livemcpbench-{path.resolve().stem}"),
        "description": f"Imported from LiveMCPBench ({path.name}). Task data: {ATTRIBUTION}.",
        "arms": {"baseline": {"baseline": True, "description": "no MCP servers"}},
        "models": ["offline:default"],
    }
    if files.catalogue:
        servers, server_notes = _catalogue(files.catalogue)
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
            f"no tool catalogue ({TOOLS_FILE}): the suite has only the baseline arm; pass --tools FILE"
        )
    sources = [
        path,
        *(f for group in (files.catalogue, files.trajectories, files.verdicts) for f, _ in group),
    ]
    return validated(
        "livemcpbench",
        list(dict.fromkeys(sources)),
        suite,
        scenarios,
        trajectories=number_epochs(imported),
        notes=notes,
    )


__all__ = ["ARM", "ROUTER_SERVER", "is_checkout", "kind_of", "read_livemcpbench"]
