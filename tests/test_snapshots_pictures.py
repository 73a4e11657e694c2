"""Snapshots of the pictures with their numbers one key away (`n`): the Rollouts timeline
(docs/reference-deploy.md#ledger-timeline), a trigger's stats (docs/reference-webhooks.md#trigger-stats)
and the daemon's stats (docs/reference-daemon.md#daemon-stats).

The records behind each picture are written with known times, and the pictures are drawn at a
fixed terminal size with no clock (`deterministic_settings`), so the SVG text is stable.
"""

from __future__ import annotations

import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from deploy_fixtures import demo_fixture  # noqa: E402,F401
from test_snapshots_deploys import _deployed  # noqa: E402

from app.dashboard import Dashboard  # noqa: E402
from app.settings import deterministic_settings  # noqa: E402
from tests.daemon_fixtures import instances  # noqa: E402,F401
from tests.test_trigger_stats import seed  # noqa: E402
from tests.waiting import until_app  # noqa: E402
from tests.webhooks_fixtures import make_trigger, server_factory  # noqa: E402,F401

SIZE = (130, 36)
T0 = 1_700_000_000.0


def known_times(demo: Any) -> None:
    """The gated environment's rollout rewritten with known times: 40 s in all, `gated` pending 1 s,
    progressing, crashing twice (DEGRADED 1 s each), stabilizing 12 s (a slow health check), ready."""
    records = [("pending", 0), ("progressing", 1), ("DEGRADED", 6), ("progressing", 7), ("DEGRADED", 12),
               ("progressing", 13), ("stabilizing", 20), ("ready", 32)]
    with sqlite3.connect(Path(demo.env["FRAMEWORK_LEDGER_HOME"]) / "ledger.sqlite3") as db:
        (seq,) = db.execute("SELECT max(seq) FROM applies WHERE env='gated'").fetchone()
        db.execute("DELETE FROM phases WHERE apply_seq=?", (seq,))
        db.executemany("INSERT INTO phases (apply_seq, workload, phase, at) VALUES (?,?,?,?)",
                       [(seq, "gated", phase, T0 + at) for phase, at in records])
        db.execute("UPDATE applies SET started_at=?, finished_at=? WHERE seq=?", (T0, T0 + 40, seq))


def _timeline(*keys: str) -> Any:
    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await until_app(pilot, lambda: getattr(app.screen, "loads", 0) >= 1, what="the first load")
        await pilot.press("2")
        await until_app(pilot, lambda: app.current_mode != "environments" and getattr(app.screen, "loads", 0) >= 1,
                        what="the Rollouts screen's first load")
        await pilot.press("j", "j", "j")
        await until_app(pilot, lambda: app.screen.query_one("#rollout-workloads").row_count == 1,
                        what="gated's workload row")
        await pilot.press("t")
        await until_app(pilot, lambda: getattr(app.screen, "chart", None) is not None, what="the chart read")
        await pilot.press(*keys)
        await app.workers.wait_for_complete()
        await pilot.pause()

    return run_before


def test_rollout_timeline_picture(snap_compare: Any, demo: Any) -> None:
    """docs/reference-deploy.md#ledger-timeline: the Rollouts screen's `t` draws each workload's phases
    against time; two crashes and a slow health check are visible as a shape."""
    _deployed(demo)
    known_times(demo)
    app = Dashboard(project_dir=demo.root, settings=deterministic_settings(show_volatile=False))
    assert snap_compare(app, terminal_size=SIZE, run_before=_timeline())


def test_rollout_timeline_numbers(snap_compare: Any, demo: Any) -> None:
    """docs/reference-deploy.md#ledger-timeline: `n` shows the spans behind the timeline (phase, from, to,
    how long), the same numbers as `framework ledger timeline <env> --json`."""
    _deployed(demo)
    known_times(demo)
    app = Dashboard(project_dir=demo.root, settings=deterministic_settings(show_volatile=False))
    assert snap_compare(app, terminal_size=SIZE, run_before=_timeline("n"))


def test_trigger_stats_picture(snap_compare: Any, server_factory: Any, demo_project: Path,  # noqa: F811
                               monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """docs/reference-webhooks.md#trigger-stats: `s` on a trigger draws deliveries per minute and p50/p99
    answer latency over the last hour as sparklines, rejected and deduplicated counts beside them."""
    monkeypatch.chdir(demo_project)
    srv = stats_server(server_factory, tmp_path)
    assert snap_compare(webhooks_app(srv), terminal_size=SIZE, run_before=_stats())


def test_trigger_stats_numbers(snap_compare: Any, server_factory: Any, demo_project: Path,  # noqa: F811
                               monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """docs/reference-webhooks.md#trigger-stats: `n` shows the minutes behind the sparklines, newest first,
    named by how long ago they started (the numbers of `platform trigger stats --json`)."""
    monkeypatch.chdir(demo_project)
    srv = stats_server(server_factory, tmp_path)
    assert snap_compare(webhooks_app(srv), terminal_size=SIZE, run_before=_stats("n"))


def stats_server(server_factory: Any, tmp_path: Path) -> Any:  # noqa: F811
    """A real server whose triage/ci holds deliveries at known minutes and latencies (tests/test_trigger_stats.py)."""
    srv = server_factory(extra_env={"PLATFORM_PUBLIC_URL": "https://hooks.example.test"})
    make_trigger(srv, tmp_path)
    rows = [(0, "run_started", 1_000), (0, "run_started", 3_000), (0, "retry", 2_000), (0, "refused", 500)]
    rows += [(m, "run_started", 2_000 + 1_000 * m) for m in range(1, 60, 3)]
    rows += [(m, "run_started", 40_000) for m in (10, 10, 10, 11, 11)]
    seed(srv, rows, "triage")
    return srv


def webhooks_app(srv: Any) -> Dashboard:
    return Dashboard(settings=deterministic_settings(platform_server_url=srv.url, platform_token=srv.token,
                                                     refresh_seconds=3600))


def _stats(*keys: str) -> Any:
    async def run_before(pilot: Any) -> None:
        from tests.test_snapshots_webhooks import _hide_volatile, _open_webhooks

        app = pilot.app
        await _open_webhooks(pilot)
        await _hide_volatile(pilot)
        await pilot.press("s")
        await until_app(pilot, lambda: getattr(app.screen, "chart", None) is not None, what="the chart read")
        await pilot.press(*keys)
        await app.workers.wait_for_complete()  # (the snap_compare fixture settles the layout after this)

    return run_before


def daemon_samples(root: Path) -> None:
    """Samples of instance `main` at known minutes (1 s before each minute ends, counted back from now):
    a 3 MiB transfer a minute ago with 3 sessions, smaller ones earlier, nothing for minutes 20-29
    (the daemon was not running)."""
    from engine.daemon.stats import append_sample

    now = time.time()
    for minute in range(60):
        if 20 <= minute < 30:
            continue
        moved = 3 << 20 if minute == 0 else (minute % 7) * 40_000
        append_sample(root / "main", {"file": minute % 4, "shell": 1 if minute < 10 else 0}, moved, moved // 4,
                      at=now - 60 * minute - 1)


def _daemon_stats(*keys: str) -> Any:
    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await pilot.press("5")
        await until_app(pilot, lambda: app.current_mode == "daemon" and getattr(app.screen, "loads", 0) >= 1,
                        what="the Daemon screen's first load")
        await pilot.press("s")
        await until_app(pilot, lambda: getattr(app.screen, "chart", None) is not None, what="the chart read")
        await pilot.press(*keys)
        await app.workers.wait_for_complete()
        await pilot.pause()

    return run_before


def test_daemon_stats_picture(snap_compare: Any, instances: Any, demo_project: Path) -> None:  # noqa: F811
    """docs/reference-daemon.md#daemon-stats: `s` on an instance draws its transfer throughput and session
    count per minute over the last hour; a gap where the daemon was not running."""
    daemon_samples(instances[0])
    app = Dashboard(project_dir=demo_project, settings=deterministic_settings(refresh_seconds=3600))
    assert snap_compare(app, terminal_size=SIZE, run_before=_daemon_stats())


def test_daemon_stats_numbers(snap_compare: Any, instances: Any, demo_project: Path) -> None:  # noqa: F811
    """docs/reference-daemon.md#daemon-stats: `n` shows the minutes behind the sparklines, newest first (the
    numbers of `platform daemon stats --json`)."""
    daemon_samples(instances[0])
    app = Dashboard(project_dir=demo_project, settings=deterministic_settings(refresh_seconds=3600))
    assert snap_compare(app, terminal_size=SIZE, run_before=_daemon_stats("n"))
