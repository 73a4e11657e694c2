"""`framework ledger metrics` on a ledger built with known times (docs/reference-metrics.md): each of the
four measures asserted exactly, the window, the series and the command's documents and refusals."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from metrics_fixtures import SINCE, T0, UNTIL, D, H, build_known_ledger  # noqa: E402

from engine.ledger.metrics import BEHIND_WINDOW, machine_metrics, median, p90  # noqa: E402
from engine.ledger.store import Ledger  # noqa: E402


@pytest.fixture(autouse=True)
def known_ledger() -> None:
    build_known_ledger("proj")


def _metrics(since: float = SINCE, until: float = UNTIL, env: str | None = None, bucket: str = "day"):
    with Ledger.open("proj") as ledger:
        return machine_metrics(ledger.conn, "proj", str(ledger.path), env, since, until, bucket)


def _env(m, name):
    return next(e for e in m.environments if e.env == name)


def test_deployment_frequency_counts_promotions_that_reached_healthy():
    """docs/reference-metrics.md#deployment-frequency: promotions whose rollout closed ready, by healthy
    time; failed, timed-out and in-flight rollouts are not deployments."""
    m = _metrics()
    prod, dev = _env(m, "prod"), _env(m, "dev")
    assert prod.deployment_frequency.count == 5 and prod.deployment_frequency.per_day == round(5 / 7, 6)
    assert dev.deployment_frequency.count == 1  # its second promotion is still in flight
    assert [b.deploys for b in prod.series] == [1, 1, 2, 1, 0, 0, 0]
    assert [b.start for b in prod.series][:2] == ["2026-11-02T00:00:00Z", "2026-11-03T00:00:00Z"]


def test_lead_time_is_commit_time_to_healthy_time_median_and_p90():
    """docs/reference-metrics.md#lead-time-for-changes: the release's commit time to its promotion's
    healthy time; median (mean of the middle two) and p90 by nearest rank; no commit time, not counted."""
    prod = _env(_metrics(), "prod")
    # 70 min, 2 h 20 min, 40 min and 2 d 2 h 5 min (the BEHIND promotion of the old v1)
    assert prod.lead_time.count == 4 and prod.lead_time.without_commit_time == 1
    assert prod.lead_time.median_seconds == (4200 + 8400) / 2
    assert prod.lead_time.p90_seconds == 180300
    assert [b.lead_time_median_seconds for b in prod.series][:4] == [4200, 8400, (2400 + 180300) / 2, None]


def test_change_failure_rate_counts_rollout_gate_and_behind_failures():
    """docs/reference-metrics.md#change-failure-rate: a failed or timed-out rollout, a failed gate, or a
    BEHIND promotion within 24 h afterwards fail a promotion; the rate is over all promotions made."""
    m = _metrics()
    cfr = _env(m, "prod").change_failure_rate
    assert (cfr.failed, cfr.promotions) == (3, 7) and cfr.rate == 3 / 7
    assert (cfr.by_rollout, cfr.by_gate, cfr.by_behind) == (2, 1, 1)  # v4: its gate failed and v1 replaced it
    assert m.behind_window_seconds == BEHIND_WINDOW == 86400
    assert _env(m, "dev").change_failure_rate.rate == 0.0
    assert [b.change_failure_rate for b in _env(m, "prod").series][:6] == [0.0, 0.5, 0.5, 0.0, 1.0, None]


def test_time_to_restore_runs_from_failure_to_next_healthy_promotion():
    """docs/reference-metrics.md#time-to-restore: from the failed promotion to the healthy time of the
    next promotion that did not fail; the last failure is still open (unrestored)."""
    ttr = _env(_metrics(), "prod").time_to_restore
    assert (ttr.incidents, ttr.count, ttr.unrestored) == (3, 2, 1)
    assert ttr.median_seconds == (4800 + 7500) / 2 and ttr.p90_seconds == 7500


def test_the_window_is_the_ledger_as_it_stood_at_until():
    """docs/reference-metrics.md#the-window: nothing after --until counts; a failure not yet restored
    at --until is unrestored, and a gate recorded later has not failed the promotion yet."""
    m = _metrics(until=T0 + D + 30 * 60)
    prod = _env(m, "prod")
    assert prod.deployment_frequency.count == 1
    assert (prod.change_failure_rate.failed, prod.change_failure_rate.promotions) == (1, 2)
    assert (prod.time_to_restore.incidents, prod.time_to_restore.unrestored) == (1, 1)
    later = _env(_metrics(since=T0 + 2 * D, until=T0 + 2 * D + H), "prod")  # v4 made, its gate failed
    assert later.change_failure_rate.by_gate == 1 and later.change_failure_rate.by_behind == 0


def test_week_buckets_start_on_monday_utc():
    """docs/reference-metrics.md#the-window: --bucket week groups by ISO weeks starting Monday 00:00 UTC."""
    prod = _env(_metrics(bucket="week", since=T0 - 3 * D), "prod")
    assert [(b.start, b.deploys) for b in prod.series] == [("2026-10-26T00:00:00Z", 0), ("2026-11-02T00:00:00Z", 5)]


def test_median_and_p90_definitions():
    """docs/reference-metrics.md#lead-time-for-changes: median and nearest-rank p90, exactly."""
    assert median([3, 1, 2]) == 2 and median([4, 1, 2, 3]) == 2.5 and median([]) is None
    assert p90(list(range(1, 11))) == 9 and p90([5]) == 5 and p90(list(range(1, 12))) == 10


def _demo_ledger(demo_project: Path) -> None:
    from engine.project import find_project

    build_known_ledger(find_project(demo_project).key)


def test_command_json_document(demo_project, cli):
    """docs/reference-metrics.md#ledger-metrics: --json is one document (ok, exit_code, error) with each
    measure and how it was counted."""
    _demo_ledger(demo_project)
    r = cli("framework", "ledger", "metrics", "prod", "--since", "2026-11-02", "--until", "2026-11-09T00:00:00Z",
            "--json", cwd=demo_project)
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["ok"] is True and doc["exit_code"] == 0 and doc["error"] is None
    assert [e["env"] for e in doc["environments"]] == ["prod"]
    prod = doc["environments"][0]
    assert prod["change_failure_rate"]["rate"] == 3 / 7 and "BEHIND" in prod["change_failure_rate"]["counted"]
    assert prod["lead_time"]["median_seconds"] == 6300 and len(prod["series"]) == 7
    human = cli("framework", "ledger", "metrics", "--since", "2026-11-02", "--until", "2026-11-09",
                cwd=demo_project)
    assert human.exit_code == 0 and "change failure rate   43% (3 of 7" in human.stdout
    assert "\ndev\n" in human.stdout and "median 1.8h, p90 2.1d over 4" in human.stdout


@pytest.mark.parametrize("args,needle", [
    (("--since", "yesterday"), "--since 'yesterday': not a date"),
    (("--since", "nan"), "not a date or time"),
    (("--since", "2026-11-09", "--until", "2026-11-02"), "is not before --until"),
    (("--bucket", "hour"), "--bucket 'hour': not a bucket"),
    (("--since", "1970-01-01", "--until", "9000-01-01"), "more than 5000 days"),
])
def test_bad_windows_are_usage_errors(demo_project, cli, args, needle):
    """docs/reference-metrics.md#ledger-metrics: a bad --since/--until/--bucket is exit 2, said on
    stderr, one JSON document with --json, no traceback."""
    r = cli("framework", "ledger", "metrics", *args, cwd=demo_project)
    assert r.exit_code == 2 and needle in r.stderr and "Traceback" not in r.stderr
    doc = json.loads(cli("framework", "ledger", "metrics", *args, "--json", cwd=demo_project).stdout)
    assert doc["ok"] is False and doc["exit_code"] == 2 and doc["error"]["code"] == "usage"


def test_hosted_environment_is_refused_by_name(demo_project, cli):
    """docs/reference-metrics.md#the-hosted-ledger: an environment on the control plane is refused
    (exit 1, metrics_unavailable), never estimated."""
    r = cli("framework", "ledger", "metrics", "cloud", "--json", cwd=demo_project)
    doc = json.loads(r.stdout)
    assert r.exit_code == 1 and doc["error"]["code"] == "metrics_unavailable"
    assert "control plane" in doc["error"]["message"]


def test_a_ledger_from_before_metrics_gains_the_column_and_indexes(tmp_path):
    """docs/reference-metrics.md#how-it-is-computed: an existing ledger gains `committed_at` and the
    metrics' indexes on its first open; its old promotions count without a commit time."""
    import sqlite3

    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE promotions (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE,"
        " project TEXT NOT NULL, env TEXT NOT NULL, release TEXT NOT NULL, images TEXT NOT NULL,"
        " direction TEXT NOT NULL, previous_id TEXT,"
        " plan_digest TEXT, supersede INTEGER NOT NULL DEFAULT 0, source TEXT NOT NULL DEFAULT 'deploy',"
        " who TEXT NOT NULL, created_at REAL NOT NULL);"
        "INSERT INTO promotions (id, project, env, release, images, direction, who, created_at)"
        f" VALUES ('prm_old', 'old', 'prod', 'v0', '{{}}', 'INITIAL', 'u@h', {T0 + H});")
    conn.close()
    with Ledger.open("old", path) as ledger:
        seq = ledger.start_apply("prod", "prm_old", "v0")
        ledger.update_apply(seq, phase="ready", outcome="ready", finished=True, finished_at=T0 + 2 * H)
        indexes = {r[0] for r in ledger.conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert {"promotions_times", "applies_by_outcome", "gates_by_status"} <= indexes
        prod = machine_metrics(ledger.conn, "old", str(path), None, SINCE, UNTIL, "day").environments[0]
    assert prod.deployment_frequency.count == 1
    assert (prod.lead_time.count, prod.lead_time.without_commit_time) == (0, 1)
