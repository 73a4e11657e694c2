"""The machine ledger's file: its tables and how a connection to it is opened (WAL, FULL
synchronous, columns added to ledgers from before them). engine.ledger.store reads and writes it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS promotions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    project TEXT NOT NULL,
    env TEXT NOT NULL,
    release TEXT NOT NULL,
    images TEXT NOT NULL,
    direction TEXT NOT NULL,
    previous_id TEXT,
    plan_digest TEXT,
    supersede INTEGER NOT NULL DEFAULT 0,
    source TEXT NOT NULL DEFAULT 'deploy',
    who TEXT NOT NULL,
    created_at REAL NOT NULL,
    run_id TEXT,
    targets TEXT,
    committed_at REAL
);
CREATE INDEX IF NOT EXISTS promotions_by_env ON promotions (project, env, seq);
CREATE TABLE IF NOT EXISTS current (
    project TEXT NOT NULL,
    env TEXT NOT NULL,
    promotion_id TEXT NOT NULL,
    PRIMARY KEY (project, env)
);
CREATE TABLE IF NOT EXISTS applies (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    project TEXT NOT NULL,
    env TEXT NOT NULL,
    promotion_id TEXT,
    release TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL,
    phase TEXT NOT NULL,
    outcome TEXT,
    resources TEXT NOT NULL DEFAULT '[]',
    superseded_by_pid INTEGER,
    run_id TEXT,
    namespace TEXT,
    writing_since REAL
);
CREATE INDEX IF NOT EXISTS applies_by_env ON applies (project, env, seq);
CREATE TABLE IF NOT EXISTS gates (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    project TEXT NOT NULL,
    env TEXT NOT NULL,
    promotion_id TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT '',
    run_id TEXT NOT NULL,
    at_promote INTEGER NOT NULL DEFAULT 0,
    recorded_at REAL NOT NULL,
    UNIQUE (promotion_id, name, run_id)
);
CREATE INDEX IF NOT EXISTS gates_by_promotion ON gates (promotion_id, at_promote, seq);
CREATE TABLE IF NOT EXISTS sessions (
    project TEXT NOT NULL,
    machine TEXT NOT NULL,
    worktree TEXT NOT NULL,
    env TEXT NOT NULL,
    branch TEXT NOT NULL DEFAULT '',
    dirty INTEGER NOT NULL DEFAULT 0,
    refreshed_at REAL NOT NULL,
    stopped_at REAL,
    PRIMARY KEY (project, machine, worktree)
);
-- Phase records: each workload's phase changes during an apply, with the time each was seen
-- (docs/reference-deploy.md#ledger-timeline draws them against time).
CREATE TABLE IF NOT EXISTS phases (
    apply_seq INTEGER NOT NULL,
    workload TEXT NOT NULL,
    phase TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS phases_by_apply ON phases (apply_seq, at);
"""

# Created after the columns are added (_add_run_id_columns): a ledger from before `committed_at` gains
# the column first. `ledger metrics` reads each from the index alone (docs/reference-metrics.md#how-it-is-computed).
METRICS_INDEXES = """
CREATE INDEX IF NOT EXISTS promotions_times ON promotions (project, env, seq, created_at, direction, committed_at, id);
CREATE INDEX IF NOT EXISTS applies_by_outcome ON applies (project, outcome, promotion_id, finished_at);
CREATE INDEX IF NOT EXISTS gates_by_status ON gates (project, status, promotion_id, recorded_at);
"""


def connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    try:
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA busy_timeout = 30000")
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.executescript(SCHEMA)
        _add_run_id_columns(conn)
        conn.executescript(METRICS_INDEXES)
    except BaseException:
        conn.close()
        raise
    return conn


def _add_run_id_columns(conn: sqlite3.Connection) -> None:
    """Ledgers created before promotions and applies recorded their CI run id (and applies the
    Kubernetes namespace they applied to, promotions the workloads a `--target` deploy covered) gain
    the columns; and promotions the release's commit time (`ledger metrics`' lead time), and applies
    the time their current write to the runtime began (`writing_since`, docs/reference-deploy.md#supersede)."""
    for table, column, kind in (("promotions", "run_id", "TEXT"), ("applies", "run_id", "TEXT"),
                                ("applies", "namespace", "TEXT"), ("promotions", "targets", "TEXT"),
                                ("promotions", "committed_at", "REAL"), ("applies", "writing_since", "REAL")):
        columns = {r["name"] for r in conn.execute(f"PRAGMA table_info({table})")}
        if column not in columns:
            try:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            except sqlite3.OperationalError as exc:  # another process added it first
                if "duplicate column" not in str(exc):
                    raise
