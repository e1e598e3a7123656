"""What ``proctor init`` drafts a gold call's result to hold, checked by a run on the same server.

Drafted against ``@modelcontextprotocol/server-everything`` (the pinned npm package), whose tools
say whether they are read-only (``annotations.readOnlyHint``): init calls each read-only tool
twice and drafts what both results hold; the others get a review note. ``offline:gold`` then
plays every drafted call in a run of its own (another server process): each drafted
expectation must hold there, or it would fail a working server. The one read-only tool whose
drafted call returns an error in its text (``get-annotated-message`` of type error: "Error:
Operation failed", isError false) gets a review note, and the run flags the result in the report
and in the console's transcript.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from proctor.app.cli import main
from proctor.app.views.transcript_state import DISGUISED_MARK, TranscriptState
from proctor.engine.authoring.expectations import NOT_READ_ONLY
from proctor.scenarios.loader import load_suite
from proctor.scenarios.schema import ResultExpectation
from proctor.store.read.reader import StoreReader
from proctor.store.scores import ScoreName

pytestmark = pytest.mark.slow

EVERYTHING = (
    Path(__file__).resolve().parents[1]
    / "reference_servers"
    / "node_modules"
    / ".bin"
    / "mcp-server-everything"
)
# Its read-only tools that need no client back-channel and return at once: the run plays these.
PLAYED = (
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
)


def _cli(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


@pytest.fixture(scope="module")
def drafted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """The drafted suite, what init printed, and a gold run of the quick read-only tools."""
    if not EVERYTHING.exists():
        pytest.skip("server-everything is not installed: make test installs the reference servers")
    root = tmp_path_factory.mktemp("drafted-everything")
    suite = root / "suite"
    code, printed = _cli("init", str(suite), "--name", "everything", "--server", str(EVERYTHING), "stdio")
    assert code == 0, printed
    db = root / "run.db"
    scenarios = ",".join(f"everything-{tool}" for tool in PLAYED)
    args = ("--models", "offline:gold", "--arms", "everything", "--scenarios", scenarios)
    assert _cli("run", str(suite), *args, "--headless", "--db", str(db))[0] == 0
    return suite, printed, db


def _expectations(suite: Path) -> dict[str, ResultExpectation | None]:
    return {s.gold_tool_calls[0][0].tool: s.gold_tool_calls[0][0].expect for s in load_suite(suite).scenarios}


def test_init_drafts_what_a_read_only_tools_result_holds_and_a_review_note_elsewhere(
    drafted: tuple[Path, str, Path],
) -> None:
    suite, printed, _db = drafted
    expect = _expectations(suite)
    assert len(expect) == 17 and all(e is not None for e in expect.values())
    # the drafted argument is echoed back: the line that holds it is what the result must hold
    assert expect["echo"] == ResultExpectation(contains=["Echo: message"])
    # structuredContent: its small top-level fields, values as the server gave them
    assert expect["get-structured-content"] == ResultExpectation.model_validate(
        {"json": {"$.temperature": 33, "$.conditions": "Cloudy", "$.humidity": 82}}
    )
    assert expect["get-sum"] == ResultExpectation(contains=["The sum of 1 and 1 is 2."])
    # read-only, but the drafted call's result is an error in its text: a person must look
    annotated = expect["get-annotated-message"]
    assert annotated is not None and not annotated.checks
    assert "reads like an error the server did not flag" in str(annotated.review)
    assert '"Error: Operation failed"' in str(annotated.review)
    # not read-only (so never called by init): a review note
    for tool in ("toggle-simulated-logging", "trigger-sampling-request", "gzip-file-as-resource"):
        assert expect[tool] == ResultExpectation(review=NOT_READ_ONLY), tool
    reviewed = sum(e is not None and not e.checks for e in expect.values())
    assert f"{17 - reviewed} drafted from the results of read-only tools" in printed
    assert f"{reviewed} left as expect: {{review: ...}} for you to write" in printed


def test_every_drafted_expectation_holds_when_a_run_plays_the_call_again(
    drafted: tuple[Path, str, Path],
) -> None:
    suite, _printed, db = drafted
    expect = _expectations(suite)
    with StoreReader(db) as reader:
        trials = reader.trials()
        scores = {(s.trial_id, s.name): s for s in reader.scores()}
    assert sorted(t.scenario for t in trials) == sorted(f"everything-{tool}" for tool in PLAYED)
    checked = 0
    for t in trials:
        tfs = scores[(t.id, ScoreName.TFS)]
        assert tfs.value == 1.0 and "unmet_expectations" not in tfs.details, (t.scenario, tfs.details)
        assert t.passed is True, t.scenario
        tool = t.scenario.removeprefix("everything-")
        holds = expect[tool] is not None and expect[tool].checks  # type: ignore[union-attr]
        rule = scores[(t.id, ScoreName.PASSED)].details["rule"]
        assert ("their results holding what they expect" in rule) == holds, (tool, rule)
        checked += holds
    assert checked == len(PLAYED) - 1  # all but get-annotated-message


def test_an_error_in_disguise_is_flagged_in_the_report_and_the_console_though_nothing_was_expected(
    drafted: tuple[Path, str, Path],
) -> None:
    _suite, _printed, db = drafted
    with StoreReader(db) as reader:
        (trial,) = [t for t in reader.trials() if t.scenario == "everything-get-annotated-message"]
        tfs = {s.name: s for s in reader.scores(trial.id)}[ScoreName.TFS]
        events = reader.trial_events(trial.id)
    assert tfs.details["disguised_errors"] == [
        'everything/get-annotated-message({"messageType": "error"}): the text begins "Error: Operation failed"'
    ]
    code, out = _cli("report", str(db), "--format", "json")
    assert code == 0
    notes = json.loads(out)["notes"]
    assert any(
        n.startswith("1 tool result(s) in 1 everything trial(s) read like errors the server did not flag")
        and "Error: Operation failed" in n
        for n in notes
    ), notes
    assert any(n.startswith("1 gold call(s) have a result nobody checks yet") for n in notes), notes
    transcript = TranscriptState(trial.id)
    transcript.load(events)
    (result,) = [e for e in transcript.entries if e.kind == "tool_result"]
    assert result.title.endswith(DISGUISED_MARK)
