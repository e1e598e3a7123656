"""``proctor export DB --format inspect -o RUN.eval``: a run as an Inspect AI ``.eval`` log.

Written from the documented format, without importing ``inspect_ai`` (it is an optional extra),
and read back by ``inspect_ai.log.read_eval_log`` in the tests: a zip (deflate) holding
``_journal/start.json`` (version, eval spec, plan), ``samples/<id>_epoch_<n>.json`` (one per
trial, ``inspect_sample.py``), ``summaries.json``, ``reductions.json`` and ``header.json``
(status, eval spec, results with each score's mean, stats). One log is one task and one model
in Inspect; a run with several arms or models keeps them apart in the sample ids
(``SCENARIO.ARM.MODEL``) and in each sample's ``metadata.proctor``, and names the log's model
``proctor/mixed``. Every string is redacted as in the JSONL export.
"""

from __future__ import annotations

import datetime
import os
import re
import statistics
import tempfile
import zipfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from proctor.engine.reports.inspect_sample import sample_of, summary_of
from proctor.engine.reports.redacted_tree import redacted
from proctor.engine.version import proctor_version
from proctor.scenarios.loader import SuiteError, load_suite
from proctor.store.events import AgentBrief
from proctor.store.read.reader import StoreReader
from proctor.store.records import RunRecord, TrialRecord

LOG_VERSION = 2  # the EvalLog version inspect_ai 0.3.285 writes
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_.:-]+")


def _iso(ts: float | None) -> str:
    moment = datetime.datetime.fromtimestamp(ts or 0.0, tz=datetime.UTC)
    return moment.isoformat(timespec="seconds")


def _suite_texts(run: RunRecord | None) -> dict[str, tuple[str, list[str]]]:
    """Each scenario's prompt and claims (the sample's input and target), when the suite loads."""
    suite_dir = (run.config or {}).get("suite_dir") if run else None
    if not isinstance(suite_dir, str):
        return {}
    try:
        loaded = load_suite(Path(suite_dir))
    except (SuiteError, OSError):
        return {}
    return {sc.id: (sc.prompt or "", list(sc.claims)) for sc in loaded.scenarios}


def _sample_ids(trials: Sequence[TrialRecord]) -> dict[int, str]:
    one_entry = len({(t.arm, t.model) for t in trials}) <= 1
    return {
        t.id: _UNSAFE_ID.sub("-", t.scenario if one_entry else f"{t.scenario}.{t.arm}.{t.model}")
        for t in trials
    }


def _results(samples: Sequence[dict[str, Any]]) -> dict[str, Any]:
    values: dict[str, list[float]] = defaultdict(list)
    for s in samples:
        for name, score in s["scores"].items():
            v = score.get("value")
            if isinstance(v, int | float) and not isinstance(v, bool):
                values[name].append(float(v))
            elif v in ("C", "I", "P"):
                values[name].append({"C": 1.0, "I": 0.0, "P": 0.5}[v])
    return {
        "total_samples": len(samples),
        "completed_samples": sum("error" not in s for s in samples),
        "scores": [
            {
                "name": name,
                "scorer": name,
                "scored_samples": len(vs),
                "unscored_samples": len(samples) - len(vs),
                "params": {},
                "metrics": {"mean": {"name": "mean", "value": statistics.fmean(vs), "params": {}}},
            }
            for name, vs in sorted(values.items())
            if vs
        ],
    }


def _spec(run: RunRecord | None, trials: Sequence[TrialRecord], ids: dict[int, str]) -> dict[str, Any]:
    models = sorted({t.model for t in trials})
    return {
        "eval_id": f"proctor-{run.id if run else 'run'}",
        "run_id": run.id if run else "",
        "created": _iso(run.created_at if run else None),
        "task": run.suite if run else "proctor",
        "task_version": 0,
        "dataset": {
            "name": run.suite if run else "proctor",
            "samples": len({ids[t.id] for t in trials}),
            "sample_ids": sorted({ids[t.id] for t in trials}),
            "shuffled": False,
        },
        "model": models[0] if len(models) == 1 else "proctor/mixed",
        "config": {"epochs": max((t.epoch for t in trials), default=0) + 1},
        "packages": {"proctor": proctor_version()},
        "metadata": {
            "proctor": {
                "run_id": run.id if run else "",
                "arms": sorted({t.arm for t in trials}),
                "models": models,
            }
        },
    }


def build_log(db: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(header, samples) of the run in ``db``: every string redacted."""
    with StoreReader(db) as reader:
        run = reader.run()
        trials = [t for t in reader.trials() if t.status in ("finished", "error")]
        texts = _suite_texts(run)
        ids = _sample_ids(trials)
        samples = []
        for t in trials:
            events = [e for e in reader.trial_events(t.id) if not e.abandoned]
            brief = next((e.event for e in events if isinstance(e.event, AgentBrief)), None)
            prompt, claims = texts.get(t.scenario, ("", []))
            prompt = prompt or (brief.prompts[0] if brief and brief.prompts else "") or t.scenario
            sample = sample_of(
                t, ids[t.id], prompt, claims or "", events, reader.scores(t.id), reader.judgments(t.id)
            )
            samples.append(redacted(sample))
    spec = redacted(_spec(run, trials, ids))
    header = {
        "version": LOG_VERSION,
        "status": "success" if run is None or run.status == "finished" else "started",
        "eval": spec,
        "plan": {"name": "plan", "steps": [], "config": {}},
        "results": _results(samples),
        "stats": {
            "started_at": _iso(run.started_at if run else None),
            "completed_at": _iso(run.finished_at if run else None),
            "model_usage": _total_usage(samples),
        },
    }
    return header, samples


def _total_usage(samples: Sequence[dict[str, Any]]) -> dict[str, dict[str, int]]:
    totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for s in samples:
        for model, usage in s["model_usage"].items():
            for k, v in usage.items():
                totals[model][k] += v
    return {m: dict(u) for m, u in totals.items()}


def export_inspect(db: Path, out: Path) -> int:
    """Write the run in ``db`` to ``out`` (a ``.eval`` zip) atomically; return the sample count."""
    header, samples = build_log(db)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent)
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            start = {"version": LOG_VERSION, "eval": header["eval"], "plan": header["plan"]}
            zf.writestr("_journal/start.json", orjson.dumps(start))
            for s in samples:
                zf.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", orjson.dumps(s))
            zf.writestr("summaries.json", orjson.dumps([summary_of(s) for s in samples]))
            zf.writestr("reductions.json", orjson.dumps([]))
            zf.writestr("header.json", orjson.dumps(header))
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return len(samples)


__all__ = ["LOG_VERSION", "build_log", "export_inspect"]
