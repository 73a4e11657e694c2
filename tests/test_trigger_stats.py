"""`platform trigger stats <automation> <trigger>` (docs/reference-webhooks.md#trigger-stats): deliveries per
minute, answer latency (p50/p99, nearest rank) and rejected/deduplicated counts over the last minutes,
from a real `platform server`'s delivery history."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine.hooks.stats import percentile
from tests.webhooks_fixtures import Server, make_trigger, module_server_factory  # noqa: F401

MINUTE_US = 60_000_000


@pytest.fixture(scope="module")
def server(module_server_factory) -> Server:  # noqa: F811
    """One server for the module's tests; each test has its own automation, so its history is its own."""
    return module_server_factory()


def seed(srv: Server, rows: list[tuple[int, str, int | None]], automation: str) -> int:
    """Deliveries to <automation>/ci at known offsets: (minutes ago, outcome, answer latency in us or None).
    Each is received 1 s before its minute ends (counted back from now), so a query made within 59 s
    puts it in that minute. Returns the insertion time (us)."""
    now = time.time_ns() // 1000
    with sqlite3.connect(srv.data_dir / "platform.db") as db:
        trigger_id, automation_id = db.execute(
            "SELECT t.id, t.automation_id FROM triggers t JOIN automations a ON a.id = t.automation_id "
            "WHERE a.name=? AND t.name='ci'", (automation,)).fetchone()
        for n, (ago, outcome, latency) in enumerate(rows):
            at = now - ago * MINUTE_US - 1_000_000
            db.execute(
                "INSERT INTO deliveries (id, trigger_id, automation_id, received_at, status_code, outcome, "
                "auth_method, body_bytes, updated_at, decided_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (f"dlv_{at:014x}{n:010x}", trigger_id, automation_id, at, 409 if outcome == "refused" else 202,
                 outcome, "bearer", 2, at, None if latency is None else at + latency))
    return now


def test_stats_json_has_the_exact_numbers(server: Server, tmp_path: Path) -> None:  # noqa: F811
    """docs/reference-webhooks.md#trigger-stats: per minute (oldest first) the deliveries, rejected (refused)
    and deduplicated (retry) counts and the p50/p99 answer latency; the window's totals beside them."""
    make_trigger(server, tmp_path, "exact")
    seed(server, [
        (0, "run_started", 1_000), (0, "run_started", 3_000), (0, "retry", 2_000), (0, "refused", 500),
        (2, "run_started", 10_000), (2, "filtered_out", 20_000), (2, "run_started", None),
        (4, "run_started", 7_000),
        (7, "run_started", 1),  # outside a 5-minute window
    ], "exact")
    doc = server.cli_json("trigger", "stats", "exact", "ci", "--minutes", "5")
    assert doc["ok"] is True and doc["exit_code"] == 0, doc
    assert (doc["minutes"], doc["deliveries"], doc["rejected"], doc["deduplicated"]) == (5, 8, 1, 1)
    assert doc["outcomes"] == {"filtered_out": 1, "refused": 1, "retry": 1, "run_started": 5}
    # all latencies: 0.5 1 2 3 7 10 20 ms -> p50 the 4th (3 ms), p99 the 7th (20 ms)
    assert (doc["p50_ms"], doc["p99_ms"]) == (3.0, 20.0)
    minutes = [(m["deliveries"], m["rejected"], m["deduplicated"], m["p50_ms"], m["p99_ms"])
               for m in doc["per_minute"]]
    assert minutes == [(1, 0, 0, 7.0, 7.0), (0, 0, 0, None, None), (3, 0, 0, 10.0, 20.0), (0, 0, 0, None, None),
                       (4, 1, 1, 1.0, 3.0)]
    human = server.cli("trigger", "stats", "exact", "ci", "--minutes", "5")
    assert human.returncode == 0 and "8 deliveries, 1 rejected, 1 deduplicated" in human.stdout


def test_real_deliveries_record_their_answer_latency(server: Server, tmp_path: Path) -> None:  # noqa: F811
    """docs/reference-webhooks.md#trigger-stats: every delivery the server answers records when its answer
    was decided; a retry of the same body within its minute counts as deduplicated."""
    act = make_trigger(server, tmp_path, "latency")
    headers = {"Authorization": f"Bearer {act['token']}"}
    for body in ({"n": 1}, {"n": 2}, {"n": 1}):
        assert httpx.post(act["url"], json=body, headers=headers, timeout=30).status_code == 202
    doc = server.cli_json("trigger", "stats", "latency", "ci", "--minutes", "1")
    assert (doc["deliveries"], doc["deduplicated"], doc["rejected"]) == (3, 1, 0), doc
    assert doc["p50_ms"] is not None and 0 <= doc["p50_ms"] <= doc["p99_ms"] < 30_000


def test_stats_refusals(server: Server, tmp_path: Path) -> None:  # noqa: F811
    """docs/reference-webhooks.md#trigger-stats: an unknown trigger is exit 1 not_found; a window outside
    1-1440 minutes is exit 2; one --json document each."""
    make_trigger(server, tmp_path, "refusals")
    assert server.cli_json("trigger", "stats", "refusals", "nope")["error"]["code"] == "not_found"
    for minutes in ("0", "1441"):
        doc = server.cli_json("trigger", "stats", "refusals", "ci", "--minutes", minutes)
        assert doc["exit_code"] == 2 and doc["error"]["code"] == "usage", doc


def test_percentile_is_nearest_rank() -> None:
    """docs/reference-webhooks.md#trigger-stats: p50 and p99 are nearest-rank percentiles."""
    values: list[Any] = [5, 1, 4, 2, 3]
    assert (percentile(values, 50), percentile(values, 99), percentile(values, 1)) == (3, 5, 1)
    assert percentile([], 50) is None
