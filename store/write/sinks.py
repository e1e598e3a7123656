"""Every place proctor writes or shows text, and what keeps secrets out of each: the one list.

A new sink is added here and to ``tests/integration/test_no_secret_in_any_sink.py``, which
plants every token shape in every field a server, a suite or a model controls and reads each
sink below as bytes (the test fails if the two lists differ). The guard named is the first
point where text bound for the sink is redacted; everything downstream reads redacted text.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Sink:
    name: str
    where: str
    guard: str


SINKS: tuple[Sink, ...] = (
    Sink(
        "database",
        "the run database file (events, trials, runs, judgments, blobs), its raw pages included",
        "store.writer: every payload through batch_payloads.redact_payloads on the writer thread, the "
        "run config through redact; names redacted where the suite enters (engine.suites.admit); tool "
        "output redacted before the store cap cuts it (engine.tools.caps.cap_stored)",
    ),
    Sink("wal", "the database's -wal and -shm files", "the same writes as the database: only redacted rows"),
    Sink(
        "server-log",
        "<db>.logs/<server>.stderr.log (and rotations): a server's stderr, a launched server's output; "
        "<db>.logs/killed-processes.log: the command lines of processes a supervisor had to kill",
        "engine.tools.server_log.CappedLog: a Redactor over the child's environment and proctor's "
        "registered secrets (on the supervisor's stdin for a launched server, in a private file it "
        "removes at once for a stdio server, whose stdin is the protocol), per whole line before "
        "any cut, capped per file; engine.tools.proc_tree.describe redacts a killed command line",
    ),
    Sink(
        "engine-log",
        "<db>.logs/engine.stderr.log: the console's engine process's stdout and stderr",
        "app.log_guard.RedactingHandler on the root logger (the mcp SDK's loggers included), capped; "
        "a validation error described by store.error_text (its input redacted before any cut)",
    ),
    Sink(
        "log-file-name",
        "the names of the files in <db>.logs",
        "engine.suites.admit (server names) and mcp_connection._safe_name (redacted, ASCII, bounded)",
    ),
    Sink(
        "report",
        "proctor report: json, md, csv, junit",
        "read from the database (already redacted); names redacted at entry",
    ),
    Sink(
        "export",
        "proctor export: jsonl, csv, otel (OTLP/JSON span names and attributes)",
        "read from the database; engine.reports.export and otel_export redact what they add",
    ),
    Sink(
        "terminal",
        "headless progress and summary, CLI messages and errors, log records",
        "read from the database; app.cli redacts error messages; app.log_guard for log records",
    ),
    Sink(
        "console",
        "the Textual console's screens",
        "read from the database (already redacted), sanitized by widgets.sanitize",
    ),
)

__all__ = ["SINKS", "Sink"]
