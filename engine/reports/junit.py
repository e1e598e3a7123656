"""JUnit XML for CI systems: the run as test cases, and the gate's verdict per arm.

CI tools (GitHub Actions reporters, GitLab, Jenkins, Buildkite) show JUnit natively, so a failed
scenario appears as a failed test with its reason instead of a line in a log. One test case per
scenario x arm x model: it fails when any of its epochs failed, errors when a trial ended in
error, and is skipped when nothing judged it. Text from models and tools is stripped of the
characters XML 1.0 cannot hold, so a hostile answer cannot make the file unreadable.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from proctor.engine.reports.drift_gate import DriftGateResult
from proctor.engine.reports.drift_section import junit_cases
from proctor.engine.reports.gate import FairnessGateResult
from proctor.engine.reports.md_failed_trials import trial_reason
from proctor.engine.reports.report_markdown import cell
from proctor.engine.reports.report_model import Report, RunInfo, StoredScore, TrialEntry, score_details
from proctor.engine.reports.tool_surface import LockCheck
from proctor.store.display_text import sanitize
from proctor.store.scores import (
    D,
    FailureModeDetails,
    ScoreName,
    UnreadableScore,
    parse_details,
)

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
MAX_OUTPUT_CHARS = 4000


def xml_text(text: object) -> str:
    """``text`` with every character XML 1.0 forbids removed."""
    return _NOT_XML.sub("", sanitize(str(text)))


@dataclass
class _Case:
    scenario: str
    arm: str
    model: str
    trials: list[TrialEntry] = field(default_factory=list)


def _failure_reason(trial: TrialEntry) -> str:
    scores = trial.get("scores") or {}
    parts = [f"epoch {trial['epoch']}", trial_reason(trial)]
    mode = _details(scores, ScoreName.FAILURE_MODE, FailureModeDetails)
    if mode is not None and mode.mode:
        parts.append(f"failure mode {mode.mode}: {mode.explanation or mode.evidence}".strip())
    return "; ".join(parts)


def _details(scores: dict[str, StoredScore], name: ScoreName, model: type[D]) -> D | None:
    """A score's details from the report's per-trial JSON; unreadable ones add nothing to the reason."""
    stored = scores.get(name)
    details = None if stored is None else score_details(stored)
    if not isinstance(details, dict):
        return None
    try:
        return parse_details(name, details, model)
    except UnreadableScore:
        return None


def _case_element(case: _Case, suite_name: str) -> tuple[ET.Element, str]:
    """The <testcase> and its outcome: passed, failure, error or skipped."""
    el = ET.Element(
        "testcase",
        name=xml_text(case.scenario if case.model == "" else f"{case.scenario} [{case.model}]"),
        classname=xml_text(f"{suite_name}.{case.arm}"),
        time=f"{sum(float(t['wall_s'] or 0.0) for t in case.trials):.3f}",
    )
    errored = [t for t in case.trials if t["status"] == "error"]
    failed = [t for t in case.trials if t["passed"] is False]
    judged = [t for t in case.trials if t["passed"] is not None]
    n = len(case.trials)
    if errored:
        message = f"{len(errored)}/{n} trial(s) ended in error"
        detail = "\n".join(f"epoch {t['epoch']}: {t['error'] or 'error'}" for t in errored)
        ET.SubElement(el, "error", message=xml_text(message), type="trial_error").text = xml_text(detail)
        outcome = "error"
    elif failed:
        message = f"{n - len(failed)}/{n} epoch(s) passed"
        detail = "\n".join(_failure_reason(t) for t in failed)
        ET.SubElement(el, "failure", message=xml_text(message), type="failed").text = xml_text(detail)
        outcome = "failure"
    elif not judged:
        unfinished = [t for t in case.trials if t["status"] != "finished"]
        why = "not finished" if unfinished else "no score: nothing judged these trials"
        ET.SubElement(el, "skipped", message=xml_text(why))
        outcome = "skipped"
    else:
        outcome = "passed"
    answers = [t["final_answer"] for t in case.trials if t["final_answer"]]
    if answers:
        ET.SubElement(el, "system-out").text = xml_text(str(answers[-1])[:MAX_OUTPUT_CHARS])
    return el, outcome


def _suite(name: str, cases: Sequence[tuple[ET.Element, str]]) -> ET.Element:
    counts = defaultdict(
        int, {o: sum(1 for _, x in cases if x == o) for o in ("failure", "error", "skipped")}
    )
    suite = ET.Element(
        "testsuite",
        name=xml_text(name),
        tests=str(len(cases)),
        failures=str(counts["failure"]),
        errors=str(counts["error"]),
        skipped=str(counts["skipped"]),
        time=f"{sum(float(c.get('time', '0')) for c, _ in cases):.3f}",
    )
    suite.extend(c for c, _ in cases)
    return suite


def _document(name: str, suites: Sequence[ET.Element]) -> str:
    root = ET.Element("testsuites", name=xml_text(name))
    for attr in ("tests", "failures", "errors", "skipped"):
        root.set(attr, str(sum(int(s.get(attr, "0")) for s in suites)))
    root.extend(suites)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def report_junit(
    report: Report,
    gate: FairnessGateResult | None = None,
    drift: DriftGateResult | None = None,
    tool_lock: LockCheck | None = None,
) -> str:
    """The run report (``build_report``) as JUnit: a test suite per arm, a case per scenario x model
    (a replay run: a suite per server, a case per call).

    With ``gate``, a last test suite holds the gate's verdict, one case per MCP arm; with ``drift``,
    one case for the drift gate; with ``tool_lock``, one case for the tool lock.
    """
    run: RunInfo | dict[str, object] = report["run"] or {}
    suite_name = str(run.get("suite") or "proctor")
    models = {t["model"] for t in report["trials"]}
    cases: dict[tuple[str, str, str], _Case] = {}
    for t in report["trials"]:
        model = t["model"] if len(models) > 1 else ""
        key = (t["arm"], t["scenario"], model)
        cases.setdefault(key, _Case(t["scenario"], t["arm"], model)).trials.append(t)
    by_arm: dict[str, list[tuple[ET.Element, str]]] = defaultdict(list)
    for (arm, _, _), case in sorted(cases.items()):
        by_arm[arm].append(_case_element(case, suite_name))
    suites = [_suite(f"{suite_name} / {arm}", elements) for arm, elements in sorted(by_arm.items())]
    if report.get("drift"):  # a replay run: a case per call, not per trial (nothing judged them)
        suites = _drift_suites(report, suite_name)
    if gate is not None:
        suites.append(_gate_suite(gate))
    if drift is not None:
        el = ET.Element(
            "testcase", name=f"at most {drift.max_changed} call(s) drifted", classname="proctor.gate"
        )
        if not drift.passed:
            ET.SubElement(el, "failure", message=xml_text(drift.reason), type="gate").text = xml_text(
                drift.reason
            )
        suites.append(_suite("gate (drift)", [(el, "passed" if drift.passed else "failure")]))
    if tool_lock is not None:
        suites.append(_tool_lock_suite(tool_lock))
    return _document(f"proctor run {run.get('id', '?')}", suites)


def _tool_lock_suite(check: LockCheck) -> ET.Element:
    """The gate's tool-lock check as one case: it fails, listing what changed, when the run's tools
    differ from the lock (or the lock cannot be read)."""
    el = ET.Element(
        "testcase", name=xml_text(f"the run's tools match {check.path}"), classname="proctor.gate"
    )
    if check.holds:
        return _suite("gate (tool lock)", [(el, "passed")])
    lines = check.summary_lines()
    message = xml_text(f"the run's tools differ from the tool lock ({len(lines)} change(s))")
    ET.SubElement(el, "failure", message=message, type="tool_lock").text = xml_text("\n".join(lines))
    return _suite("gate (tool lock)", [(el, "failure")])


def _drift_suites(report: Report, suite_name: str) -> list[ET.Element]:
    """One test suite per server, one case per replayed call (``drift_section.junit_cases``)."""
    suites = []
    for server, calls in sorted(junit_cases(report).items()):
        cases = []
        for name, outcome, message, text in calls:
            el = ET.Element(
                "testcase", name=xml_text(name), classname=xml_text(f"{suite_name}.drift.{server}")
            )
            if outcome == "failure":
                ET.SubElement(el, "failure", message=xml_text(message), type="drift").text = xml_text(
                    text[:MAX_OUTPUT_CHARS]
                )
            elif outcome == "skipped":
                ET.SubElement(el, "skipped", message=xml_text(message))
            cases.append((el, outcome))
        suites.append(_suite(f"{suite_name} / drift / {server}", cases))
    section = report.get("drift")
    if not suites and section is not None and "error" in section:
        el = ET.Element("testcase", name="drift", classname=xml_text(f"{suite_name}.drift"))
        message = xml_text(section["error"])
        ET.SubElement(el, "error", message=message, type="drift").text = message
        suites.append(_suite(f"{suite_name} / drift", [(el, "error")]))
    return suites


def _gate_suite(result: FairnessGateResult) -> ET.Element:
    cases = []
    for a in result.arms:
        el = ET.Element(
            "testcase", name=xml_text(f"{a.arm} beats {result.baseline}"), classname="proctor.gate"
        )
        outcome = "passed"
        if not a.passed:
            ET.SubElement(el, "failure", message=xml_text(a.reason), type="gate").text = xml_text(
                f"{a.arm}: {a.pairs} paired trials, {a.reason}"
            )
            outcome = "failure"
        cases.append((el, outcome))
    return _suite(f"gate (min delta {result.min_delta:+.3f})", cases)


def gate_markdown(result: FairnessGateResult) -> str:
    """A short Markdown table of the gate's verdict, for a CI step summary."""
    rows = [
        f"| {cell(a.arm)} | {a.pairs} | {'-' if a.delta is None else f'{a.delta:+.3f}'} | "
        f"{'pass' if a.passed else '**FAIL**'} ({a.reason}) |"
        for a in result.arms
    ]
    verdict = "passed" if result.passed else "failed"
    return "\n".join(
        [
            f"### proctor gate: {verdict} (baseline {cell(result.baseline)}, min delta {result.min_delta:+.3f})",
            "",
            "| arm | pairs | delta | verdict |",
            "|---|---|---|---|",
            *rows,
            "",
        ]
    )


__all__ = ["gate_markdown", "report_junit", "xml_text"]
