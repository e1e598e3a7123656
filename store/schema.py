"""SQLite schema and migrations for a run database.

One file holds one run: its config, the trial matrix, every event, and the judgments, scores,
anchors and operator commands derived from them. Migrations are ordered scripts keyed by
``PRAGMA user_version`` so an older database is upgraded in place and a newer one is refused.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

MIGRATIONS: list[str] = [
    # 1: the initial schema
    """
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        suite TEXT NOT NULL,
        config TEXT NOT NULL,
        created_at REAL NOT NULL,
        started_at REAL,
        finished_at REAL,
        status TEXT NOT NULL DEFAULT 'created'
    );
    CREATE TABLE trials (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id),
        scenario TEXT NOT NULL,
        arm TEXT NOT NULL,
        model TEXT NOT NULL,
        epoch INTEGER NOT NULL,
        seed INTEGER NOT NULL,
        status TEXT NOT NULL DEFAULT 'queued',
        attempt INTEGER NOT NULL DEFAULT 0,
        started_at REAL,
        finished_at REAL,
        stop TEXT,
        final_answer TEXT,
        error TEXT,
        tool_calls INTEGER,
        input_tokens INTEGER,
        output_tokens INTEGER,
        cache_read_tokens INTEGER,
        cache_write_tokens INTEGER,
        tokens_estimated INTEGER,
        cost_usd REAL,
        wall_s REAL,
        passed INTEGER,
        UNIQUE (run_id, scenario, arm, model, epoch)
    );
    CREATE TABLE events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL,
        trial_id INTEGER,
        attempt INTEGER NOT NULL DEFAULT 0,
        ts REAL NOT NULL,
        kind TEXT NOT NULL,
        encoding TEXT NOT NULL DEFAULT 'json',
        payload BLOB NOT NULL,
        abandoned INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX events_by_trial ON events (trial_id, id);
    CREATE INDEX events_by_kind ON events (kind, id);
    CREATE TABLE judgments (
        id INTEGER PRIMARY KEY,
        trial_id INTEGER NOT NULL REFERENCES trials(id),
        pass_no INTEGER NOT NULL,
        judge TEXT NOT NULL,
        source TEXT NOT NULL DEFAULT 'proctor',
        prompt_version TEXT NOT NULL DEFAULT '',
        prompt_hash TEXT NOT NULL DEFAULT '',
        rubric_hash TEXT NOT NULL DEFAULT '',
        temperature REAL,
        verdict TEXT,
        error TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL
    );
    CREATE INDEX judgments_by_trial ON judgments (trial_id, pass_no);
    CREATE TABLE scores (
        trial_id INTEGER NOT NULL REFERENCES trials(id),
        name TEXT NOT NULL,
        value REAL,
        details TEXT NOT NULL DEFAULT '{}',
        created_at REAL NOT NULL,
        PRIMARY KEY (trial_id, name)
    );
    CREATE TABLE anchors (
        scenario TEXT PRIMARY KEY,
        lock_file TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        source_run TEXT,
        locked_at REAL NOT NULL
    );
    CREATE TABLE commands (
        id INTEGER PRIMARY KEY,
        run_id TEXT,
        command TEXT NOT NULL,
        args TEXT NOT NULL DEFAULT '{}',
        status TEXT NOT NULL DEFAULT 'pending',
        created_at REAL NOT NULL,
        claimed_at REAL,
        finished_at REAL,
        message TEXT NOT NULL DEFAULT ''
    );
    """,
    # 2: judgments carry the attempt they judged; a re-run attempt starts with no scores
    """
    ALTER TABLE judgments ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
    UPDATE judgments SET attempt = coalesce((SELECT attempt FROM trials WHERE trials.id = judgments.trial_id), 0);
    """,
    # 3: binary tool output (images, audio, blob resources), stored once by content hash
    """
    CREATE TABLE blobs (
        sha256 TEXT PRIMARY KEY,
        mime_type TEXT NOT NULL,
        size INTEGER NOT NULL,
        data BLOB NOT NULL
    );
    """,
    # 4: what a report reads of each model call, judge call and tool event (store.event_facts),
    # written beside the event so a report reads these small rows, not 200 MB of payloads; the
    # abandoned events indexed apart, so it learns which those are without the events' pages
    """
    CREATE TABLE event_facts (
        event_id INTEGER PRIMARY KEY,
        trial_id INTEGER,
        attempt INTEGER NOT NULL,
        kind TEXT NOT NULL,
        facts BLOB NOT NULL
    );
    CREATE INDEX events_abandoned ON events (id) WHERE abandoned = 1;
    """,
    # 5: a tools_listed payload may carry each definition's tokens (``definition_tokens``). No
    # table changes; a proctor that does not know that field would refuse those events, so it
    # refuses the database instead, saying to upgrade.
    """
    SELECT 1;
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)


class SchemaError(Exception):
    """The database was written by a newer proctor, or is not a proctor database."""


def configure(conn: sqlite3.Connection) -> None:
    """WAL with synchronous=NORMAL: committed events survive a crash of the process (NOTES)."""
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=5000")


def migrate(conn: sqlite3.Connection, path: str = "") -> int:
    """Bring the database to ``SCHEMA_VERSION``; return the version it had before."""
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version > SCHEMA_VERSION:
        raise SchemaError(
            f"{path}: schema version {version} is newer than this proctor understands ({SCHEMA_VERSION}); "
            "upgrade proctor to read it"
        )
    if version == 0:
        tables = conn.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]
        if tables:
            raise SchemaError(f"{path}: not a proctor run database (it has tables but no proctor schema)")
    for i in range(version, SCHEMA_VERSION):
        conn.executescript(f"BEGIN;\n{MIGRATIONS[i]}\nPRAGMA user_version = {i + 1};\nCOMMIT;")
    return int(version)


def init_db(path: Path) -> None:
    """Create (or upgrade) a run database's schema, synchronously, and close it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        configure(conn)
        migrate(conn, str(path))
    finally:
        conn.close()
