"""The machine ledger (docs/reference-deploy.md#files).

One SQLite file under `$FRAMEWORK_LEDGER_HOME`, keyed by project. Promotions are append-only;
`current` names each environment's bound promotion and is moved only by compare-and-set inside a
`BEGIN IMMEDIATE` transaction, so two racing deploys append exactly one promotion. WAL mode and
one transaction per append keep the file readable after a crash at any point. The rules
(compare-and-set, append-only, in-flight, idempotent gates) are engine.promotions.rules, shared
with the control plane's hosted ledger; this module is the SQLite store they run on.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine.ci_environment import current_run_id
from engine.ledger.models import Apply, Gate, LocalSession, Promotion, RunRecords
from engine.ledger.schema import connect as _connect
from engine.paths import ledger_home
from engine.processes import pid_alive
from engine.promotions import rules
from engine.promotions.rules import LedgerUnreadable, OpenApply, PromotionConflict, RolloutInFlight

__all__ = ["Apply", "Gate", "Ledger", "LedgerUnreadable", "LocalSession", "Promotion", "PromotionConflict",
           "RolloutInFlight", "RunRecords", "ledger_path", "who"]

SESSION_TTL_SECONDS = 24 * 3600  # a local session record is discarded after 24 h without refresh

def who() -> str:
    import getpass

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


def ledger_path() -> Path:
    return ledger_home() / "ledger.sqlite3"


def _unreadable(path: Path, exc: Exception) -> LedgerUnreadable:
    return LedgerUnreadable(
        f"machine ledger {path} is unreadable: {exc}",
        hint="check the file's permissions, or point FRAMEWORK_LEDGER_HOME elsewhere",
    )


def _apply(r: sqlite3.Row) -> Apply:
    return Apply(seq=r["seq"], env=r["env"], promotion_id=r["promotion_id"], release=r["release"], pid=r["pid"],
                 host=r["host"], started_at=r["started_at"], finished_at=r["finished_at"], phase=r["phase"],
                 outcome=r["outcome"], resources=json.loads(r["resources"]),
                 superseded_by_pid=r["superseded_by_pid"], run_id=r["run_id"], namespace=r["namespace"])


def _gate(r: sqlite3.Row) -> Gate:
    return Gate(name=r["name"], status=r["status"], summary=r["summary"], run_id=r["run_id"],
                promotion_id=r["promotion_id"], env=r["env"], at_promote=bool(r["at_promote"]),
                recorded_at=r["recorded_at"])


class _SqliteTx:
    """The machine store's primitives for engine.promotions.rules, inside one BEGIN IMMEDIATE."""

    def __init__(self, conn: sqlite3.Connection, project: str, run_id: str | None) -> None:
        self.conn = conn
        self.project = project
        self.run_id = run_id  # the CI run recorded on the rollout rows this transaction opens

    def current_id(self, env: str) -> str | None:
        row = self.conn.execute(
            "SELECT promotion_id FROM current WHERE project=? AND env=?", (self.project, env)
        ).fetchone()
        return row["promotion_id"] if row else None

    def open_applies(self, env: str) -> list[OpenApply]:
        rows = self.conn.execute(
            "SELECT * FROM applies WHERE project=? AND env=? AND finished_at IS NULL", (self.project, env)
        ).fetchall()
        host = socket.gethostname()
        # driven by a live process on another host, or by a live process here other than this one
        return [OpenApply(seq=r["seq"], release=r["release"], pid=r["pid"],
                          alive=(r["host"] != host or pid_alive(r["pid"])) and r["pid"] != os.getpid(),
                          writing=r["writing_since"] is not None)
                for r in rows]

    def apply_mark(self, seq: int) -> tuple[str | None, bool]:
        row = self.conn.execute("SELECT promotion_id, superseded_by_pid FROM applies WHERE seq=?", (seq,)).fetchone()
        return (row["promotion_id"], bool(row["superseded_by_pid"])) if row else (None, True)

    def set_writing(self, seq: int, writing: bool) -> None:
        self.conn.execute("UPDATE applies SET writing_since=? WHERE seq=?", (time.time() if writing else None, seq))

    def close_apply(self, seq: int, outcome: str) -> None:
        self.conn.execute("UPDATE applies SET finished_at=?, outcome=? WHERE seq=?", (time.time(), outcome, seq))

    def mark_superseded(self, seq: int) -> None:
        self.conn.execute("UPDATE applies SET superseded_by_pid=? WHERE seq=?", (os.getpid(), seq))

    def insert_promotion(self, env: str, row: dict[str, Any]) -> None:
        self.conn.execute(
            "INSERT INTO promotions (id, project, env, release, images, direction, previous_id, plan_digest,"
            " supersede, source, who, created_at, run_id, targets, committed_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (row["id"], self.project, env, row["release"], json.dumps(row["images"], sort_keys=True),
             row["direction"], row["previous_id"], row["plan_digest"], int(row["supersede"]), row["source"],
             row["who"], row["created_at"], row["run_id"],
             json.dumps(row["targets"]) if row.get("targets") else None, row.get("committed_at")),
        )

    def set_current(self, env: str, promotion_id: str) -> None:
        self.conn.execute(
            "INSERT INTO current (project, env, promotion_id) VALUES (?,?,?) "
            "ON CONFLICT(project, env) DO UPDATE SET promotion_id=excluded.promotion_id",
            (self.project, env, promotion_id),
        )

    def insert_gate(self, env: str, promotion_id: str, gate: Gate, at_promote: bool) -> bool:
        cur = self.conn.execute(
            "INSERT OR IGNORE INTO gates (project, env, promotion_id, name, status, summary, run_id, at_promote,"
            " recorded_at) VALUES (?,?,?,?,?,?,?,?,?)",
            (self.project, env, promotion_id, gate.name, gate.status, gate.summary, gate.run_id,
             int(at_promote), gate.recorded_at or time.time()),  # a set time: an import, a ledger built with times
        )
        return cur.rowcount == 1

    def insert_apply(self, env: str, promotion_id: str | None, release: str) -> int:
        cur = self.conn.execute(
            "INSERT INTO applies (project, env, promotion_id, release, pid, host, started_at, phase, run_id) "
            "VALUES (?,?,?,?,?,?,?, 'pending', ?)",
            (self.project, env, promotion_id, release, os.getpid(), socket.gethostname(), time.time(),
             self.run_id),
        )
        return int(cur.lastrowid or 0)


class Ledger:
    """The machine ledger of one project. Open with `Ledger.open(project.key)`."""

    def __init__(self, conn: sqlite3.Connection, project: str, path: Path) -> None:
        self.conn = conn
        self.project = project
        self.path = path
        self.last_apply_seq = 0

    @classmethod
    def open(cls, project: str, path: Path | None = None) -> Ledger:
        path = path or ledger_path()
        deadline = time.monotonic() + 30
        while True:
            try:
                return cls(_connect(path), project, path)
            except sqlite3.OperationalError as exc:
                # Commands opening a new ledger at once race to create it and switch it to WAL; SQLite
                # answers that race "locked" without calling the busy handler: retry, within its budget.
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise _unreadable(path, exc) from exc
                time.sleep(0.02)
            except (sqlite3.Error, OSError) as exc:
                raise _unreadable(path, exc) from exc

    @property
    def machine(self) -> Ledger:
        return self

    @property
    def hosted(self) -> None:
        return None

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _q(self, sql: str, args: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        try:
            return self.conn.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise LedgerUnreadable(f"machine ledger {self.path} is unreadable: {exc}") from exc

    # -- promotions ------------------------------------------------------------------------

    def _promotion(self, row: sqlite3.Row, with_gates: bool = True) -> Promotion:
        p = Promotion(
            id=row["id"],
            seq=row["seq"],
            project=row["project"],
            env=row["env"],
            release=row["release"],
            images=json.loads(row["images"]),
            direction=row["direction"],
            previous_id=row["previous_id"],
            plan_digest=row["plan_digest"],
            supersede=bool(row["supersede"]),
            source=row["source"],
            who=row["who"],
            created_at=row["created_at"],
            run_id=row["run_id"],
            targets=json.loads(row["targets"]) if row["targets"] else [],
            committed_at=row["committed_at"],
        )
        if with_gates:
            p.gates = self.gates(p.id)
        return p

    def current_id(self, env: str) -> str | None:
        rows = self._q("SELECT promotion_id FROM current WHERE project=? AND env=?", (self.project, env))
        return rows[0]["promotion_id"] if rows else None

    def current(self, env: str) -> Promotion | None:
        pid = self.current_id(env)
        return self.get(pid) if pid else None

    def get(self, promotion_id: str) -> Promotion | None:
        rows = self._q("SELECT * FROM promotions WHERE project=? AND id=?", (self.project, promotion_id))
        return self._promotion(rows[0]) if rows else None

    def history(self, env: str, limit: int = 20, before: int | None = None) -> list[Promotion]:
        """Newest first; `before` is a seq cursor (rows strictly older). Uses the (project, env, seq) index."""
        if before is None:
            rows = self._q(
                "SELECT * FROM promotions WHERE project=? AND env=? ORDER BY seq DESC LIMIT ?",
                (self.project, env, limit),
            )
        else:
            rows = self._q(
                "SELECT * FROM promotions WHERE project=? AND env=? AND seq<? ORDER BY seq DESC LIMIT ?",
                (self.project, env, before, limit),
            )
        return [self._promotion(r) for r in rows]

    def count(self, env: str) -> int:
        return int(
            self._q("SELECT COUNT(*) AS n FROM promotions WHERE project=? AND env=?", (self.project, env))[0][
                "n"
            ]
        )

    def envs(self) -> list[str]:
        return [
            r["env"]
            for r in self._q(
                "SELECT DISTINCT env FROM promotions WHERE project=? ORDER BY env", (self.project,)
            )
        ]

    def bound_envs(self, release: str) -> list[Promotion]:
        rows = self._q(
            "SELECT p.* FROM current c JOIN promotions p ON p.id=c.promotion_id "
            "WHERE c.project=? AND p.release=? ORDER BY c.env",
            (self.project, release),
        )
        return [self._promotion(r) for r in rows]

    def append_promotion(
        self,
        env: str,
        release: str,
        images: dict[str, dict[str, Any]],
        *,
        direction: str,
        expected_current: str | None,
        plan_digest: str | None = None,
        supersede: bool = False,
        gates: list[Gate] | None = None,
        check_in_flight: bool = True,
        promotion_id: str | None = None,
        source: str = "deploy",
        created_at: float | None = None,
        actor: str | None = None,
        open_apply: bool = False,
        run_id: str | None = None,
        targets: list[str] | None = None,
        committed_at: float | None = None,
    ) -> Promotion:
        """Compare-and-set append (engine.promotions.rules): refused (exit 3) when `current` is not
        `expected_current`."""
        run_id = run_id if run_id is not None or source != "deploy" else current_run_id()
        try:
            with self._write(run_id) as tx:
                pid, self.last_apply_seq = rules.append(
                    tx, env, release, images, direction=direction, expected_current=expected_current,
                    actor=actor or who(), plan_digest=plan_digest, supersede=supersede, gates=gates,
                    in_flight_check=check_in_flight, promotion_id=promotion_id, source=source,
                    created_at=created_at, open_apply=open_apply, run_id=run_id, targets=targets,
                    committed_at=committed_at)
        except sqlite3.Error as exc:
            raise LedgerUnreadable(f"machine ledger {self.path}: append failed: {exc}") from exc
        result = self.get(pid)
        assert result is not None
        return result

    @contextlib.contextmanager
    def _write(self, run_id: str | None) -> Iterator[_SqliteTx]:
        """One write transaction (BEGIN IMMEDIATE): the rules run inside it, all or nothing."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield _SqliteTx(self.conn, self.project, run_id)
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    # -- applies (rollouts) ----------------------------------------------------------------

    def start_apply(
        self, env: str, promotion_id: str | None, release: str, *, supersede: bool = False
    ) -> int:
        with self._write(current_run_id()) as tx:
            return rules.start_apply(tx, env, promotion_id, release, supersede)

    def begin_write(self, env: str, seq: int) -> tuple[str, list[OpenApply]]:
        """One look before apply `seq` writes to the runtime (engine.promotions.rules.begin_write): its
        answer (`go` recorded as writing until `end_write`, `stop`, `wait`) and the live writers it waits on."""
        try:
            with self._write(None) as tx:
                return rules.begin_write(tx, env, seq)
        except sqlite3.Error as exc:
            raise LedgerUnreadable(f"machine ledger {self.path}: {exc}") from exc

    def end_write(self, seq: int) -> None:
        """The apply's write to the runtime has its answer: a superseding apply may write now."""
        try:
            with self._write(None) as tx:
                tx.set_writing(seq, False)
        except sqlite3.Error as exc:
            raise LedgerUnreadable(f"machine ledger {self.path}: {exc}") from exc

    def update_apply(
        self,
        seq: int,
        *,
        phase: str | None = None,
        outcome: str | None = None,
        resources: list[dict[str, Any]] | None = None,
        finished: bool = False,
        namespace: str | None = None,
        transitions: list[tuple[str, str, float]] | None = None,
        finished_at: float | None = None,
    ) -> None:
        """Update the apply row; `transitions` ((workload, phase, at) each) are appended to its phase
        records in the same transaction."""
        sets: list[str] = []
        args: list[Any] = []
        if namespace is not None:  # the Kubernetes namespace the apply targets (`env status` reads it)
            sets.append("namespace=?")
            args.append(namespace)
        if phase is not None:
            sets.append("phase=?")
            args.append(phase)
        if outcome is not None:
            sets.append("outcome=?")
            args.append(outcome)
        if resources is not None:
            sets.append("resources=?")
            args.append(json.dumps(resources))
        if finished:  # `finished_at`: the time when it is known (an import, a ledger built with set times)
            sets.append("finished_at=?")
            args.append(time.time() if finished_at is None else finished_at)
        if not transitions:
            if sets:
                self.conn.execute(f"UPDATE applies SET {', '.join(sets)} WHERE seq=?", (*args, seq))
            return
        with self._write(None):
            self.conn.executemany("INSERT INTO phases (apply_seq, workload, phase, at) VALUES (?,?,?,?)",
                                  [(seq, w, p, at) for w, p, at in transitions])
            if sets:
                self.conn.execute(f"UPDATE applies SET {', '.join(sets)} WHERE seq=?", (*args, seq))

    def phase_records(self, apply_seq: int) -> list[tuple[str, str, float]]:
        """The apply's phase records, (workload, phase, at) in the order they were seen."""
        rows = self._q("SELECT workload, phase, at FROM phases WHERE apply_seq=? ORDER BY at, rowid", (apply_seq,))
        return [(r["workload"], r["phase"], r["at"]) for r in rows]

    def apply_for(self, env: str, promotion_id: str | None = None) -> Apply | None:
        """`env`'s latest apply, or the latest apply of `promotion_id` in `env`; None when none is recorded."""
        if promotion_id is None:
            rows = self._q("SELECT * FROM applies WHERE project=? AND env=? ORDER BY seq DESC LIMIT 1",
                           (self.project, env))
        else:
            rows = self._q("SELECT * FROM applies WHERE project=? AND env=? AND promotion_id=? "
                           "ORDER BY seq DESC LIMIT 1", (self.project, env, promotion_id))
        return _apply(rows[0]) if rows else None

    def applied_namespace(self, env: str) -> str | None:
        """The Kubernetes namespace of `env`'s latest apply that recorded one (`env deploy
        --namespace`), else None."""
        rows = self._q("SELECT namespace FROM applies WHERE project=? AND env=? AND namespace IS NOT NULL "
                       "ORDER BY seq DESC LIMIT 1", (self.project, env))
        return rows[0]["namespace"] if rows else None

    def apply_superseded(self, seq: int) -> bool:
        rows = self._q("SELECT superseded_by_pid FROM applies WHERE seq=?", (seq,))
        return bool(rows and rows[0]["superseded_by_pid"])

    def applies(self, env: str | None = None, limit: int = 20) -> list[Apply]:
        if env:
            rows = self._q(
                "SELECT * FROM applies WHERE project=? AND env=? ORDER BY seq DESC LIMIT ?",
                (self.project, env, limit),
            )
        else:
            rows = self._q(
                "SELECT * FROM applies WHERE project=? ORDER BY seq DESC LIMIT ?", (self.project, limit)
            )
        return [_apply(r) for r in rows]

    # -- gates -----------------------------------------------------------------------------

    def record_gate(self, env: str, promotion_id: str, gate: Gate) -> bool:
        """Append-only and idempotent on (promotion, check, run id); True when a row was added."""
        with self._write(None) as tx:
            return rules.record_gate(tx, env, promotion_id, gate)

    def for_run(self, run: str) -> RunRecords:
        """Promotions, rollouts (applies) and gates recorded by a CI run: `run` is a whole run id
        (`<run>.<attempt>`) or the run alone (every attempt)."""
        where, args = "project=? AND (run_id=? OR substr(run_id, 1, ?)=?)", (self.project, run, len(run) + 1, run + ".")
        promotions = [self._promotion(r, with_gates=False)
                      for r in self._q(f"SELECT * FROM promotions WHERE {where} ORDER BY seq", args)]
        applies = [_apply(r) for r in self._q(f"SELECT * FROM applies WHERE {where} ORDER BY seq", args)]
        gates = [_gate(r) for r in self._q(f"SELECT * FROM gates WHERE {where} ORDER BY seq", args)]
        return RunRecords(promotions=promotions, applies=applies, gates=gates)

    def gates(self, promotion_id: str) -> list[Gate]:
        """Promote-time gates first, then later ones oldest first (`gate list`'s order)."""
        rows = self._q(
            "SELECT * FROM gates WHERE promotion_id=? ORDER BY at_promote DESC, seq ASC", (promotion_id,)
        )
        return [_gate(r) for r in rows]

    # -- local sessions (written by dev stacks) -------------------------------------------

    def upsert_session(
        self, worktree: str, env: str, branch: str, dirty: bool, machine: str | None = None
    ) -> None:
        self.conn.execute(
            "INSERT INTO sessions (project, machine, worktree, env, branch, dirty, refreshed_at, stopped_at) "
            "VALUES (?,?,?,?,?,?,?,NULL) ON CONFLICT(project, machine, worktree) DO UPDATE SET env=excluded.env, "
            "branch=excluded.branch, dirty=excluded.dirty, refreshed_at=excluded.refreshed_at, stopped_at=NULL",
            (self.project, machine or socket.gethostname(), worktree, env, branch, int(dirty), time.time()),
        )

    def mark_stopped(self, worktree: str, machine: str | None = None) -> None:
        """Best effort (`env down` marks the local session stopped)."""
        self.conn.execute(
            "UPDATE sessions SET stopped_at=? WHERE project=? AND machine=? AND worktree=?",
            (time.time(), self.project, machine or socket.gethostname(), worktree),
        )

    def list_sessions(self, env: str | None = None, now: float | None = None) -> list[LocalSession]:
        """Sessions refreshed within 24 h; older rows are discarded here."""
        cutoff = (now or time.time()) - SESSION_TTL_SECONDS
        self.conn.execute("DELETE FROM sessions WHERE refreshed_at < ?", (cutoff,))
        sql = "SELECT * FROM sessions WHERE project=?" + (" AND env=?" if env else "") + " ORDER BY worktree"
        rows = self._q(sql, (self.project, env) if env else (self.project,))
        return [
            LocalSession(
                machine=r["machine"],
                worktree=r["worktree"],
                env=r["env"],
                branch=r["branch"],
                dirty=bool(r["dirty"]),
                refreshed_at=r["refreshed_at"],
                stopped=r["stopped_at"] is not None,
            )
            for r in rows
        ]
