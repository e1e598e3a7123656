"""Import Inspect AI logs as a suite and a run of imported trials proctor can judge and compare.

Each sample of each log is one trial (``inspect_samples.py``): the sample id is the scenario
(``TASK-ID`` when the logs hold several tasks), its ``input`` the prompt, its epoch (1-based in
Inspect) the trial's epoch (0-based). Each model is an arm named after it; the first log's
model is the suite's ``baseline`` arm, so the report and the console compare every other model
with it, paired by (sample id, epoch). When the logs hold one model, the trials' model is that
model; with several, the model column is the shared ``inspect:TASK`` (the arm names the model)
so that the comparison pairs them, as proctor pairs arms run with the same model.

With ``suite``, samples are matched to its scenarios by id, else by prompt, and carry their
checks and pinned repository, so ``proctor judge`` scores them as it scores a run of that suite.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from proctor.scenarios.importers.common import (
    ImportedSuite,
    ImportedTrajectory,
    ImportFormatError,
    scenario_id,
    title_of,
)
from proctor.scenarios.importers.inspect_log import InspectLog, Reader, read_inspect_log
from proctor.scenarios.importers.inspect_samples import prompt_of, trajectory_of
from proctor.scenarios.importers.suite_files import validated
from proctor.scenarios.loader import LoadedSuite, load_suite
from proctor.scenarios.schema import RepoSpec

Scrub = Callable[[str], str]


def arm_name(model: str) -> str:
    """An arm name from an Inspect model (``openai/gpt-4o`` -> ``openai-gpt-4o``)."""
    return scenario_id(model.replace("/", "-"))


def _absolute(repo: RepoSpec, root: Path) -> dict[str, Any]:
    """The suite's repository with its paths made absolute: the imported suite lives elsewhere."""
    data = repo.model_dump(exclude_none=True)
    return data | {k: str((root / data[k]).resolve()) for k in ("path", "source") if k in data}


def _distinct_epochs(trajectories: Sequence[ImportedTrajectory]) -> tuple[list[ImportedTrajectory], int]:
    """Two logs of one model and task (a re-run) would give a trial twice: later ones move to the
    next free epoch. Returns the trajectories and how many moved."""
    taken: set[tuple[str, str, str, int]] = set()
    out, moved = [], 0
    for t in trajectories:
        epoch = t.epoch
        while (t.scenario, t.arm, t.model, epoch) in taken:
            epoch += 1
        taken.add((t.scenario, t.arm, t.model, epoch))
        moved += epoch != t.epoch
        out.append(t if epoch == t.epoch else replace(t, epoch=epoch))
    return out, moved


def _suite_arms(models: Sequence[str]) -> dict[str, Any]:
    """The first model's arm, the baseline the others are compared with. The others are not
    declared (a suite arm's servers must be ones proctor can start, and Inspect's tools ran
    inside Inspect): ``proctor judge`` gives each the servers its calls used (``inspect``)."""
    model = models[0]
    return {
        arm_name(model): {
            "baseline": True,
            "description": f"Inspect model {model}: the arm others are compared with",
        }
    }


def _suite_data(
    logs: Sequence[InspectLog],
    loaded: LoadedSuite | None,
    models: Sequence[str],
    trajectories: Sequence[ImportedTrajectory],
) -> dict[str, Any]:
    names = ", ".join(sorted({log.path.name for log in logs}))
    if loaded is None:
        tasks = sorted({log.task for log in logs})
        return {
            "name": scenario_id(f"inspect-{'-'.join(tasks)}")[:80],
            "description": f"Imported from Inspect AI logs ({names}); scenarios are their samples.",
            "arms": _suite_arms(models),
        }
    data = loaded.suite.model_dump(
        mode="json", by_alias=True, exclude_defaults=True, exclude={"anchors_lock"}
    )
    if loaded.suite.repo is not None:
        data["repo"] = _absolute(loaded.suite.repo, loaded.root)
    if loaded.suite.servers_file:
        data["servers_file"] = str((loaded.root / loaded.suite.servers_file).resolve())
    data["description"] = f"Inspect AI logs ({names}) scored against the suite {loaded.root}."
    data["arms"] = {**data.get("arms", {}), **_suite_arms(models)}
    return data


def _scenario_from_suite(loaded: LoadedSuite, sid: str) -> dict[str, Any]:
    model = loaded.scenario(sid)
    data = model.model_dump(mode="json", by_alias=True, exclude_defaults=True, exclude={"anchors_lock"})
    if model.repo is not None:
        data["repo"] = _absolute(model.repo, loaded.root)
    return data


def read_inspect(
    paths: Sequence[Path], *, scrub: Scrub, suite: Path | None = None, reader: Reader = "auto"
) -> ImportedSuite:
    """Every sample of the logs at ``paths`` as a trial; ``scrub`` redacts text bound for suite files."""
    logs = [read_inspect_log(p, reader) for p in paths]
    empty = [log.path for log in logs if not log.samples]
    if len(empty) == len(logs):
        raise ImportFormatError(
            f"{empty[0]}: the log holds no samples (was it written with --no-log-samples, or did the run "
            "stop before any finished?); nothing to import"
        )
    models = list(dict.fromkeys(log.model for log in logs))
    tasks = {log.task for log in logs}
    loaded = load_suite(suite) if suite is not None else None
    known = {sc.id for sc in loaded.scenarios} if loaded else set()
    by_prompt = {" ".join(sc.prompt.split()): sc.id for sc in loaded.scenarios if sc.prompt} if loaded else {}
    scenarios: dict[str, tuple[str, dict[str, Any]]] = {}
    trajectories: list[ImportedTrajectory] = []
    unmatched = 0
    for log in logs:
        model = log.model if len(models) == 1 else f"inspect:{'+'.join(sorted(tasks))}"
        for sample in log.samples:
            raw_id = str(sample.get("id", ""))
            sid = scenario_id(raw_id if len(tasks) == 1 else f"{log.task}-{raw_id}")
            origin = f"{log.path}, sample {raw_id!r} epoch {sample.get('epoch')}"
            prompt = prompt_of(sample)
            matched = sid if sid in known else by_prompt.get(" ".join(prompt.split()), "")
            if loaded is not None and matched:
                sid = matched
                scenarios.setdefault(sid, (origin, _scenario_from_suite(loaded, sid)))
            else:
                unmatched += loaded is not None
                text = scrub(prompt) or f"(the log records no input for sample {raw_id})"
                scenarios.setdefault(sid, (origin, {"id": sid, "title": title_of(text), "prompt": text}))
            t = trajectory_of(sample, scenario=sid, arm=arm_name(log.model), model=model, origin=origin)
            trajectories.append(replace(t, model=scrub(t.model), arm=scrub(t.arm)))
    trajectories, moved = _distinct_epochs(trajectories)
    notes = [f"{p}: holds no samples" for p in empty if len(empty) < len(logs)]
    if moved:
        notes.append(
            f"{moved} sample(s) repeat an earlier log's (same model, task, id, epoch): given later epochs"
        )
    if unmatched:
        notes.append(
            f"{unmatched} sample(s) match no scenario of {suite} by id or input: imported without checks"
        )
    if len(models) > 1:
        notes.append(
            f"{len(models)} models become arms {', '.join(arm_name(m) for m in models)} (baseline: "
            f"{arm_name(models[0])}), compared paired by sample id and epoch"
        )
    notes.append(f"read with {logs[0].reader}'s reader")
    sources = [*paths, *([suite] if suite is not None else [])]
    imported = validated(
        "inspect",
        sources,
        _suite_data(logs, loaded, models, trajectories),
        list(scenarios.values()),
        trajectories=trajectories,
        notes=notes,
    )
    # validated() warns that undeclared arms cannot be re-judged; these can (see _suite_arms).
    return replace(
        imported, notes=tuple(n for n in imported.notes if "that the suite does not define" not in n)
    )


__all__ = ["arm_name", "read_inspect"]
