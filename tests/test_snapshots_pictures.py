"""Snapshots of the pictures with their numbers one key away (`n`): the Rollouts timeline
(docs/reference-deploy.md#ledger-timeline), a trigger's stats (docs/reference-webhooks.md#trigger-stats)
and the daemon's stats (docs/reference-daemon.md#daemon-stats).

The records behind each picture are written with known times, and the pictures are drawn at a
fixed terminal size with no clock (`deterministic_settings`), so the SVG text is stable.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from deploy_fixtures import demo_fixture  # noqa: E402,F401
from screen_fixtures import until  # noqa: E402
from test_snapshots_deploys import _deployed  # noqa: E402

from app.dashboard import Dashboard  # noqa: E402
from app.settings import deterministic_settings  # noqa: E402

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
        await until(pilot, lambda: getattr(app.screen, "loads", 0) >= 1)
        await pilot.press("2")
        await until(pilot, lambda: app.current_mode != "environments" and getattr(app.screen, "loads", 0) >= 1)
        await pilot.press("j", "j", "j")
        await until(pilot, lambda: app.screen.query_one("#rollout-workloads").row_count == 1)
        await pilot.press("t")
        await until(pilot, lambda: getattr(app.screen, "chart", None) is not None)
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
