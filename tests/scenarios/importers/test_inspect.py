"""Inspect AI logs as imported trials, read by proctor's own reader of the documented format.

The logs in fixtures/inspect were written by inspect-ai 0.3.285 itself (make_logs.py; versions
in its README); tests/integration/test_inspect_interop.py regenerates them and checks the
exports with inspect-ai's own reader.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from proctor.app.cli import main
from proctor.app.exit_codes import ExitCode
from proctor.engine.reports.inspect_export import build_log, export_inspect
from proctor.scenarios.importers.common import ImportFormatError
from proctor.scenarios.importers.inspect import read_inspect
from proctor.scenarios.importers.inspect_log import READER_ENV
from proctor.store.events import ToolResult, TrialFinished
from proctor.store.read.reader import StoreReader
from proctor.store.redaction import redact

LOGS = Path(__file__).resolve().parent / "fixtures" / "inspect"
ARITH_SUITE = LOGS / "arith-suite"


@pytest.fixture(autouse=True)
def _own_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about proctor's reader, even where inspect_ai happens to be installed."""
    monkeypatch.setenv(READER_ENV, "proctor")


def run(*argv: str | Path) -> int:
    return main([str(a) for a in argv])


def test_each_sample_and_epoch_is_a_trial_with_its_calls_results_and_recorded_usage() -> None:
    imported = read_inspect([LOGS / "tools.eval"], scrub=redact)
    assert imported.source_format == "inspect"
    assert sorted((t.scenario, t.epoch) for t in imported.trajectories) == [
        ("add-0", 0),
        ("add-0", 1),
        ("add-1", 0),
        ("add-1", 1),
    ]
    t = next(t for t in imported.trajectories if t.scenario == "add-1")
    assert (t.arm, t.model) == ("mockllm-model", "mockllm/model")
    call_turn, answer_turn = t.turns
    (call,) = call_turn.calls
    assert (call.server, call.tool, call.arguments) == ("inspect", "add", {"x": 10, "y": 7})
    (result,) = call_turn.results
    assert (result.call_id, result.content, result.is_error) == (call.call_id, "17", False)
    assert result.latency_s > 0  # the tool event's working time
    # Each model event's own usage (make_logs.py scripts 80/14 then 120/9), not estimated.
    assert (call_turn.input_tokens, call_turn.output_tokens) == (80, 14)
    assert (answer_turn.input_tokens, answer_turn.output_tokens) == (120, 9)
    assert t.final_answer == "The sum is 17." and t.wall_s > 0 and not t.error
    prompts = {sc["id"]: sc["prompt"] for sc in imported.scenarios}
    assert prompts == {"add-0": "What is 2 + 3?", "add-1": "What is 10 + 7?"}


def test_the_json_log_format_gives_the_same_trials_as_the_eval_zip() -> None:
    def shape(path: Path) -> list[tuple[object, ...]]:
        ts = read_inspect([path], scrub=redact).trajectories
        return sorted(
            (
                t.scenario,
                t.epoch,
                t.final_answer,
                tuple((c.tool, json.dumps(c.arguments)) for turn in t.turns for c in turn.calls),
                tuple(r.content for turn in t.turns for r in turn.results),
                tuple((turn.input_tokens, turn.output_tokens) for turn in t.turns),
            )
            for t in ts
        )

    assert shape(LOGS / "tools.json") == shape(LOGS / "tools.eval")


def test_an_mcp_servers_tool_call_and_its_result_are_imported() -> None:
    (t,) = read_inspect([LOGS / "mcp.eval"], scrub=redact).trajectories
    (call,) = t.turns[0].calls
    assert (call.tool, call.arguments) == ("weekday", {"date": "2024-02-29"})
    assert t.turns[0].results[0].content == "Thursday"  # the MCP result's text content
    assert t.final_answer == "It was a Thursday."


def test_limits_and_errors_are_how_the_trial_ended(tmp_path: Path) -> None:
    out = tmp_path / "imp"
    assert run("import", "inspect", LOGS / "limits.eval", "-o", out) == ExitCode.OK
    with StoreReader(out / "imported.db") as r:
        trials = {t.scenario: t for t in r.trials()}
        ends = {
            sc: next(e.event for e in r.trial_events(t.id) if isinstance(e.event, TrialFinished))
            for sc, t in trials.items()
        }
        unanswered = [e.event for e in r.trial_events(trials["chatty"].id) if isinstance(e.event, ToolResult)]
    assert (ends["chatty"].status, ends["chatty"].stop) == ("finished", "message_limit")
    assert (ends["costly"].status, ends["costly"].stop) == ("finished", "token_limit")
    assert (ends["broken"].status, ends["broken"].stop) == ("error", "error")
    assert "the dataset row is broken" in ends["broken"].error
    # The token limit's second model call produced no message; its usage still counts (840 in all).
    assert ends["costly"].usage.input_tokens == 800 and ends["costly"].usage.output_tokens == 40
    assert not ends["costly"].usage.estimated
    assert len(unanswered) == 1  # the message limit stopped it before the second call ran


def test_inspect_scores_are_imported_judgments_kept_apart_from_proctors(tmp_path: Path) -> None:
    out = tmp_path / "imp"
    assert run("import", "inspect", LOGS / "tools-b.eval", "-o", out) == ExitCode.OK
    with StoreReader(out / "imported.db") as r:
        by_scenario = {t.scenario: r.judgments(t.id) for t in r.trials() if t.epoch == 0}
    (right,), (wrong,) = by_scenario["add-0"], by_scenario["add-1"]
    assert (right.judge, right.source) == ("inspect:includes", "inspect:scorer")
    assert right.verdict is not None and right.verdict["value"] == "C" and right.verdict["score"] == 1.0
    assert wrong.verdict is not None and wrong.verdict["value"] == "I" and wrong.verdict["score"] == 0.0
    assert wrong.verdict["answer"] and wrong.verdict["scorer"] == "includes"


def test_two_models_of_one_task_are_two_arms_compared_paired_by_sample_and_epoch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "imp"
    logs = (LOGS / "tools.eval", LOGS / "tools-b.eval")
    assert run("import", "inspect", *logs, "--suite", ARITH_SUITE, "-o", out) == ExitCode.OK
    assert run("judge", out / "imported.db") == ExitCode.OK  # the suite's checks, on the stored answers
    capsys.readouterr()
    assert run("report", out / "imported.db", "--format", "json") == ExitCode.OK
    report = json.loads(capsys.readouterr().out)
    arms = {a["arm"]: a for a in report["arms"]}
    assert arms["mockllm-model"]["baseline"] and not arms["mockllm-model-b"]["baseline"]
    comparison = arms["mockllm-model-b"]["vs_baseline"]
    assert comparison["baseline"] == "mockllm-model"
    assert comparison["pairs"] == 4  # 2 samples x 2 epochs
    assert comparison["fairness_delta"]["mean"] < 0  # model-b's wrong sum
    # model-b answers add-1 wrongly ("4"): its keywords score is 0 there, model-a's is 1.
    with StoreReader(out / "imported.db") as r:
        keywords = {
            (t.arm, t.scenario): s.value for t in r.trials() for s in r.scores(t.id) if s.name == "keywords"
        }
    assert keywords[("mockllm-model", "add-1")] == 1.0 and keywords[("mockllm-model-b", "add-1")] == 0.0


def test_export_writes_an_eval_zip_with_one_sample_per_trial(tmp_path: Path) -> None:
    out = tmp_path / "imp"
    assert run("import", "inspect", LOGS / "tools.eval", "-o", out) == ExitCode.OK
    log = tmp_path / "run.eval"
    assert run("export", out / "imported.db", "--format", "inspect", "-o", log) == ExitCode.OK
    with zipfile.ZipFile(log) as zf:
        names = set(zf.namelist())
        header = json.loads(zf.read("header.json"))
        sample = json.loads(zf.read("samples/add-1_epoch_2.json"))
    assert {"header.json", "summaries.json", "_journal/start.json"} <= names
    assert len([n for n in names if n.startswith("samples/")]) == 4
    assert (header["eval"]["task"], header["eval"]["model"]) == ("inspect-arith", "mockllm/model")
    roles = [m["role"] for m in sample["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert sample["messages"][1]["tool_calls"][0]["function"] == "add"
    assert sample["scores"]["includes"]["value"] == "C"  # Inspect's own score goes back as it came
    assert sample["model_usage"]["mockllm/model"]["input_tokens"] == 200


def test_export_to_a_file_not_named_eval_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "imp"
    assert run("import", "inspect", LOGS / "mcp.eval", "-o", out) == ExitCode.OK
    assert run("export", out / "imported.db", "--format", "inspect") == ExitCode.BAD_INPUT
    assert "-o RUN.eval" in capsys.readouterr().err


def test_secrets_in_a_log_are_redacted_in_the_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "imp"
    assert run("import", "inspect", LOGS / "mcp.eval", "-o", out) == ExitCode.OK
    monkeypatch.setenv("OPENAI_API_KEY", "Thursday-secret-0123456789")
    _, samples = build_log(out / "imported.db")
    assert "Thursday-secret" not in json.dumps(samples)
    export_inspect(out / "imported.db", tmp_path / "x.eval")


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("notes.txt", b"hello", "not an Inspect log (expected a .eval or .json"),
        ("broken.eval", b"not a zip", "not a .eval log (not a zip archive"),
        ("other.json", b'{"samples": []}', "field 'eval': missing"),
        ("cut.json", b'{"eval": {"task": "t"', "not valid JSON"),
    ],
)
def test_bad_input_names_the_file_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes, expected: str
) -> None:
    bad = tmp_path / name
    bad.write_bytes(content)
    assert run("import", "inspect", bad, "-o", tmp_path / "out") == ExitCode.BAD_INPUT
    err = capsys.readouterr().err
    assert str(bad) in err and expected in err
    assert not (tmp_path / "out").exists()
    with pytest.raises(ImportFormatError):
        read_inspect([bad], scrub=redact)
