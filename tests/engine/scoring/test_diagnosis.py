"""diagnose(): one primary tool-call failure mode per failed trial, with a fixed precedence."""

from __future__ import annotations

from typing import Any

from proctor.engine.scoring import COGNITIVE_MODES, TOOL_CALL_MODES, ToolCallRecord, TrialDigest, diagnose
from proctor.scenarios.schema import GoldCall

SCHEMAS: dict[str, dict[str, Any]] = {
    "search": {"properties": {"query": {"type": "string"}}, "required": ["query"]},
    "read": {"properties": {"path": {"type": "string"}}, "required": ["path"]},
}


def _t(*calls: ToolCallRecord) -> TrialDigest:
    return TrialDigest(answer_text="answer", audit_text="", final_answer="answer", tool_calls=calls)


def _c(
    call_id: str, tool: str, ok: bool = True, error_type: str = "", result: bool = True, **args: Any
) -> ToolCallRecord:
    return ToolCallRecord(
        call_id=call_id,
        server="s",
        tool=tool,
        arguments=args,
        step=0,
        has_result=result,
        is_error=not ok,
        error_type=error_type,
    )


def test_taxonomy_ids_match_mcp_atlas() -> None:
    assert set(TOOL_CALL_MODES) == {"malformed_call", "wrong_tool", "no_tool_use", "err_recovery"}
    assert len(COGNITIVE_MODES) == 7 and "early_termination" in COGNITIVE_MODES


def test_no_tool_use() -> None:
    d = diagnose(_t())
    assert d is not None and (d.mode, d.category, d.rule) == ("no_tool_use", "tool_call", "no_calls")
    assert diagnose(_t(), tools_available=False) is None


def test_wrong_tool_from_gold_and_from_unknown_tools() -> None:
    gold = [[GoldCall(tool="search", arguments={"query": "x"})]]
    d = diagnose(_t(_c("1", "read", path="a")), gold=gold)
    assert d is not None and (d.mode, d.rule) == ("wrong_tool", "no_gold_tool")
    d = diagnose(_t(_c("1", "fetch_web", ok=False)), tool_schemas=SCHEMAS)
    assert d is not None and (d.mode, d.rule) == ("wrong_tool", "unknown_tools")


def test_malformed_call_by_schema_or_error_type_unless_recovered() -> None:
    d = diagnose(_t(_c("1", "read", ok=False, file="a")), tool_schemas=SCHEMAS)
    assert d is not None and (d.mode, d.rule, d.call_ids) == ("malformed_call", "bad_arguments", ("1",))
    assert "unknown argument 'file'" in d.explanation
    d = diagnose(_t(_c("1", "search", ok=False, error_type="invalid_params", query=3)))
    assert d is not None and d.mode == "malformed_call"
    # fixed on the next call: the malformed call is not the failure; nothing else is provable
    recovered = _t(_c("1", "read", ok=False, file="a"), _c("2", "read", path="a"))
    assert diagnose(recovered, tool_schemas=SCHEMAS) is None


def test_malformed_takes_precedence_over_repeated_failures() -> None:
    calls = (_c("1", "read", ok=False, file="a"), _c("2", "read", ok=False, file="a"))
    d = diagnose(_t(*calls), tool_schemas=SCHEMAS)
    assert d is not None and d.mode == "malformed_call"


def test_repeated_identical_failing_call_is_err_recovery() -> None:
    calls = (
        _c("1", "search", ok=False, error_type="timeout", query="x"),
        _c("2", "search", ok=False, error_type="timeout", query=" x "),  # same after normalization
        _c("3", "search", ok=False, error_type="timeout", query="y"),
    )
    d = diagnose(_t(*calls))
    assert d is not None and (d.mode, d.rule, d.call_ids) == ("err_recovery", "repeated_failure", ("1", "2"))


def test_error_given_up_on_is_err_recovery() -> None:
    d = diagnose(_t(_c("1", "search", query="x"), _c("2", "read", result=False, path="a")))
    assert d is not None and (d.mode, d.rule, d.call_ids) == ("err_recovery", "error_not_recovered", ("2",))
    assert "returned no result" in d.explanation
    retried_ok = _t(_c("1", "read", ok=False, error_type="io", path="a"), _c("2", "read", path="b"))
    assert diagnose(retried_ok) is None


def test_wrong_values_against_gold_is_malformed_call() -> None:
    gold = [[GoldCall(tool="search", arguments={"query": "Sofia Reyes"})]]
    d = diagnose(_t(_c("1", "search", query="Shakira")), gold=gold)
    assert d is not None and (d.mode, d.rule) == ("malformed_call", "wrong_values")
    # extra arguments are fine as long as the gold ones agree
    assert diagnose(_t(_c("1", "search", query="Sofia Reyes", limit=3)), gold=gold) is None
    assert diagnose(_t(_c("1", "search", query="Shakira")), gold=gold, names_only=["search"]) is None


def test_an_error_the_gold_expects_is_not_a_failure_but_another_error_still_is() -> None:
    refuse = [[GoldCall(tool="read", arguments={"path": "/etc/passwd"}, expect_error=True)]]
    refused = _c("1", "read", ok=False, error_type="denied", path="/etc/passwd")
    assert diagnose(_t(refused), gold=refuse, tool_schemas=SCHEMAS) is None
    assert diagnose(_t(refused, refused), gold=refuse, tool_schemas=SCHEMAS) is None
    other = _c("2", "read", ok=False, error_type="io", path="/tmp/x")
    d = diagnose(_t(refused, other), gold=refuse, tool_schemas=SCHEMAS)
    assert d is not None and (d.mode, d.call_ids) == ("err_recovery", ("2",))
    # without expect_error the same refusal is an error given up on
    plain = [[GoldCall(tool="read", arguments={"path": "/etc/passwd"})]]
    d = diagnose(_t(refused), gold=plain, tool_schemas=SCHEMAS)
    assert d is not None and (d.mode, d.rule) == ("err_recovery", "error_not_recovered")


def test_clean_trace_proves_nothing() -> None:
    gold = [[GoldCall(tool="search", arguments={"query": "x"})]]
    assert diagnose(_t(_c("1", "search", query="x")), gold=gold, tool_schemas=SCHEMAS) is None
