"""Rollouts screen for a Kubernetes environment (docs/reference-k8s.md#dashboard), against the real API server: the same
table and columns as a process environment, per Deployment its phase and ready replicas, and the tail
of its events where a process workload shows its log tail."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from k8s_fixtures import API, WEB, digest, kdemo_fixture  # noqa: E402,F401
from screen_fixtures import SIZE  # noqa: E402

from app.dashboard import Dashboard  # noqa: E402
from app.settings import deterministic_settings  # noqa: E402
from tests.waiting import until_app


def test_rollouts_screen_shows_a_cluster_rollout_with_ready_replicas_and_events(kdemo, monkeypatch: pytest.MonkeyPatch
                                                                               ) -> None:
    """Deploy phases and rollout outcome per resource (docs/reference-k8s.md#dashboard), on the dashboard: the
    cluster environment's last rollout (`ready`), each Deployment's phase and `<ready>/<desired> ready`, and
    its events tail."""
    kd = kdemo
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")
    assert code == 0, doc
    for key in ("HOME", "XDG_CACHE_HOME", "FRAMEWORK_LEDGER_HOME", "KUBECONFIG", "PATH"):
        monkeypatch.setenv(key, kd.demo.env[key])
    monkeypatch.chdir(kd.root)

    async def scenario() -> None:
        app = Dashboard(project_dir=kd.root, settings=deterministic_settings(refresh_seconds=0.5))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("2")
            await until_app(pilot, lambda: app.current_mode == "rollouts" and app.screen.loads >= 1)
            row = next(r for r in app.screen.view.environments if r.env == "cluster")
            assert row.target == "k8s" and row.outcome == "ready" and row.release == "v1"
            assert app.screen.query_one("#rollout-envs").get_row("cluster")[1] == "last rollout"
            by_name = {w.name: w for w in row.workloads}
            assert by_name["api"].phase == "ready" and by_name["api"].probes == ["2/2 ready"]
            assert (by_name["api"].ready_replicas, by_name["api"].replicas) == (2, 2)
            assert by_name["api"].tail_kind == "events"
            assert any("ScalingReplicaSet" in line for line in by_name["api"].log_tail)
            table = app.screen.query_one("#rollout-envs")
            table.move_cursor(row=table.get_row_index("cluster"))
            await pilot.pause()
            await until_app(pilot, lambda: "events tail of api" in str(
                app.screen.query_one("#rollout-log-text").render()))
            assert app.screen.query_one("#rollout-workloads").get_row("api")[4] == "2/2 ready"

    asyncio.run(scenario())
