"""`framework ledger timeline <env> [promotion]` (docs/reference-deploy.md#ledger-timeline): each
workload's phases against time from the machine ledger's phase records, built here with known times;
and a real deploy records its phase changes (docs/reference-deploy.md#files)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import cli_fork  # noqa: E402
from deploy_fixtures import add_gated_env, demo_fixture  # noqa: E402,F401

from engine.ledger.store import Ledger  # noqa: E402

FRAMEWORK = str(Path(sys.executable).with_name("framework"))
IMAGES = {"api": {"kind": "file", "coordinate": "files:api", "digest": "sha256:" + "a" * 64}}
T0 = 1_700_000_000.0


def seed_rollout(project: str = "proj") -> str:
    """One promotion of v1 to dev whose apply started at T0 and finished at T0 + 30: api took 26 s
    stabilizing (a slow health check), web crashed once (DEGRADED for 0.2 s) before it was ready."""
    with Ledger.open(project) as ledger:
        p = ledger.append_promotion("dev", "v1", IMAGES, direction="INITIAL", expected_current=None)
        seq = ledger.start_apply("dev", p.id, "v1")
        ledger.update_apply(seq, phase="progressing", transitions=[
            ("api", "pending", T0), ("web", "pending", T0), ("api", "progressing", T0 + 0.5),
            ("web", "progressing", T0 + 1), ("api", "stabilizing", T0 + 2)])
        ledger.update_apply(seq, phase="ready", outcome="ready", finished=True, transitions=[
            ("web", "DEGRADED", T0 + 10.1), ("web", "progressing", T0 + 10.3), ("web", "ready", T0 + 20),
            ("api", "ready", T0 + 28)])
        ledger.conn.execute("UPDATE applies SET started_at=?, finished_at=? WHERE seq=?", (T0, T0 + 30, seq))
        return p.id


def project_dir(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "framework.yaml").write_text("name: proj\n")
    return root


def run(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FRAMEWORK_LEDGER_HOME": str(home), "NO_COLOR": "1"}
    return cli_fork.run([FRAMEWORK, "ledger", "timeline", *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=60)


def test_timeline_json_is_the_phase_records_against_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-deploy.md#ledger-timeline: spans in seconds since the apply started, a phase lasting
    until the workload's next record and its last until the apply finished; the exact numbers."""
    monkeypatch.setenv("FRAMEWORK_LEDGER_HOME", str(tmp_path / "ledger"))
    promotion = seed_rollout()
    root = project_dir(tmp_path)
    for args in (("dev",), ("dev", promotion)):
        done = run(root, tmp_path / "ledger", *args, "--json")
        assert done.returncode == 0, done.stderr
        doc = json.loads(done.stdout)
        assert doc["ok"] is True and doc["exit_code"] == 0
        assert (doc["env"], doc["release"], doc["promotion_id"], doc["in_flight"], doc["outcome"],
                doc["duration"]) == ("dev", "v1", promotion, False, "ready", 30.0)
        spans = {w["name"]: [(s["phase"], s["start"], s["end"], s["seconds"]) for s in w["spans"]]
                 for w in doc["workloads"]}
        assert spans == {
            "api": [("pending", 0.0, 0.5, 0.5), ("progressing", 0.5, 2.0, 1.5), ("stabilizing", 2.0, 28.0, 26.0),
                    ("ready", 28.0, 30.0, 2.0)],
            "web": [("pending", 0.0, 1.0, 1.0), ("progressing", 1.0, 10.1, 9.1), ("DEGRADED", 10.1, 10.3, 0.2),
                    ("progressing", 10.3, 20.0, 9.7), ("ready", 20.0, 30.0, 10.0)],
        }
    human = run(root, tmp_path / "ledger", "dev")
    assert human.returncode == 0 and "stabilizing" in human.stdout and "26.000s" in human.stdout


def test_timeline_refuses_unknown_rollouts_and_bad_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-deploy.md#ledger-timeline: no rollout recorded is exit 1 not_found; a bad environment
    name is exit 2; --json is still one document, no traceback."""
    monkeypatch.setenv("FRAMEWORK_LEDGER_HOME", str(tmp_path / "ledger"))
    seed_rollout()
    root = project_dir(tmp_path)
    for args, code, error in ((("prod",), 1, "not_found"), (("dev", "nope"), 1, "not_found"),
                              (("../x",), 2, "usage")):
        done = run(root, tmp_path / "ledger", *args, "--json")
        doc = json.loads(done.stdout)
        assert done.returncode == code and doc["exit_code"] == code and doc["ok"] is False, done.stdout
        assert doc["error"]["code"] == error and "Traceback" not in done.stderr


def test_in_flight_rollout_lasts_until_now(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-deploy.md#ledger-timeline: while a rollout is in flight its last phases last until now."""
    from engine.ledger.timeline import build_timeline

    t = build_timeline("dev", "p", "v1", T0, None, "progressing", None,
                       [("api", "pending", T0), ("api", "progressing", T0 + 4)], now=T0 + 9)
    assert t.in_flight and t.duration == 9.0
    assert [(s.phase, s.start, s.end) for s in t.workloads[0].spans] == [("pending", 0.0, 4.0),
                                                                         ("progressing", 4.0, 9.0)]


def test_a_real_deploy_records_its_phase_changes(demo) -> None:  # noqa: F811
    """docs/reference-deploy.md#files: a process deploy writes each workload's phase changes to the
    phase records (pending, progressing, stabilizing, ready in that order, at rising times)."""
    add_gated_env(demo, health='health = framework.HealthCheck {type = "command", command = "true"}')
    demo.commit("gated env")
    demo.run("env", "build", "gated", "--release", "g1", check=True)
    demo.run("env", "deploy", "gated", "g1", "--yes", "--stability-window", "0.3", check=True)
    code, doc = demo.json("ledger", "timeline", "gated")
    assert code == 0 and doc["outcome"] == "ready" and doc["workloads"], doc
    for w in doc["workloads"]:
        phases = [s["phase"] for s in w["spans"]]
        assert phases == ["pending", "progressing", "stabilizing", "ready"], (w["name"], phases)
        starts = [s["start"] for s in w["spans"]]
        assert starts == sorted(starts) and w["spans"][-1]["end"] == doc["duration"]


def test_timeline_modal_says_when_nothing_was_recorded(demo) -> None:  # noqa: F811
    """docs/reference-deploy.md#ledger-timeline: `t` on an environment without a rollout shows the command's
    not_found message in the modal (no picture invented), and `n` switches to the (empty) numbers and back."""
    import asyncio

    from app.dashboard import Dashboard
    from app.settings import deterministic_settings
    from screens.widgets.chart_modal import ChartModal
    from tests.waiting import until_app

    async def scenario() -> None:
        app = Dashboard(project_dir=demo.root, settings=deterministic_settings(show_volatile=False))
        async with app.run_test(size=(130, 36)) as pilot:
            await until_app(pilot, lambda: getattr(app.screen, "loads", 0) >= 1, what="the first load")
            await pilot.press("2")
            await until_app(pilot, lambda: app.current_mode == "rollouts" and getattr(app.screen, "loads", 0) >= 1,
                            what="the Rollouts screen's first load")
            await pilot.press("t")
            await until_app(pilot, lambda: isinstance(app.screen, ChartModal) and app.screen.loads >= 1,
                            what="the timeline read")
            modal = app.screen
            summary = str(modal.query_one("#chart-summary").render())
            assert summary.startswith("error: no rollout of ") and "in the machine ledger" in summary, summary
            assert modal.chart is None and modal.query_one("#chart-numbers").row_count == 0
            await pilot.press("n")
            assert modal.query_one("#chart-numbers").display and not modal.query_one("#chart-picture").display
            await pilot.press("n")
            assert modal.query_one("#chart-picture").display and not modal.query_one("#chart-numbers").display
            await pilot.press("escape")
            await until_app(pilot, lambda: not isinstance(app.screen, ChartModal), what="the modal closed")

    asyncio.run(scenario())
