"""The Markdown report as a pull-request page: verdict, caveats, per-tool figures, charts, escaping.

Stores are written with the real StoreWriter (so the report reads what a run writes): a small
hand-checked one for the tool figures and hostile names, one where an arm clearly beats the
baseline, and the real demo run for the page as a user sees it.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from proctor.engine.reports.md_charts import forest_chart
from proctor.engine.reports.md_format import code_text
from proctor.engine.reports.report import OFFLINE_NOTE, build_report
from proctor.engine.reports.report_markdown import render_markdown
from proctor.engine.reports.tool_usage import percentiles
from proctor.engine.runs.options import RunOptions
from proctor.engine.runs.session import run_suite
from proctor.scenarios.demo import SUITE_DIR
from proctor.scenarios.loader import load_suite
from proctor.store.events import (
    ContentBlock,
    Event,
    ListedTool,
    RunFinished,
    Scored,
    ToolCall,
    ToolResult,
    ToolsListed,
    TrialFinished,
    TrialStarted,
    Usage,
)
from proctor.store.read.reader import StoreReader
from proctor.store.scores import FailureModeDetails, FairnessDetails, PassedDetails, ScoreName
from proctor.store.write.writer import StoreWriter, TrialRow

RUN = "page-run"
MODEL = "test:m"
HOSTILE_TOOL = "evil|tool`<b>"
HOSTILE_ARM = "mcp|`x`"
HOSTILE_SCENARIO = "s1|<img src=x>"


def _listed(*tools: tuple[str, str]) -> ToolsListed:
    return ToolsListed(
        tools=[
            ListedTool(name=n, server=s, description="", input_schema={"type": "object"}) for s, n in tools
        ]
    )


def _call(cid: str, server: str, tool: str) -> ToolCall:
    return ToolCall(call_id=cid, server=server, tool=tool, arguments={})


def _result(
    cid: str, server: str, tool: str, content: str, latency: float, *, error: bool = False, image: int = 0
) -> ToolResult:
    blocks = (
        [ContentBlock(type="image", mime_type="image/png", size_bytes=image, sha256="0" * 64)]
        if image
        else []
    )
    return ToolResult(
        call_id=cid,
        server=server,
        tool=tool,
        content=content,
        is_error=error,
        latency_s=latency,
        blocks=blocks,
    )


def _scores(fairness: float, passed: bool) -> list[Event]:
    out: list[Event] = [
        Scored.of(ScoreName.FAIRNESS, fairness, FairnessDetails(layer="fairness", value=fairness)),
        Scored.of(ScoreName.PASSED, float(passed), PassedDetails(rule="test")),
    ]
    if not passed:
        out.append(Scored.of(ScoreName.FAILURE_MODE, None, FailureModeDetails(mode="wrong_tool")))
    return out


def _finished(calls: int) -> TrialFinished:
    usage = Usage(input_tokens=1000, output_tokens=100)
    return TrialFinished(
        status="finished",
        stop="answer",
        final_answer="x",
        tool_calls=calls,
        usage=usage,
        cost_usd=0.01,
        wall_s=1.0,
    )


async def _write(
    db: Path,
    trials: Sequence[tuple[TrialRow, list[Event]]],
    abandoned: dict[int, list[Event]],
    config: dict[str, Any] | None = None,
) -> None:
    """Each trial's events; a trial in ``abandoned`` first runs an attempt 1 that is abandoned (then
    its events above are attempt 2), as ``--resume`` leaves an interrupted trial."""
    async with await StoreWriter.open(db) as w:
        await w.create_run(RUN, "page-suite", config or {})
        await w.add_trials(RUN, [row for row, _ in trials])
        await w.flush()
        with StoreReader(db) as r:
            ids = {t.key: t.id for t in r.trials()}
        for index, events in abandoned.items():
            row = trials[index][0]
            tid = ids[(row.scenario, row.arm, row.model, row.epoch)]
            start = TrialStarted(scenario=row.scenario, arm=row.arm, model=MODEL, epoch=0, seed=0, attempt=1)
            for e in [start, *events]:
                w.emit(RUN, e, trial_id=tid, attempt=1)
        await w.flush()
        await w.abandon_unfinished(RUN)
        for row, events in trials:
            tid = ids[(row.scenario, row.arm, row.model, row.epoch)]
            attempt = 2 if any(trials[i][0] == row for i in abandoned) else 1
            start = TrialStarted(
                scenario=row.scenario, arm=row.arm, model=MODEL, epoch=0, seed=0, attempt=attempt
            )
            for e in [start, *events]:
                w.emit(RUN, e, trial_id=tid, attempt=attempt)
        w.emit(RUN, RunFinished(run_id=RUN, status="finished"))


@pytest.fixture(scope="module")
def tool_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two arms, hand-checked tool traffic, hostile names, and an abandoned attempt that must not count."""
    db = tmp_path_factory.mktemp("tools") / "run.db"
    offered = _listed(
        ("srv", "search"), ("srv", "fetch"), ("srv", HOSTILE_TOOL), ("proctor-router", "execute")
    )
    t1: list[Event] = [
        offered,
        _call("c1", "srv", "search"),
        _result("c1", "srv", "search", "abc", 0.1),
        _call("c2", "srv", "search"),
        _result("c2", "srv", "search", "é", 0.2, error=True),
        _call("c3", "proctor-router", "execute"),  # routed: the result names the tool that ran
        _result("c3", "srv", "fetch", "x" * 10, 0.3, image=100),
        _finished(3),
        *_scores(0.8, True),
    ]
    t2: list[Event] = [
        offered,
        _call("c1", "srv", "search"),
        _result("c1", "srv", "search", "", 0.4),
        _call("c2", "srv", "search"),  # no result: the trial was cut
        _finished(2),
        *_scores(0.4, False),
    ]
    base = [_listed(("builtin", "grep")), _finished(0)]
    trials = [
        (TrialRow(HOSTILE_SCENARIO, HOSTILE_ARM, MODEL, 0, 0), t1),
        (TrialRow("s2", HOSTILE_ARM, MODEL, 0, 0), t2),
        (TrialRow(HOSTILE_SCENARIO, "baseline", MODEL, 0, 0), [*base, *_scores(0.5, False)]),
        (TrialRow("s2", "baseline", MODEL, 0, 0), [*base, *_scores(0.5, False)]),
    ]
    stale: list[Event] = [
        offered,
        _call("c1", "srv", HOSTILE_TOOL),
        _result("c1", "srv", HOSTILE_TOOL, "zz", 9.0),
    ]
    asyncio.run(_write(db, trials, {1: stale}))
    return db


def _arm_usage(report: dict[str, Any], arm: str) -> dict[str, Any]:
    return next(a for a in report["tool_usage"]["arms"] if a["arm"] == arm)


def test_tool_usage_figures_by_hand(tool_store: Path) -> None:
    report = build_report(tool_store)
    mcp = _arm_usage(report, HOSTILE_ARM)
    tools = {(t["server"], t["tool"]): t for t in mcp["tools"]}
    assert set(tools) == {("srv", "search"), ("srv", "fetch")}  # the abandoned attempt's call is gone
    search = tools[("srv", "search")]
    assert (search["calls"], search["results"], search["errors"], search["no_result"]) == (4, 3, 1, 1)
    assert search["error_rate"] == pytest.approx(1 / 3)
    assert search["latency_s"]["p50"] == pytest.approx(0.2)
    assert search["latency_s"]["p95"] == pytest.approx(0.38)  # 0.2 + 0.9 · (0.4 − 0.2), linear
    assert search["result_bytes"] == {"total": 5, "mean": pytest.approx(5 / 3)}  # "abc" + "é" (2 bytes) + ""
    assert search["trials"] == 2 and search["offered_in_trials"] == 2
    fetch = tools[("srv", "fetch")]
    assert (fetch["calls"], fetch["result_bytes"]["total"], fetch["trials"]) == (
        1,
        110,
        1,
    )  # 10 text + 100 image
    assert fetch["latency_s"] == {"p50": pytest.approx(0.3), "p95": pytest.approx(0.3)}
    # execute was called (it ran fetch), so only the hostile tool was never called.
    assert mcp["never_called"] == [{"server": "srv", "tool": HOSTILE_TOOL, "offered_in_trials": 2}]
    base = _arm_usage(report, "baseline")
    assert mcp["offered_tools"] == 4
    assert base["tools"] == [] and base["never_called"] == [
        {"server": "builtin", "tool": "grep", "offered_in_trials": 2}
    ]
    assert "numpy.percentile" in report["tool_usage"]["definitions"]["latency_percentiles"]


def test_percentiles_follow_numpy_linear() -> None:
    assert percentiles([]) == (None, None)
    assert percentiles([0.5]) == (0.5, 0.5)
    p50, p95 = percentiles([1.0, 2.0, 3.0, 4.0])
    assert p50 == pytest.approx(2.5) and p95 == pytest.approx(3.85)


def _section(md: str, heading: str) -> str:
    start = md.index(f"\n## {heading}\n")
    end = md.find("\n## ", start + 1)
    return md[start : end if end >= 0 else len(md)]


def test_tool_table_and_never_called_on_the_page(tool_store: Path) -> None:
    md = render_markdown(build_report(tool_store))
    tools = _section(md, "Tools")
    assert (
        "| mcp\\|\\`x\\` · test:m | srv | search | 4 (1 without result) | 1 (33.33 %) | 200.0 ms | 380.0 ms | 5 B | 2 B | 2 of 2 |"
        in tools
    )
    assert "| srv | fetch | 1 | 0 (0.00 %) | 300.0 ms | 300.0 ms | 110 B | 110 B | 1 of 2 |" in tools
    assert "- mcp\\|\\`x\\` · test:m: evil\\|tool\\`\\<b\\> (srv)" in tools
    assert "- baseline · test:m: grep (builtin)" in tools
    caveats = _section(md, "Caveats")
    assert "1 of 4 offered tools were never called" in caveats and "evil\\|tool\\`\\<b\\> (srv)" in caveats


def test_hostile_names_are_escaped_everywhere(tool_store: Path) -> None:
    md = render_markdown(build_report(tool_store))
    for raw in (HOSTILE_TOOL, HOSTILE_ARM):
        assert raw not in md
    assert not re.search(r"(?<!\\)<(img|b>)", md)  # every < of a name is escaped
    assert "s1\\|\\<img src=x\\>" in _section(md, "Per scenario")
    fences = [line for line in md.splitlines() if line.startswith("```")]
    assert len(fences) % 2 == 0 and all(line in ("```text", "```") for line in fences)
    # Inside a code block the name loses its backticks (so the fence cannot close early).
    chart = "\n".join(forest_chart(build_report(tool_store)["arms"]))
    assert "mcp|'x'" in chart and chart.count("```") == 2
    assert code_text("a`bcd\x1b[2J", 4) == "a'b…"  # the escape is removed whole, then cut


def test_failure_modes_and_per_scenario_tables(tool_store: Path) -> None:
    md = render_markdown(build_report(tool_store))
    modes = _section(md, "Failure modes")
    assert "| wrong\\_tool | tool call: a tool that cannot answer" in modes
    assert modes.rstrip().endswith("| **failed trials** |  | **1** | **2** |")
    scenarios = _section(md, "Per scenario")
    assert "| s2 | 0/1 · 0.400 | 0/1 · 0.500 |" in scenarios


async def _clear_win(db: Path) -> None:
    """12 scenarios: arm ``mcp`` is far above the baseline, arm ``tiny`` above it by less than the floor."""
    trials: list[tuple[TrialRow, list[Event]]] = []
    for i in range(12):
        jitter = (i % 3) * 0.01
        for arm, fairness, passed in (
            ("baseline", 0.3 + jitter, False),
            ("mcp", 0.8 + jitter + (i % 2) * 0.02, True),
            ("tiny", 0.32 + jitter + (i % 2) * 0.002, False),
        ):
            trials.append(
                (TrialRow(f"s{i:02}", arm, MODEL, 0, 0), [_finished(2), *_scores(fairness, passed)])
            )
    await _write(db, trials, {})


def test_verdict_when_an_arm_clearly_beats_the_baseline(tmp_path: Path) -> None:
    db = tmp_path / "win.db"
    asyncio.run(_clear_win(db))
    report = build_report(db)
    md = render_markdown(report)
    verdict = _section(md, "Verdict")
    mcp = next(a for a in report["arms"] if a["arm"] == "mcp")["vs_baseline"]["fairness_delta"]
    assert mcp["low"] > 0.4
    assert "Better than the baseline on fairness, beyond chance: mcp · test:m, tiny · test:m." in verdict
    assert (
        f"- **mcp · test:m** passed 12/12 against the baseline's 0/12 and scored higher on fairness "
        f"(Δ {mcp['mean']:+.3f} on the 0–1 scale) over 12 paired trials; both differences are beyond "
        f"chance: the fairness 95% CI {mcp['low']:+.3f} to {mcp['high']:+.3f} excludes 0, and McNemar's "
        "exact p < 0.001 (12 pair(s) passed only with the arm, 0 only with the baseline)." in verdict
    )
    tiny = re.search(r"- \*\*tiny · test:m\*\* .*", verdict)
    assert tiny is not None and "but by less than the variance floor (0.05)" in tiny.group(0)
    assert "McNemar's test has no discordant pair" in tiny.group(0)
    assert "no correction for multiple comparisons" in _section(md, "Caveats")


def test_verdict_says_no_evidence_when_the_interval_contains_zero(tool_store: Path) -> None:
    report = build_report(tool_store)
    d = next(a for a in report["arms"] if a["arm"] == HOSTILE_ARM)["vs_baseline"]["fairness_delta"]
    assert d["low"] < 0 < d["high"]  # pairs differ by +0.3 and -0.1
    verdict = _section(render_markdown(report), "Verdict")
    assert "No fairness difference is beyond chance" in verdict
    assert "cannot tell either difference from chance" in verdict or "could be chance" in verdict
    assert "contains 0" in verdict


def test_imported_trajectories_without_times_or_tool_lists(tmp_path: Path) -> None:
    db = tmp_path / "imported.db"
    events: list[Event] = [
        _call("c1", "srv", "search"),
        _result("c1", "srv", "search", "abc", 0.0),
        _finished(1),
    ]
    imported = {"imported": {"format": "livemcpbench", "wall_s": "not recorded (0)"}}
    asyncio.run(_write(db, [(TrialRow("s1", "a", MODEL, 0, 0), events)], {}, imported))
    report = build_report(db)
    usage = report["tool_usage"]
    assert usage["latency_recorded"] is False
    assert usage["arms"][0]["tools"][0]["latency_s"] == {"p50": None, "p95": None}
    md = render_markdown(report)
    tools = _section(md, "Tools")
    assert (
        "| a · test:m | srv | search | 1 | 0 (0.00 %) | not recorded | not recorded | 3 B | 3 B | 1 of 1 |"
        in tools
    )
    assert "No list of offered tools was recorded for a · test:m" in tools and "(not offered)" not in tools
    assert "No trial has a pass/fail verdict yet" in _section(md, "Failure modes")
    assert "No arm was compared with a baseline" in _section(md, "Verdict")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    db = tmp_path_factory.mktemp("demo") / "demo.db"
    assert asyncio.run(run_suite(load_suite(SUITE_DIR), RunOptions(db=db))) == "finished"
    return build_report(db), db


@pytest.mark.slow
def test_demo_page_opens_with_verdict_and_caveats(demo: tuple[dict[str, Any], Path]) -> None:
    report, _ = demo
    md = render_markdown(report)
    headings = re.findall(r"^## (.+)$", md, flags=re.MULTILINE)
    assert headings[:3] == ["Verdict", "Caveats", "Arms × models"]
    assert headings[-1] == "Legend"
    for h in ("Per scenario", "Failure modes", "Tools", "Cost vs fairness", "Against the baseline"):
        assert h in headings
    verdict = _section(md, "Verdict")
    assert "- **codeintel · offline:default** passed 7/10 against the baseline's 3/10 and scored " in verdict
    assert "McNemar's exact p" in verdict
    caveats = _section(md, "Caveats")
    assert f"- {OFFLINE_NOTE}" in caveats
    assert "codeintel+distractors · offline:default: 7 of 13 offered tools were never called" in caveats
    assert "get\\_forecast, list\\_cities (weather)" in caveats
    legend = _section(md, "Legend")
    for term in (
        "**fairness**",
        "**adoption**",
        "**grounding g/u/h**",
        "**TFS / TEFS**",
        "**McNemar exact p**",
    ):
        assert term in legend


@pytest.mark.slow
def test_demo_charts_are_text_in_code_blocks(demo: tuple[dict[str, Any], Path]) -> None:
    md = render_markdown(demo[0])
    cost = _section(md, "Cost vs fairness")
    assert "```text\nmean fairness (0–1, up is better) against agent tokens per trial (estimated)" in cost
    assert re.search(r"^ 0\.\d{3} ┤", cost, flags=re.MULTILINE) and "└" in cost
    assert "| A | baseline · offline:default |" in cost
    versus = _section(md, "Against the baseline")
    assert "```text\nΔ fairness (arm − baseline, 0–1 scale)" in versus
    assert re.search(r"^codeintel_stale +[ ├─┼│o┤]+ +-?\+?\d", versus, flags=re.MULTILINE)


@pytest.mark.slow
def test_demo_tool_usage_agrees_with_the_trials(demo: tuple[dict[str, Any], Path]) -> None:
    report, db = demo
    with StoreReader(db) as r:
        per_arm = Counter[str]()
        for t in r.trials():
            per_arm[t.arm] += t.tool_calls or 0
    usage = {a["arm"]: a for a in report["tool_usage"]["arms"]}
    for arm, calls in per_arm.items():
        assert sum(t["calls"] for t in usage[arm]["tools"]) == calls, arm
    routed = usage["codeintel+distractors"]
    assert {t["server"] for t in routed["tools"]} >= {"codeintel", "proctor-router"}
    assert "execute" not in {n["tool"] for n in routed["never_called"]}
    failed = Counter(t["arm"] for t in report["trials"] if t["passed"] is False)
    modes = _section(render_markdown(report), "Failure modes").strip().splitlines()[-1]
    assert (
        modes
        == "| **failed trials** |  | " + " | ".join(f"**{failed[a['arm']]}**" for a in report["arms"]) + " |"
    )


@pytest.mark.slow
def test_demo_page_lists_each_failed_trial_with_the_rule_that_failed_it(
    demo: tuple[dict[str, Any], Path],
) -> None:
    report, _ = demo
    failed = _section(render_markdown(report), "Failed trials")
    rows = [r for r in failed.splitlines() if r.startswith("| ") and not r.startswith("| trial")]
    assert len(rows) == sum(t["passed"] is False or t["status"] == "error" for t in report["trials"]) > 0
    stale = next(
        t for t in report["trials"] if (t["scenario"], t["arm"]) == ("sqlite-claim", "codeintel_stale")
    )
    assert (
        f"| {stale['id']} | sqlite-claim | codeintel\\_stale · offline:default | 0 | failed on grounding: "
        "7 of 27 citations grounded (26%) \\< scoring.pass\\_requires\\_grounding 80% |" in rows
    )
    assert all("| failed on " in r or "| error: " in r for r in rows)


def test_demo_page_lists_the_stale_arms_hallucinated_citations_with_their_lines(
    demo: tuple[dict[str, Any], Path],
) -> None:
    report, _ = demo
    section = _section(render_markdown(report), "Hallucinated citations")
    rows = [line for line in section.splitlines() if line.startswith("| #")]
    stale = sum(a["grounding"]["hallucinated"] for a in report["arms"] if a["arm"] == "codeintel_stale")
    assert len(rows) == stale > 10
    assert all("codeintel\\_stale · offline:default" in row for row in rows)
    assert "file\\_line: each (file, line range) counted once" in section
    # The stale index's lines are nine too high: the line shown is what the commit has there.
    assert any(
        re.search(r"\| \d+: .+ \| the quoted code is at line (\d+), 9 lines from the cited line", row)
        for row in rows
    )
