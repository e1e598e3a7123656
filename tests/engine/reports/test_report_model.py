"""The report model is the JSON report's shape: every format is type-checked against
engine/reports/report_model.py, so these tests hold it to what ``proctor report --format json``
writes on real runs. Every object must have exactly the keys its TypedDict declares (all the
required ones, no undeclared one, in the declared order) and values of the declared kinds, or the
model has drifted."""

from __future__ import annotations

import asyncio
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints, is_typeddict

import orjson
import pytest

from proctor.engine.grading.anchors import lock_anchors
from proctor.engine.reports import report_model
from proctor.engine.reports.report import build_report, report_json
from proctor.engine.runs.imported_runs import save_import
from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.session import run_suite
from proctor.engine.tools.surface import ToolDefinition, surface_of
from proctor.engine.tools.surface_lock import lock_path, write_lock
from proctor.scenarios.demo import SUITE_DIR
from proctor.scenarios.importers.livemcpbench import read_livemcpbench
from proctor.scenarios.loader import load_suite
from proctor.store.events import (
    OperatorCommand,
    ToolCall,
    ToolResult,
    TrialFinished,
    TrialStarted,
    Usage,
)
from proctor.store.read.reader import StoreReader
from proctor.store.write.writer import StoreWriter, TrialRow
from tests.engine.judging_fixture import RUN_ID, build_run
from tests.engine.replay.test_replayer import _suite, proctor

NOT_WRITTEN = {"ArmModel"}
"""What the per arm × model entries share: never a value of its own."""
FIXTURES = Path(__file__).parents[3] / ".." / "shared" / "fixtures"


class Drift(AssertionError):
    pass


def conform(value: object, declared: Any, path: str, seen: set[str]) -> None:
    """Raises ``Drift`` naming the path where ``value`` (decoded JSON) leaves ``declared``."""
    origin = get_origin(declared)
    if declared is Any:
        return
    if is_typeddict(declared):
        if not isinstance(value, dict):
            raise Drift(f"{path}: {type(value).__name__} where {declared.__name__} is declared")
        seen.add(declared.__name__)
        required, optional = declared.__required_keys__, declared.__optional_keys__
        if missing := required - value.keys():
            raise Drift(f"{path}: keys {sorted(missing)} of {declared.__name__} are not in the report")
        if extra := value.keys() - required - optional:
            raise Drift(f"{path}: keys {sorted(extra)} are not declared in {declared.__name__}")
        hints = get_type_hints(declared)
        if list(value) != (order := [k for k in hints if k in value]):
            raise Drift(f"{path}: keys written in the order {list(value)}, declared {order}")
        for key, item in value.items():
            conform(item, hints[key], f"{path}.{key}", seen)
    elif origin in (Union, types.UnionType):
        options = [a for a in get_args(declared) if a is not type(None)]
        if value is None and len(options) < len(get_args(declared)):
            return
        errors = []
        for option in options:
            try:
                conform(value, option, path, seen)
                return
            except Drift as err:
                errors.append(str(err))
        raise Drift("; ".join(errors))
    elif origin is Literal:
        if value not in get_args(declared):
            raise Drift(f"{path}: {value!r} where one of {list(get_args(declared))} is declared")
    elif origin in (list, tuple):  # a tuple is written as a JSON array
        if not isinstance(value, list):
            raise Drift(f"{path}: {type(value).__name__} where an array is declared")
        (item_type, *_) = get_args(declared)
        for i, item in enumerate(value):
            conform(item, item_type, f"{path}[{i}]", seen)
    elif origin is dict:
        key_type, item_type = get_args(declared)
        if not isinstance(value, dict) or not all(isinstance(k, key_type) for k in value):
            raise Drift(f"{path}: not an object with {key_type.__name__} keys")
        for key, item in value.items():
            conform(item, item_type, f"{path}.{key}", seen)
    elif declared is float:  # as for mypy, an int is a float
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise Drift(f"{path}: {value!r} where a number is declared")
    elif declared is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise Drift(f"{path}: {value!r} where an integer is declared")
    elif not isinstance(value, declared):
        raise Drift(f"{path}: {value!r} where {declared.__name__} is declared")


def _model_types() -> set[str]:
    return {name for name in report_model.__all__ if is_typeddict(getattr(report_model, name))}


def _json(db: Path) -> dict[str, Any]:
    decoded = orjson.loads(report_json(build_report(db)))
    assert isinstance(decoded, dict)
    return decoded


@pytest.fixture(scope="module")
def demo_json(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The bundled demo, run offline: every arm and score, one judge."""
    db = tmp_path_factory.mktemp("demo") / "demo.db"
    assert asyncio.run(run_suite(load_suite(SUITE_DIR), RunOptions(db=db))) == "finished"
    return _json(db)


@pytest.fixture(scope="module")
def livemcpbench_json(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """LiveMCPBench's published subset, imported: ten judges, human labels, no recorded times."""
    source = FIXTURES / "livemcpbench"
    if not source.exists():
        pytest.skip(f"shared fixture {source} is absent (the shared/ folder beside the repository)")
    saved = save_import(read_livemcpbench(source), tmp_path_factory.mktemp("live"))
    return _json(saved.db)


@pytest.fixture(scope="module")
def anchored_json(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A scored run with its anchors locked and verified, a trial that ended in error, and a tool
    lock its tools differ from."""

    async def make() -> Path:
        fx = await build_run(tmp_path_factory.mktemp("anchored"))
        lock_anchors(fx.suite_dir, fx.db)
        # A tool lock the run's tools differ from: the report's tool surface lists the changes.
        reviewed = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
        write_lock(
            lock_path(fx.suite_dir), surface_of([ToolDefinition("dummy", "lookup", "look it up", reviewed)])
        )
        with StoreReader(fx.db) as reader:
            first = reader.trials()[0]
        failed = TrialFinished(
            status="error",
            stop="error",
            final_answer="",
            tool_calls=0,
            usage=Usage(),
            cost_usd=None,
            wall_s=0.1,
            error="srv: could not start: no such file",
        )
        async with await StoreWriter.open(fx.db) as w:
            w.emit(RUN_ID, OperatorCommand(command="verify_anchors", args={}, status="done", message="ok"))
            w.emit(RUN_ID, failed, trial_id=first.id, attempt=first.attempt)
        return fx.db

    return _json(asyncio.run(make()))


RECORDED = (  # (server, key, recorded answer, recorded as an error)
    ("drift", "a", "1", False),  # the server still answers 1: identical
    ("drift", "j", '{"v": 1}', False),  # now {"v": 2}: a changed JSON leaf
    ("drift", "b", "2", False),  # now 20: a text diff
    ("drift", "c", "no such key: c", True),  # now answers: a fixed error
    ("drift", "zz", "4", False),  # no such key any more: a new error
    ("gone", "d", "5", False),  # the suite has no such server any more: a note
    ("builtin", "x", "x.py:1", False),  # proctor's own tool: skipped
)


async def _record(db: Path, suite: Path) -> None:
    """A recorded run of one trial whose calls, replayed, end in every status but missing."""
    async with await StoreWriter.open(db) as w:
        await w.create_run("rec", "drifty", {"suite": "drifty", "suite_dir": str(suite)})
        await w.add_trials("rec", [TrialRow("s", "mcp", "offline:default", 0, 7)])
        start = TrialStarted(scenario="s", arm="mcp", model="offline:default", epoch=0, seed=7, attempt=1)
        w.emit("rec", start, trial_id=1, attempt=1)
        for k, (server, key, answer, error) in enumerate(RECORDED):
            tool = "grep" if server == "builtin" else "lookup"
            call = ToolCall(call_id=f"c{k}", server=server, tool=tool, arguments={"key": key})
            w.emit("rec", call, trial_id=1, attempt=1)
            result = ToolResult(
                call_id=f"c{k}",
                server=server,
                tool=tool,
                content=answer,
                is_error=error,
                error_type="tool_error" if error else "",
                latency_s=0.01,
            )
            w.emit("rec", result, trial_id=1, attempt=1)
        end = TrialFinished(
            status="finished",
            stop="answer",
            final_answer="ok",
            tool_calls=len(RECORDED),
            usage=Usage(),
            cost_usd=0.0,
            wall_s=1.0,
        )
        w.emit("rec", end, trial_id=1, attempt=1)


@pytest.fixture(scope="module")
def replay_json(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any]]:
    """A run replayed by ``proctor replay`` against a real mcp SDK server whose answers changed:
    its report, then its report once the recording is gone (the section says why instead)."""
    root = tmp_path_factory.mktemp("replay")
    data = root / "data.json"
    data.write_text(orjson.dumps({"a": "1", "j": '{"v": 2}', "b": "20", "c": "3"}).decode())
    recording, new = root / "rec.db", root / "new.db"
    asyncio.run(_record(recording, _suite(root / "suite", data)))
    code, out, err = proctor("replay", recording, "--db", new)
    assert code == 0, out + err
    replayed = _json(new)
    recording.rename(root / "moved.db")
    return replayed, _json(new)


@pytest.mark.slow
def test_the_json_report_has_exactly_the_declared_keys_and_kinds(
    demo_json: dict[str, Any],
    livemcpbench_json: dict[str, Any],
    anchored_json: dict[str, Any],
    replay_json: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    seen: set[str] = set()
    for report in (demo_json, livemcpbench_json, anchored_json, *replay_json):
        conform(report, report_model.Report, "report", seen)
    assert "errors" in anchored_json and anchored_json["anchors"]["last_verification"] is not None
    assert anchored_json["tool_surface"]["lock"]["status"] == "differs"
    replayed, gone = replay_json
    statuses = {c["status"] for c in replayed["drift"]["calls"]}
    assert statuses == {"identical", "changed", "fixed_error", "new_error", "skipped"}
    assert "is gone" in gone["drift"]["error"]
    # Every part of the model was held to an output.
    assert _model_types() - seen == NOT_WRITTEN


@pytest.mark.slow
def test_a_renamed_key_is_caught(demo_json: dict[str, Any]) -> None:
    arm = demo_json["arms"][0]
    renamed = {**demo_json, "arms": [{("passes" if k == "passed" else k): v for k, v in arm.items()}]}
    with pytest.raises(
        Drift, match=r"report\.arms\[0\]: keys \['passed'\] of ArmEntry are not in the report"
    ):
        conform(renamed, report_model.Report, "report", set())
    added = {**demo_json, "tool_usage": {**demo_json["tool_usage"], "drift": []}}
    with pytest.raises(Drift, match=r"keys \['drift'\] are not declared in ToolUsageSection"):
        conform(added, report_model.Report, "report", set())


@pytest.mark.slow
def test_a_renamed_drift_key_or_an_unknown_status_is_caught(
    replay_json: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    replayed, _ = replay_json
    call = {**replayed["drift"]["calls"][1], "status": "drifted"}
    bad = {**replayed, "drift": {**replayed["drift"], "calls": [call]}}
    with pytest.raises(Drift, match=r"report\.drift\.calls\[0\]\.status: 'drifted' where one of"):
        conform(bad, report_model.Report, "report", set())
    renamed = {
        **replayed,
        "drift": {("changed" if k == "drifted" else k): v for k, v in replayed["drift"].items()},
    }
    with pytest.raises(Drift, match=r"keys \['drifted'\] of DriftSection are not in the report"):
        conform(renamed, report_model.Report, "report", set())


def test_a_value_of_another_kind_is_caught() -> None:
    with pytest.raises(Drift, match=r"x\.mean: 'high' where a number is declared"):
        conform({"mean": "high", "low": 0, "high": 1, "n": 2}, report_model.MeanCIRow, "x", set())
    conform({"mean": 0.5, "low": 0, "high": 1, "n": 2}, report_model.MeanCIRow, "x", set())


def test_keys_out_of_the_declared_order_are_caught() -> None:
    with pytest.raises(Drift, match=r"x: keys written in the order \['low', 'mean', 'high', 'n'\]"):
        conform({"low": 0, "mean": 0.5, "high": 1, "n": 2}, report_model.MeanCIRow, "x", set())
