"""The writer redacts a batch's payloads together: exactly as redacting each one, nothing missed."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.store.event_facts import stored_fact
from proctor.store.events import FinalAnswer, Judged, Scored, ToolResult, TrialFinished, Usage
from proctor.store.redaction import redact
from proctor.store.write import batch_payloads, write_queue
from proctor.store.write.batch_payloads import finish_payloads
from proctor.store.write.write_queue import WriteQueue
from proctor.store.write.writer import StoreWriter, TrialRow, decode_payload, redact_payloads

ENV_SECRET = "s3cr3t-v@lue-42xyz"
TOKENS = [
    "ghp_" + "A1b2C3d4E5" * 4,
    "sk-ant-api03-" + "Z" * 40,
    "AKIAIOSFODNN7EXAMPLE",
    "Bearer abcdefghijklmnopqrstuvwxyz0123",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7r0\nabc+/=\n-----END RSA PRIVATE KEY-----",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ENV_SECRET,
]


@pytest.fixture(autouse=True)
def _env_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_SERVICE_TOKEN", ENV_SECRET)


def _payload(text: str) -> bytes:
    return (
        ToolResult(call_id="c", server="s", tool="t", content=text, is_error=False, latency_s=0)
        .model_dump_json()
        .encode()
    )


def _one_by_one(payloads: list[bytes]) -> list[bytes]:
    return [redact(p.decode()).encode() for p in payloads]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(max_size=40),
            st.sampled_from(["", *TOKENS]),
            st.text(max_size=40),
        ),
        max_size=12,
    ),
    st.integers(min_value=1, max_value=400),
)
def test_a_batch_is_redacted_as_each_payload_is(parts: list[tuple[str, str, str]], group: int) -> None:
    payloads = [_payload(before + token + after) for before, token, after in parts]
    original = list(payloads)
    batch_payloads.REDACT_GROUP_BYTES, saved = group, batch_payloads.REDACT_GROUP_BYTES
    try:
        assert redact_payloads(payloads) == _one_by_one(payloads)
    finally:
        batch_payloads.REDACT_GROUP_BYTES = saved
    assert payloads == original  # the input list is left alone


def test_nothing_to_redact_returns_the_same_list() -> None:
    payloads = [_payload("plain text"), _payload("more\nplain text")]
    assert redact_payloads(payloads) is payloads
    assert redact_payloads([]) == []


def test_a_group_whose_separators_a_replacement_ate_is_redacted_payload_by_payload(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A secret that spans the separator (it cannot occur in JSON, but say one did) falls back."""
    payloads = [b'{"a":"x"}', b'{"b":"y"}']
    calls: list[str] = []

    def eating(text: str) -> str:
        calls.append(text)
        return text.replace('"}\x00{"', "[gone]").replace('"x"', '"X"')

    monkeypatch.setattr(batch_payloads, "may_need_redaction", lambda _data: True)
    monkeypatch.setattr(batch_payloads, "redact", eating)
    assert redact_payloads(payloads) == [b'{"a":"X"}', b'{"b":"y"}']
    assert len(calls) == 3  # the group, then each payload


async def _run(path: Path) -> StoreWriter:
    w = await StoreWriter.open(path, flush_interval_s=0.01)
    await w.create_run("r1", "suite", {})
    await w.add_trials("r1", [TrialRow("s", "a", "m", 0, 0), TrialRow("s2", "a", "m", 0, 1)])
    return w


async def test_secrets_in_any_event_and_in_derived_rows_never_reach_the_file(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    w = await _run(db)
    for i, token in enumerate(TOKENS):
        w.emit("r1", ToolResult(call_id=f"c{i}", server="s", tool="t", content=f"out {token} end",
                                is_error=False, latency_s=0.1), trial_id=1)  # fmt: skip
        w.emit("r1", FinalAnswer(text=token), trial_id=1)
    w.emit("r1", Scored(name="keywords", value=1.0, details={"note": TOKENS[0], "k": ENV_SECRET}), trial_id=1)
    w.emit("r1", Judged(pass_no=1, judge="j", verdict={"score": 0.5, "rationale": TOKENS[3]}), trial_id=1)
    w.emit(
        "r1",
        TrialFinished(
            status="finished",
            stop="answer",
            final_answer=f"key {ENV_SECRET}",
            tool_calls=1,
            usage=Usage(),
            cost_usd=0.0,
            wall_s=1.0,
        ),
        trial_id=2,
    )
    w.emit("r1", ToolResult(call_id="big", server="s", tool="t", content="x" * 70_000 + " " + TOKENS[1],
                            is_error=False, latency_s=0.1), trial_id=2)  # fmt: skip
    await w.close()
    conn = sqlite3.connect(db)
    stored = b"\n".join(
        decode_payload(enc, payload) for enc, payload in conn.execute("SELECT encoding, payload FROM events")
    )
    rows = json.dumps(
        [
            conn.execute("SELECT details FROM scores").fetchall(),
            conn.execute("SELECT verdict FROM judgments").fetchall(),
            conn.execute("SELECT final_answer FROM trials").fetchall(),
        ]
    )
    for token in TOKENS:
        for piece in token.split("\n"):
            if len(piece) >= 16 or piece == ENV_SECRET:
                assert piece.encode() not in stored, piece
                assert piece not in rows, piece
    assert b"[redacted: $BENCH_SERVICE_TOKEN]" in stored
    assert "[redacted: $BENCH_SERVICE_TOKEN]" in rows and "[redacted: github-token]" in rows
    assert conn.execute("SELECT count(*) FROM events WHERE encoding = 'zlib'").fetchone() == (1,)


def _queued(payloads: list[bytes]) -> WriteQueue:
    q = WriteQueue(batch_size=100_000, flush_interval_s=60)
    for p in payloads:
        q.add_event("r1", 1, 0, 0.0, "tool_result", p, ToolResult, None, None, stored_fact("tool_result", p))
    q.close()  # take without waiting for company
    return q


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(max_size=40), st.sampled_from(["", *TOKENS]), st.text(max_size=40)), max_size=12
    ),
    st.integers(min_value=1, max_value=400),
)
def test_payloads_checked_as_queued_and_redacted_at_commit_are_stored_as_each_redacted(
    parts: list[tuple[str, str, str]], group: int
) -> None:
    """The emitting thread passes the groups that need nothing; the writer thread redacts the rest,
    and the facts stored beside each event are those of its redacted payload."""
    payloads = [_payload(before + token + after) for before, token, after in parts]
    write_queue.CHECK_GROUP_BYTES, saved = group, write_queue.CHECK_GROUP_BYTES
    try:
        batch = _queued(payloads).take()
    finally:
        write_queue.CHECK_GROUP_BYTES = saved
    finish_payloads(batch.flat, batch.derived, batch.checked, batch.facts)
    stored = _one_by_one(payloads)
    assert batch.flat[6::7] == stored
    assert batch.facts == [(row, stored_fact("tool_result", p)) for row, p in enumerate(stored)]


def test_the_emitting_thread_checks_groups_until_one_may_hold_a_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(write_queue, "CHECK_GROUP_BYTES", 1000)
    plain = _payload("p" * 600)
    assert _queued([plain] * 5).take().checked == 4  # the fifth waits for company
    assert _queued([plain] * 4 + [_payload(TOKENS[0])] + [plain] * 4).take().checked == 4
    huge = _payload("h" * (write_queue.CHECK_PAYLOAD_MAX_BYTES + 1))
    assert _queued([plain] * 2 + [huge] + [plain] * 4).take().checked == 2  # the rest: the writer thread


async def test_a_secret_after_checked_events_is_redacted_in_the_event_and_its_derived_rows(
    tmp_path: Path,
) -> None:
    db = tmp_path / "run.db"
    w = await _run(db)
    for i in range(300):  # about 100 KB the emitting thread finds clean
        w.emit("r1", ToolResult(call_id=f"c{i}", server="s", tool="t", content="x" * 300,
                                is_error=False, latency_s=0.1), trial_id=1)  # fmt: skip
    w.emit("r1", Scored(name="keywords", value=1.0, details={"note": TOKENS[0], "k": ENV_SECRET}), trial_id=1)
    w.emit("r1", Judged(pass_no=1, judge="j", verdict={"rationale": TOKENS[2]}), trial_id=1)
    await w.close()
    conn = sqlite3.connect(db)
    stored = b"".join(p for (p,) in conn.execute("SELECT payload FROM events"))
    rows = json.dumps([conn.execute("SELECT details FROM scores").fetchall(),
                       conn.execute("SELECT verdict FROM judgments").fetchall()])  # fmt: skip
    for secret in (TOKENS[0], ENV_SECRET, TOKENS[2]):
        assert secret.encode() not in stored and secret not in rows
    assert conn.execute("SELECT count(*) FROM events").fetchone() == (302,)
