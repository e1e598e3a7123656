"""A suite drafted by ``proctor init`` from a real server is decided by its gold calls, not by prose.

Every scenario ``init`` drafts has one check: the gold tool call. The offline judge has nothing
to check in such a scenario, so its opinion of the answer must not pass a trial; the tool-call
match does, and a call the server answered with an error is no match. Drafted against
``@modelcontextprotocol/server-filesystem`` (the pinned npm package), whose drafted arguments
name paths that do not exist: nearly every call fails, and init, which calls the read-only tools
to draft what their results must hold, leaves those for review. The baseline offers none of the
server's tools, so it cannot make any gold call: it gets no verdict and no fairness, the report
compares nothing with it (no "worse than the baseline") and says why, and the gate cannot
compare either and says why.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from proctor.app.cli import main
from proctor.engine.authoring.expectations import NOT_READ_ONLY
from proctor.scenarios.loader import load_suite
from proctor.store.events import ToolResult
from proctor.store.read.reader import StoreReader

pytestmark = pytest.mark.slow

FILESYSTEM = (
    Path(__file__).resolve().parents[1]
    / "reference_servers"
    / "node_modules"
    / ".bin"
    / "mcp-server-filesystem"
)


def _cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


@pytest.fixture(scope="module")
def drafted_suite(drafted_run: Path) -> Path:
    return drafted_run.parent / "suite"


def test_init_drafts_expectations_from_read_only_tools_and_leaves_review_notes_elsewhere(
    drafted_suite: Path,
) -> None:
    loaded = load_suite(drafted_suite)
    expect = {s.gold_tool_calls[0][0].tool: s.gold_tool_calls[0][0].expect for s in loaded.scenarios}
    assert all(e is not None for e in expect.values())
    # write_file, edit_file, create_directory and move_file do not say they are read-only: not called
    for tool in ("write_file", "edit_file", "create_directory", "move_file"):
        assert expect[tool] is not None and expect[tool].review == NOT_READ_ONLY
    # read-only and called twice: what came back is what the drafted call must get again
    allowed = expect["list_allowed_directories"]
    assert allowed is not None and allowed.contains == ["Allowed directories:"]
    # the drafted path does not exist: an error, flagged or in the text, is left for a person
    text = expect["read_text_file"]
    assert text is not None and "the server answered with an error" in str(text.review)
    many = expect["read_multiple_files"]
    assert many is not None and "reads like an error the server did not flag" in str(many.review)
    assert "Error - ENOENT" in str(many.review)
    warnings = [w for w in loaded.warnings if "nothing checks what it returns" in w]
    assert len(warnings) == sum(e is not None and not e.checks for e in expect.values()) >= 8


@pytest.fixture(scope="module")
def drafted_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not FILESYSTEM.exists():
        pytest.skip("server-filesystem is not installed: make test installs the reference servers")
    root = tmp_path_factory.mktemp("drafted")
    allowed = root / "allowed"
    allowed.mkdir()
    (allowed / "notes.txt").write_text("hello\n")
    suite = root / "suite"
    assert _cli("init", str(suite), "--name", "fs", "--server", str(FILESYSTEM), str(allowed))[0] == 0
    db = root / "run.db"
    assert _cli("run", str(suite), "--headless", "--db", str(db))[0] == 0
    return db


def test_a_drafted_scenario_passes_only_on_its_gold_calls(drafted_run: Path) -> None:
    with StoreReader(drafted_run) as reader:
        trials = reader.trials()
        scores = {(s.trial_id, s.name): s for s in reader.scores()}
    fs = [t for t in trials if t.arm == "fs"]
    assert len(fs) == 14 and all(t.status == "finished" for t in fs)
    for t in fs:
        tfs = scores[(t.id, "tfs")]
        rule = scores[(t.id, "passed")].details["rule"]
        assert rule.startswith("tool-call match (TFS, strict)"), rule
        assert t.passed == (tfs.value == 1.0)
    # On main the offline judge passed 13 of 14 on the prose while TFS was 0 for every one.
    assert sum(bool(t.passed) for t in fs) == sum(scores[(t.id, "tfs")].value == 1.0 for t in fs)


def test_a_drafted_expectation_is_checked_and_an_error_in_disguise_is_flagged_not_failed(
    drafted_run: Path,
) -> None:
    with StoreReader(drafted_run) as reader:
        trials = {t.scenario: t for t in reader.trials() if t.arm == "fs"}
        scores = {(s.trial_id, s.name): s for s in reader.scores()}
    allowed = trials["fs-list_allowed_directories"]
    assert allowed.passed is True
    assert scores[(allowed.id, "passed")].details["rule"].endswith("their results holding what they expect")
    # isError false and "paths: Error - ENOENT ..." in the text: the call was made, so TFS holds,
    # and the result is listed as reading like an error
    many = trials["fs-read_multiple_files"]
    tfs = scores[(many.id, "tfs")]
    assert tfs.value == 1.0
    (disguised,) = tfs.details["disguised_errors"]
    assert disguised.startswith(
        'fs/read_multiple_files({"paths": ["paths"]}): the text begins "paths: Error - ENOENT'
    )


def test_a_call_the_server_answered_with_an_error_is_no_match(drafted_run: Path) -> None:
    with StoreReader(drafted_run) as reader:
        trials = {t.id: t for t in reader.trials()}
        results = [
            e.event
            for e in reader.events_of_kind(
                "tool_result", after_id=0, up_to_id=reader.max_event_id(), limit=10_000
            )
            if isinstance(e.event, ToolResult)
        ]
        tfs = [s for s in reader.scores() if s.name == "tfs" and trials[s.trial_id].arm == "fs"]
    errors = [r for r in results if r.is_error]
    assert errors, "the drafted calls are expected to fail on this server"
    failed = [s for s in tfs if s.details.get("failed_calls")]
    assert failed and all(s.value == 0.0 for s in failed)


def test_a_baseline_without_the_servers_tools_gets_no_verdict_no_fairness_and_no_delta(
    drafted_run: Path,
) -> None:
    """On main this baseline scored fairness 0.999 on efficiency alone (it answered at once) and the
    report called the server's arm "worse than the baseline, Δ -0.057, CI excludes 0"."""
    with StoreReader(drafted_run) as reader:
        trials = [t for t in reader.trials() if t.arm == "baseline"]
        scores = {(s.trial_id, s.name): s for s in reader.scores()}
    assert len(trials) == 14 and all(t.passed is None for t in trials)
    for t in trials:
        assert scores[(t.id, "passed")].details["tools_not_offered"] is True
        fairness = scores[(t.id, "fairness")]
        assert fairness.value is None and "does not offer their tools" in fairness.details["na"]
    code, out = _cli("report", str(drafted_run), "--format", "json")
    assert code == 0
    report = json.loads(out)
    (fs,) = [a for a in report["arms"] if a["arm"] == "fs"]
    assert fs["vs_baseline"]["fairness_delta"] is None and fs["vs_baseline"]["tools_not_offered"] == 14
    assert any("14 baseline trial(s) cannot make their scenario's gold calls" in n for n in report["notes"])
    assert any("gold call(s) have a result nobody checks yet" in n for n in report["notes"])
    code, md = _cli("report", str(drafted_run), "--format", "md")
    assert code == 0
    assert "worse than the baseline" not in md and "Worse than" not in md
    assert "14 of 14 pair(s) are left out: the baseline does not offer the tools" in md


def test_the_gate_cannot_compare_with_a_baseline_that_cannot_make_the_gold_calls_and_says_why(
    drafted_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out = _cli("gate", str(drafted_run), "--baseline", "baseline", "--min-delta", "0")
    err = capsys.readouterr().err
    assert code == 2
    assert "baseline arm 'baseline' has no scored trials" in err
    assert "14 trials: the arm does not offer the tools of the scenario's gold calls" in err
