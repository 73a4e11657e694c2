"""Snapshot of the Clusters view with no cluster created (docs/reference-cluster.md#dashboard): the empty
state names the commands that create one. The live view is asserted by a Pilot test on a real kwok
cluster (tests/test_cluster_kwok.py). Regenerate on purpose with `--snapshot-update` and read the SVG.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from tests.waiting import until_app

SIZE = (120, 30)


def test_clusters_view_empty_layout(snap_compare: Any, demo_project: Path) -> None:
    """docs/reference-cluster.md#dashboard: `c` on the Environments screen opens the Clusters view; with no
    cluster recorded in the checkout it says so and names `framework cluster up` (no data invented)."""

    async def run_before(pilot: Any) -> None:
        app = pilot.app
        await until_app(pilot, lambda: getattr(app.screen, "loads", 0) >= 1, what="the environments")
        await pilot.press("c")
        await until_app(pilot, lambda: type(app.screen).__name__ == "ClustersScreen"
                        and app.screen.loads >= 1, what="the clusters view's first load")
        await app.workers.wait_for_complete()
        await pilot.pause()

    app = Dashboard(project_dir=demo_project, settings=deterministic_settings(show_volatile=False))
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
