"""`framework ledger metrics [env]` (docs/reference-metrics.md): the four delivery measures from the
promotion ledger.

One indexed read of the machine ledger (promotions by (project, env, seq); each promotion's rollout
outcomes and gate failures from covering indexes, never a scan per bucket), then one pass per
environment in promotion order. Every figure says how it was counted (`counted`), in words that
docs/reference-metrics.md explains:

- deployment frequency: promotions whose rollout closed `ready` (healthy), by their healthy time;
- lead time for changes: the release's commit time to its promotion's healthy time;
- change failure rate: promotions whose rollout failed or timed out, or that a gate failed, or that
  a BEHIND promotion replaced within BEHIND_WINDOW, over the promotions made;
- time to restore: from the first failed promotion of a run of failures to the healthy time of the
  next promotion that reached healthy without failing.

The hosted ledger's protocol cannot give these facts (docs/reference-metrics.md#the-hosted-ledger):
a hosted environment is refused by name, not estimated.
"""

from __future__ import annotations

import math
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel

from engine.errors import EngineError, UsageError

if TYPE_CHECKING:
    from engine.project import Project

BEHIND_WINDOW = 24 * 3600  # seconds: a BEHIND promotion this soon after another marks that one failed
DEFAULT_SPAN = 30 * 86400  # seconds before --until when --since is not given
LATEST = 253402214400.0  # 9999-12-31T00:00:00Z: the last time a date can name with room for a bucket
BUCKETS = {"day": 86400, "week": 7 * 86400}
FAILED_ROLLOUTS = ("failed", "timed_out")  # the apply outcomes (engine/deploy/apply.py) that fail a promotion
FAILED_GATES = ("failed", "error")  # the gate statuses (engine/deploy/gates.py) that fail a promotion

COUNTED = {
    "deployment_frequency": "promotions whose rollout closed ready (healthy) in the window, by healthy time",
    "lead_time": "release commit time to the promotion's healthy time, for healthy promotions in the window "
                 "whose release recorded a commit time; median, and p90 by nearest rank",
    "change_failure_rate": "promotions made in the window whose rollout failed or timed out, or that a gate "
                           "failed, or that a BEHIND promotion replaced within 24 h, over all promotions "
                           "made in the window",
    "time_to_restore": "from the first failed promotion of a run of failures (made in the window) to the "
                       "healthy time of the next promotion that reached healthy without failing",
}

SQL = """
SELECT p.seq, p.id, p.env, p.created_at, p.direction, p.committed_at,
  (SELECT MIN(a.finished_at) FROM applies a WHERE a.promotion_id = p.id AND a.outcome = 'ready'
     AND a.finished_at < :until) AS healthy_at,
  EXISTS (SELECT 1 FROM applies a WHERE a.promotion_id = p.id AND a.outcome IN ('failed', 'timed_out')
     AND a.finished_at < :until) AS rollout_failed,
  EXISTS (SELECT 1 FROM gates g WHERE g.promotion_id = p.id AND g.status IN ('failed', 'error')
     AND g.recorded_at < :until) AS gate_failed
FROM promotions p
WHERE p.project = :project {env_clause} AND p.created_at < :until
ORDER BY p.env, p.seq
"""


class Spread(BaseModel):
    """A duration measure: how many were counted, their median and p90 (seconds; None when none)."""

    count: int = 0
    median_seconds: float | None = None
    p90_seconds: float | None = None


class DeploymentFrequency(BaseModel):
    count: int = 0
    per_day: float = 0.0
    counted: str = COUNTED["deployment_frequency"]


class LeadTime(Spread):
    without_commit_time: int = 0  # healthy promotions whose release recorded no commit time
    counted: str = COUNTED["lead_time"]


class ChangeFailureRate(BaseModel):
    rate: float | None = None  # failed / promotions; None when no promotion was made
    failed: int = 0
    promotions: int = 0
    by_rollout: int = 0
    by_gate: int = 0
    by_behind: int = 0  # a failure may have several causes: the three can add up to more than `failed`
    counted: str = COUNTED["change_failure_rate"]


class TimeToRestore(Spread):
    incidents: int = 0
    unrestored: int = 0
    counted: str = COUNTED["time_to_restore"]


class Bucket(BaseModel):
    """One day or week (UTC) of the series: the table behind each picture."""

    start: str
    start_ts: float
    deploys: int = 0
    lead_time_median_seconds: float | None = None
    promotions: int = 0
    failed: int = 0
    change_failure_rate: float | None = None
    restore_median_seconds: float | None = None


class EnvMetrics(BaseModel):
    env: str
    deployment_frequency: DeploymentFrequency
    lead_time: LeadTime
    change_failure_rate: ChangeFailureRate
    time_to_restore: TimeToRestore
    series: list[Bucket]


class Metrics(BaseModel):
    project: str
    ledger: str
    since: str
    until: str
    since_ts: float
    until_ts: float
    bucket: str
    behind_window_seconds: int = BEHIND_WINDOW
    environments: list[EnvMetrics]


@dataclass(slots=True)
class _Row:
    seq: int
    env: str
    created_at: float
    direction: str
    committed_at: float | None
    healthy_at: float | None
    rollout_failed: bool
    gate_failed: bool
    behind_replaced: bool = False

    @property
    def failed(self) -> bool:
        return self.rollout_failed or self.gate_failed or self.behind_replaced


def median(values: list[float]) -> float | None:
    """The middle value; the mean of the middle two when the count is even."""
    if not values:
        return None
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def p90(values: list[float]) -> float | None:
    """Nearest rank: the value at rank ceil(0.9 n) of the sorted values."""
    if not values:
        return None
    s = sorted(values)
    return s[max(0, math.ceil(0.9 * len(s)) - 1)]


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str, flag: str) -> float:
    """An ISO-8601 date or time (UTC unless it names an offset), or epoch seconds."""
    value = text.strip()
    refused = UsageError(f"{flag} {text[:60]!r}: not a date or time between 1970 and 9999",
                         hint="give an ISO-8601 date or time (2026-11-01, 2026-11-01T12:00:00Z) or epoch seconds")
    try:
        ts = float(value)
    except ValueError:
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise refused from None
        ts = (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()
    if not (math.isfinite(ts) and 0 <= ts < LATEST):
        raise refused
    return ts


def read_rows(conn: sqlite3.Connection, project: str, env: str | None, until: float) -> list[_Row]:
    """One indexed query: every promotion made before `until`, with what the ledger knew at `until`."""
    sql = SQL.format(env_clause="AND p.env = :env" if env else "")
    args = {"project": project, "env": env, "until": until}
    return [_Row(seq, e, created, direction, committed, healthy, bool(rf), bool(gf))
            for seq, _id, e, created, direction, committed, healthy, rf, gf in conn.execute(sql, args)]


def _bucket_start(ts: float, size: str) -> float:
    day = datetime.fromtimestamp(ts, UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    start = day.timestamp()
    return start - day.weekday() * 86400 if size == "week" else start  # weeks start on Monday


def env_metrics(env: str, rows: list[_Row], since: float, until: float, bucket: str) -> EnvMetrics:
    """The four measures of one environment from its promotions in seq order (one pass, then the buckets)."""
    for row, following in zip(rows, rows[1:], strict=False):
        if following.direction == "BEHIND" and following.created_at - row.created_at <= BEHIND_WINDOW:
            row.behind_replaced = True

    def inside(ts: float | None) -> bool:
        return ts is not None and since <= ts < until

    starts: dict[float, Bucket] = {}
    first = _bucket_start(since, bucket)
    ts = first
    while ts < until:
        starts[ts] = Bucket(start=iso(ts), start_ts=ts)
        ts += BUCKETS[bucket]
    per_bucket_lead: dict[float, list[float]] = {}
    per_bucket_restore: dict[float, list[float]] = {}

    deploys, leads, no_commit = 0, [], 0
    cfr = ChangeFailureRate()
    restores: list[float] = []
    incidents = unrestored = 0
    open_incident: float | None = None  # the start of the run of failures not yet restored
    for row in rows:
        if inside(row.healthy_at):
            assert row.healthy_at is not None
            deploys += 1
            key = _bucket_start(row.healthy_at, bucket)
            starts[key].deploys += 1
            if row.committed_at is None:
                no_commit += 1
            else:
                lead = max(0.0, row.healthy_at - row.committed_at)
                leads.append(lead)
                per_bucket_lead.setdefault(key, []).append(lead)
        if inside(row.created_at):
            key = _bucket_start(row.created_at, bucket)
            cfr.promotions += 1
            starts[key].promotions += 1
            if row.failed:
                cfr.failed += 1
                starts[key].failed += 1
                cfr.by_rollout += row.rollout_failed
                cfr.by_gate += row.gate_failed
                cfr.by_behind += row.behind_replaced
        if row.failed:
            if open_incident is None:
                open_incident = row.created_at
                if inside(row.created_at):
                    incidents += 1
        elif row.healthy_at is not None and open_incident is not None:
            if inside(open_incident):
                restore = max(0.0, row.healthy_at - open_incident)
                restores.append(restore)
                per_bucket_restore.setdefault(_bucket_start(open_incident, bucket), []).append(restore)
            open_incident = None
    if open_incident is not None and inside(open_incident):
        unrestored += 1
    cfr.rate = cfr.failed / cfr.promotions if cfr.promotions else None
    for key, b in starts.items():
        b.lead_time_median_seconds = median(per_bucket_lead.get(key, []))
        b.restore_median_seconds = median(per_bucket_restore.get(key, []))
        b.change_failure_rate = b.failed / b.promotions if b.promotions else None
    days = (until - since) / 86400
    return EnvMetrics(
        env=env,
        deployment_frequency=DeploymentFrequency(count=deploys, per_day=round(deploys / days, 6) if days else 0.0),
        lead_time=LeadTime(count=len(leads), median_seconds=median(leads), p90_seconds=p90(leads),
                           without_commit_time=no_commit),
        change_failure_rate=cfr,
        time_to_restore=TimeToRestore(count=len(restores), median_seconds=median(restores), p90_seconds=p90(restores),
                                      incidents=incidents, unrestored=unrestored),
        series=list(starts.values()),
    )


def _by_env(rows: Iterable[_Row]) -> dict[str, list[_Row]]:
    out: dict[str, list[_Row]] = {}
    for row in rows:
        out.setdefault(row.env, []).append(row)
    return out


def window(since: str | None, until: str | None, bucket: str, now: float | None = None) -> tuple[float, float]:
    if bucket not in BUCKETS:
        raise UsageError(f"--bucket {bucket[:40]!r}: not a bucket", hint="give --bucket day or --bucket week")
    end = parse_time(until, "--until") if until else (now if now is not None else time.time())
    start = parse_time(since, "--since") if since else end - DEFAULT_SPAN
    if start >= end:
        raise UsageError(f"--since {iso(start)} is not before --until {iso(end)}")
    if (end - start) / BUCKETS[bucket] > 5000:
        raise UsageError(f"{iso(start)} to {iso(end)} is more than 5000 {bucket}s",
                           hint="narrow --since/--until, or use --bucket week")
    return start, end


def machine_metrics(conn: sqlite3.Connection, project: str, ledger: str, env: str | None, since: float,
                    until: float, bucket: str, envs: list[str] | None = None) -> Metrics:
    """The measures over one machine ledger connection (the bench calls this directly)."""
    grouped = _by_env(read_rows(conn, project, env, until))
    names = sorted(set(grouped) | set(envs or []) | ({env} if env else set()))
    return Metrics(project=project, ledger=ledger, since=iso(since), until=iso(until), since_ts=since,
                   until_ts=until, bucket=bucket,
                   environments=[env_metrics(n, grouped.get(n, []), since, until, bucket) for n in names])


class HostedMetricsUnavailable(EngineError):
    """The hosted ledger's protocol lacks the facts (docs/reference-metrics.md#the-hosted-ledger)."""

    code = "metrics_unavailable"


def metrics(project: Project, env: str | None = None, *, since: str | None = None, until: str | None = None,
            bucket: str = "day", now: float | None = None) -> Metrics:
    """`framework ledger metrics [env]`: an environment on the control plane is refused (exit 1) by name."""
    from engine.ledger.store import Ledger, LedgerUnreadable

    start, end = window(since, until, bucket, now)
    if env is not None:
        from engine.environments.evaluate import evaluate_environment

        if evaluate_environment(project, env).on_control_plane:
            raise HostedMetricsUnavailable(
                f"environment {env!r} keeps its ledger on the control plane, whose ledger API gives neither "
                "each promotion's rollout outcome nor its release's commit time; ledger metrics reads the "
                "machine ledger only",
                hint="see docs/reference-metrics.md#the-hosted-ledger")
    with Ledger.open(project.key) as ledger:
        try:
            return machine_metrics(ledger.conn, project.key, str(ledger.path), env, start, end, bucket)
        except sqlite3.Error as exc:
            raise LedgerUnreadable(f"machine ledger {ledger.path} is unreadable: {exc}") from exc
