"""`framework ledger metrics [env]` (docs/reference-metrics.md): the four delivery measures from the
promotion ledger.

Four reads of the machine ledger, each from a covering index (the promotions' times, the rollouts by
outcome, the gates by status; never a query per bucket), then one pass per environment in promotion
order. Every figure says how it was counted (`counted`), in words that
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

# Four reads, each over one covering index of the store (promotions_times, applies_by_outcome twice,
# gates_by_status): the promotions, then the healthy time and the failures that the rollouts (outcomes
# of engine/deploy/apply.py) and gates (statuses of engine/deploy/gates.py) recorded; the project's,
# whatever the environment, joined by promotion id in the pass.
PROMOTIONS_SQL = """SELECT env, created_at, direction, committed_at, id FROM promotions
WHERE project = :project {env_clause} AND created_at < :until ORDER BY env, seq"""
# newest first within a promotion: dict() keeps the last pair of each promotion, its earliest ready time
# (the index read backwards; cheaper than GROUP BY ... MIN)
HEALTHY_SQL = """SELECT promotion_id, finished_at FROM applies
WHERE project = :project AND outcome = 'ready' AND finished_at < :until ORDER BY promotion_id DESC, finished_at DESC"""
ROLLOUT_FAILED_SQL = """SELECT DISTINCT promotion_id FROM applies
WHERE project = :project AND outcome IN ('failed', 'timed_out') AND finished_at < :until"""
GATE_FAILED_SQL = """SELECT DISTINCT promotion_id FROM gates
WHERE project = :project AND status IN ('failed', 'error') AND recorded_at < :until"""


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


# One promotion as the pass reads it: (created_at, direction, committed_at, healthy_at, rollout_failed,
# gate_failed), in seq order per environment. Plain tuples: 100,000 of them cost no objects of our own.
Row = tuple[float, str, float | None, float | None, bool, bool]


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


def duration(seconds: float | None) -> str:
    """A duration as people read one: 45s, 12m, 3.5h, 2.1d; '-' when nothing was counted."""
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds / 60:.0f}m"
    if seconds < 86400:
        return f"{seconds / 3600:.1f}h"
    return f"{seconds / 86400:.1f}d"


def percent(rate: float | None) -> str:
    return "-" if rate is None else f"{rate * 100:.0f}%"


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


def read_rows(conn: sqlite3.Connection, project: str, env: str | None, until: float) -> dict[str, list[Row]]:
    """Every promotion made before `until` per environment, with what the ledger knew at `until`."""
    args = {"project": project, "env": env, "until": until}
    cur = conn.cursor()
    cur.row_factory = None  # plain tuples, not a Row object each
    healthy = dict(cur.execute(HEALTHY_SQL, args).fetchall())
    rollout_failed = {r[0] for r in cur.execute(ROLLOUT_FAILED_SQL, args)}
    gate_failed = {r[0] for r in cur.execute(GATE_FAILED_SQL, args)}
    out: dict[str, list[Row]] = {}
    rows: list[Row] = []
    last = None
    for e, created, direction, committed, pid in cur.execute(
            PROMOTIONS_SQL.format(env_clause="AND env = :env" if env else ""), args):
        if e != last:
            rows = out.setdefault(e, [])
            last = e
        rows.append((created, direction, committed, healthy.get(pid), pid in rollout_failed, pid in gate_failed))
    return out


MONDAY = 4 * 86400.0  # 1970-01-05, the first Monday after the epoch: weeks start on Monday 00:00 UTC


def _bucket_start(ts: float, size: str) -> float:
    """The UTC day or week holding `ts` (epoch days are exactly 86,400 s: no calendar needed)."""
    if size == "week":
        return (ts - MONDAY) // BUCKETS["week"] * BUCKETS["week"] + MONDAY
    return ts // 86400 * 86400


def env_metrics(env: str, rows: list[Row], since: float, until: float, bucket: str) -> EnvMetrics:
    """The four measures of one environment from its promotions in seq order (one pass, then the buckets)."""
    size = bucket
    width, offset = BUCKETS[size], (MONDAY if size == "week" else 0.0)
    deploys: dict[float, int] = {}
    made: dict[float, int] = {}
    failed: dict[float, int] = {}
    leads: dict[float, list[float]] = {}
    restores: dict[float, list[float]] = {}
    no_commit = by_rollout = by_gate = by_behind = incidents = 0
    open_incident: float | None = None  # the start of the run of failures not yet restored
    last = len(rows) - 1
    for i, (created, _direction, committed, healthy, rollout_failed, gate_failed) in enumerate(rows):
        # replaced by a BEHIND promotion (a rollback) within the window: this one failed
        behind = i < last and rows[i + 1][1] == "BEHIND" and rows[i + 1][0] - created <= BEHIND_WINDOW
        if healthy is not None and since <= healthy < until:
            key = (healthy - offset) // width * width + offset  # _bucket_start, inline: once per row
            deploys[key] = deploys.get(key, 0) + 1
            if committed is None:
                no_commit += 1
            else:
                leads.setdefault(key, []).append(max(0.0, healthy - committed))
        is_failed = rollout_failed or gate_failed or behind
        if since <= created < until:
            key = (created - offset) // width * width + offset
            made[key] = made.get(key, 0) + 1
            if is_failed:
                failed[key] = failed.get(key, 0) + 1
                by_rollout += rollout_failed
                by_gate += gate_failed
                by_behind += behind
        if is_failed:
            if open_incident is None:
                open_incident = created
                incidents += since <= created < until
        elif healthy is not None and open_incident is not None:
            if since <= open_incident < until:
                restores.setdefault(_bucket_start(open_incident, size), []).append(max(0.0, healthy - open_incident))
            open_incident = None
    unrestored = int(open_incident is not None and since <= open_incident < until)

    series = []
    key = _bucket_start(since, size)
    while key < until:
        n, bad = made.get(key, 0), failed.get(key, 0)
        series.append(Bucket(start=iso(key), start_ts=key, deploys=deploys.get(key, 0),
                             lead_time_median_seconds=median(leads.get(key, [])), promotions=n, failed=bad,
                             change_failure_rate=bad / n if n else None,
                             restore_median_seconds=median(restores.get(key, []))))
        key += BUCKETS[size]
    all_leads = [v for values in leads.values() for v in values]
    all_restores = [v for values in restores.values() for v in values]
    total_made, total_failed, total_deploys = sum(made.values()), sum(failed.values()), sum(deploys.values())
    days = (until - since) / 86400
    return EnvMetrics(
        env=env,
        deployment_frequency=DeploymentFrequency(count=total_deploys, per_day=round(total_deploys / days, 6)),
        lead_time=LeadTime(count=len(all_leads), median_seconds=median(all_leads), p90_seconds=p90(all_leads),
                           without_commit_time=no_commit),
        change_failure_rate=ChangeFailureRate(rate=total_failed / total_made if total_made else None,
                                              failed=total_failed, promotions=total_made, by_rollout=by_rollout,
                                              by_gate=by_gate, by_behind=by_behind),
        time_to_restore=TimeToRestore(count=len(all_restores), median_seconds=median(all_restores),
                                      p90_seconds=p90(all_restores), incidents=incidents, unrestored=unrestored),
        series=series,
    )


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
    grouped = read_rows(conn, project, env, until)
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
