"""`env status` on the process runtime (docs/reference-deploy.md#commands: status and its exit codes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import cli_fork
from deploy_fixtures import FRAMEWORK_BIN, add_gated_env, demo_fixture  # noqa: E402,F401

from tests.waiting import until  # noqa: E402

FAST = ("--stability-window", "0.3")


def drift_v1_running_v2_promoted(demo) -> None:
    """v1 applied, then an out-of-band promotion of v2 (no apply): the ledger expects v2 while v1 runs."""
    demo.run("env", "build", "dev", "--release", "v1", check=True)
    demo.edit_api("changed")
    demo.commit("change")
    demo.run("env", "build", "dev", "--release", "v2", check=True)
    assert demo.json("env", "deploy", "dev", "v1", "--yes", *FAST)[0] == 0
    from engine.ledger.store import Ledger
    from engine.project import find_project
    from engine.releases.store import load_release

    release = load_release(find_project(demo.root), "v2")
    with Ledger.open("demo") as ledger:  # the demo's FRAMEWORK_LEDGER_HOME (the fixture sets it)
        ledger.append_promotion("dev", "v2", release.images, direction="AHEAD",
                                expected_current=ledger.current_id("dev"))


def test_status_reports_release_images_phases_health_provenance(demo):
    """Status reports bound release, verify state per image, rollout phase, health, ledger freshness, provenance."""
    code, before = demo.json("env", "status", "dev")
    assert code == 0 and before["environments"][0]["convergence"] == "unbound"
    code, dep = demo.json("env", "deploy", "dev", "--yes", *FAST)
    assert code == 0
    code, doc = demo.json("env", "status", "dev")
    assert code == 0, doc
    st = doc["environments"][0]
    assert st["release"] == dep["target"]["release"]
    assert st["promotion"]["id"] == dep["promotion"]["id"]
    assert {i["name"]: i["state"] for i in st["images"]} == {"api": "match", "web": "match"}
    assert {w["name"]: w["phase"] for w in st["workloads"]} == {"api": "ready", "web": "ready"}
    assert st["health"] == "healthy" and st["convergence"] == "converged"
    assert st["ledger"]["backend"] == "machine" and st["ledger"]["newest_id"] == dep["promotion"]["id"]
    assert st["provenance"]["branch"] == "main" and len(st["provenance"]["commit"]) == 40
    human = demo.run("env", "status", "dev")
    assert "match" in human.stdout and dep["target"]["release"] in human.stdout


def test_missing_process_is_missing_exit_1(demo):
    """Verify state `missing` when the workload's process is gone; status exits 1 (wrong)."""
    code, dep = demo.json("env", "deploy", "dev", "--yes", *FAST)
    pid = next(r for r in dep["rollout"]["resources"] if r["name"] == "web")["instances"][0]["pid"]
    os.killpg(pid, signal.SIGKILL)
    until(lambda: not Path(f"/proc/{pid}").exists()
          or Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z", 10,
          what=f"pid {pid} to be gone (or a zombie)")
    code, doc = demo.json("env", "status", "dev")
    assert code == 1
    states = {i["name"]: i["state"] for i in doc["environments"][0]["images"]}
    assert states == {"api": "match", "web": "missing"}
    assert doc["error"]["code"] == "wrong"


def test_drift_when_running_digest_differs_from_frozen(demo):
    """Verify state `drift`: the digest actually running differs from the ledger's frozen digest."""
    drift_v1_running_v2_promoted(demo)
    code, doc = demo.json("env", "status", "dev")
    assert code == 1
    states = {i["name"]: i["state"] for i in doc["environments"][0]["images"]}
    assert states == {"api": "drift", "web": "match"}


def test_signal_selects_which_checks_decide_the_exit_status(demo):
    """`env status --signal <name>` (docs/reference-deploy.md#env-status---signal-name; signals defined in
    engine/deploy/status.py):
    drift fails `verify` (1) but not `health` or `deploy` (0); an unknown signal is a usage error (2)."""
    drift_v1_running_v2_promoted(demo)
    codes = {sig: demo.json("env", "status", "dev", "--signal", sig)[0] for sig in ("verify", "health", "deploy")}
    assert codes == {"verify": 1, "health": 0, "deploy": 0}
    code, doc = demo.json("env", "status", "dev")
    assert code == 1 and doc["environments"][0]["signals"] == {"deploy": 0, "health": 0, "verify": 1}
    code, bad = demo.json("env", "status", "dev", "--signal", "latency")
    assert code == 2 and bad["error"]["code"] == "usage" and "deploy, health, verify" in bad["error"]["message"]


def test_history_paging_with_before_cursor(demo):
    """--history --limit --before pages with next_before; empty next_before on the last page."""
    for v in ("v1", "v2", "v3"):
        demo.edit_api(v)
        demo.commit(v)
        demo.run("env", "build", "dev", "--release", v, check=True)
        assert demo.json("env", "deploy", "dev", v, "--yes", "--no-wait")[0] == 0
    code, page1 = demo.json("env", "status", "dev", "--history", "--limit", "2")
    h1 = page1["environments"][0]["history"]
    assert [p["release"] for p in h1["items"]] == ["v3", "v2"] and h1["next_before"]
    code, page2 = demo.json(
        "env", "status", "dev", "--history", "--limit", "2", "--before", h1["next_before"]
    )
    h2 = page2["environments"][0]["history"]
    assert [p["release"] for p in h2["items"]] == ["v1"] and h2["next_before"] == ""


def test_wait_pinned_reports_stayed_up(demo):
    """--wait is pinned to one promotion and reports whether it stayed up past the stability window."""
    assert demo.json("env", "deploy", "dev", "--yes", "--no-wait")[0] == 0
    code, doc = demo.json("env", "status", "dev", "--wait", "--timeout", "60", "--stability-window", "0.5")
    assert code == 0, doc
    wait = doc["environments"][0]["wait"]
    assert wait["outcome"] == "stayed_up" and wait["stayed_up"] is True


def test_wait_times_out_with_8_and_reads_once_with_timeout_0(demo):
    """Status exit 8: wait timed out while progressing; --timeout 0 reads once (exit 1 when unhealthy)."""
    add_gated_env(demo, "slow")
    assert demo.json("env", "deploy", "slow", "--yes", "--no-wait")[0] == 0
    code, doc = demo.json("env", "status", "slow", "--wait", "--timeout", "1")
    assert code == 8 and doc["environments"][0]["wait"]["outcome"] == "timed_out"
    code, doc = demo.json("env", "status", "slow", "--wait", "--timeout", "0")
    assert code == 1


def test_wait_superseded_exits_6(demo):
    """Status exit 6: a newer promotion lands while `--wait` is pinned to the old one."""
    gate, _ = add_gated_env(demo, "gated")
    demo.run("env", "build", "gated", "--release", "v1", check=True)
    assert demo.json("env", "deploy", "gated", "v1", "--yes", "--no-wait")[0] == 0
    waiter = cli_fork.popen(
        [FRAMEWORK_BIN, "env", "status", "gated", "--wait", "--timeout", "120", "--json"],
        cwd=demo.root,
        env=demo.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    svc = demo.root / "services" / "gated" / "main.py"
    svc.write_text(svc.read_text() + "\n# v2\n")
    demo.commit("v2")
    demo.run("env", "build", "gated", "--release", "v2", check=True)
    assert demo.json("env", "deploy", "gated", "v2", "--yes", "--no-wait")[0] == 0
    out, _ = waiter.communicate(timeout=120)
    assert waiter.returncode == 6, out
    assert json.loads(out)["environments"][0]["wait"]["outcome"] == "SUPERSEDED"


def test_hosted_and_k8s_status_are_undetermined_exit_2(demo):
    """Status exit 2: could not determine (hosted control plane unreachable)."""
    code, doc = demo.json("env", "status", "cloud")
    assert code == 2 and doc["environments"][0]["ledger"]["backend"] == "control_plane"
    code, doc = demo.json("env", "status")
    assert code == 2 and {e["env"] for e in doc["environments"]} == {"cloud", "cluster", "dev", "prod", "staging"}


def test_local_sessions_shown_and_discarded_after_24h(demo):
    """Local sessions appear in status; rows unrefreshed for 24 h are discarded."""
    from engine.ledger.store import Ledger

    with Ledger.open("demo") as ledger:  # the demo's FRAMEWORK_LEDGER_HOME (the fixture sets it)
        ledger.upsert_session("/wt/a", "dev", "feature", True)
        ledger.upsert_session("/wt/b", "dev", "old", False)
        ledger.conn.execute("UPDATE sessions SET refreshed_at=? WHERE worktree='/wt/b'", (time.time() - 25 * 3600,))
        ledger.upsert_session("/wt/c", "dev", "gone", False)
        ledger.mark_stopped("/wt/c")
    code, doc = demo.json("env", "status", "dev")
    sessions = {s["worktree"]: s for s in doc["environments"][0]["sessions"]}
    assert set(sessions) == {"/wt/a", "/wt/c"}
    assert sessions["/wt/a"]["dirty"] and sessions["/wt/a"]["branch"] == "feature"
    assert sessions["/wt/c"]["stopped"] is True


def test_untagged_when_a_live_owned_process_carries_no_digest(demo):
    """Verify state `untagged`: a live process carrying our markers but no digest marker."""
    import uuid

    from engine.paths import atomic_write_bytes
    from engine.runtime.process import instances, runtime_dir

    assert demo.json("env", "deploy", "dev", "--yes", "--no-wait")[0] == 0
    for inst in instances("demo", "dev", "web"):
        inst.stop()
    instance = uuid.uuid4().hex
    env = {**demo.env, "FRAMEWORK_OWNED_BY": "framework", "FRAMEWORK_INSTANCE": instance,
           "PORT": str(demo.ports["web"])}
    proc = subprocess.Popen([sys.executable, str(demo.root / "services/web/main.py")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    record = {"instance": instance, "pid": proc.pid, "workload": "web", "replica": 0, "port": demo.ports["web"],
              "digest": "", "release": "", "promotion_id": "", "run": [], "started_at": time.time()}
    atomic_write_bytes(runtime_dir("demo", "dev") / "instances" / "web.0.manual.json", json.dumps(record).encode())
    try:
        code, doc = demo.json("env", "status", "dev")
        assert code == 1
        assert {i["name"]: i["state"] for i in doc["environments"][0]["images"]} == {"api": "match", "web": "untagged"}
    finally:
        proc.kill()
        proc.wait()
