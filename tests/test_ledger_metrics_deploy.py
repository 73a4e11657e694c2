"""`ledger metrics` after a real `env deploy` (docs/reference-metrics.md#where-the-facts-come-from): the
release records its commit's time, the promotion carries it, and the lead time is that commit time to
the rollout's healthy time, exactly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from deploy_fixtures import demo_fixture, git  # noqa: E402,F401

from engine.ledger.store import Ledger  # noqa: E402

PINNED = "2026-11-20T08:00:00+00:00"


def test_a_real_deploy_records_the_facts_lead_time_needs(demo):
    """docs/reference-metrics.md#lead-time-for-changes: release commit time (recorded at the cut) to the
    promotion's healthy time (its rollout closed ready), one healthy deploy, no failure."""
    pinned = {**demo.env, "GIT_COMMITTER_DATE": PINNED, "GIT_AUTHOR_DATE": PINNED}
    subprocess.run(["git", "commit", "-q", "--amend", "--no-edit"], cwd=demo.root, env=pinned, check=True)
    committed = float(git(demo.root, "show", "-s", "--format=%ct", "HEAD"))
    code, doc = demo.json("env", "deploy", "dev", "--yes", "--stability-window", "0.3")
    assert code == 0, doc
    release = json.loads((demo.root / ".framework" / "releases" / f"{doc['target']['release']}.json").read_text())
    assert release["provenance"]["committed_at"] == committed
    with Ledger.open("demo") as ledger:
        promotion = ledger.current("dev")
        assert promotion is not None and promotion.committed_at == committed
        healthy = ledger.applies("dev")[0]
        assert healthy.outcome == "ready" and healthy.promotion_id == promotion.id
    code, metrics = demo.json("ledger", "metrics", "dev", "--since", "2026-11-19")
    assert code == 0, metrics
    dev = metrics["environments"][0]
    assert dev["deployment_frequency"]["count"] == 1
    assert dev["lead_time"]["count"] == 1 and dev["lead_time"]["median_seconds"] == healthy.finished_at - committed
    assert dev["change_failure_rate"]["failed"] == 0 and dev["change_failure_rate"]["promotions"] == 1
