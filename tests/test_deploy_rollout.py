"""Rollout outcomes and their exit codes: DEGRADED 1, superseded 6, in flight 4, wait budget 8, race 3."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import cli_fork
from deploy_fixtures import FRAMEWORK_BIN, add_gated_env, demo_fixture  # noqa: E402,F401

from tests.waiting import until  # noqa: E402


def current_of(demo, env: str):
    """The environment's current promotion id, read from the demo's machine ledger in this process (a wait
    polls it: a `framework ledger show` per poll would cost a Python start each)."""
    from engine.ledger.store import Ledger

    with Ledger.open("demo") as ledger:  # the demo fixture points FRAMEWORK_LEDGER_HOME at its ledger
        return ledger.current_id(env)


def popen(demo, *args: str) -> subprocess.Popen[str]:
    return cli_fork.popen(
        [FRAMEWORK_BIN, *args],
        cwd=demo.root,
        env=demo.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_crash_loop_fails_fast_as_degraded_exit_1(demo):
    """A crash loop fails fast as DEGRADED (exit 1) instead of waiting out the budget."""
    add_gated_env(demo, "crash", crash=True)
    start = time.monotonic()
    code, doc = demo.json("env", "deploy", "crash", "--yes", "--timeout", "120")
    assert code == 1, doc
    assert doc["rollout"]["phase"] == "DEGRADED" and doc["error"]["code"] == "degraded"
    res = doc["rollout"]["resources"][0]
    assert res["outcome"] == "failed" and res["restarts"] >= 3 and "crash loop" in res["message"]
    assert time.monotonic() - start < 60


def test_wait_budget_expired_while_progressing_exits_8(demo):
    """Exit 8: the wait budget expired while the rollout was progressing (renumbered from 5)."""
    add_gated_env(demo, "slow")
    code, doc = demo.json("env", "deploy", "slow", "--yes", "--timeout", "1.5", "--grace", "60")
    assert code == 8, doc
    assert doc["error"]["code"] == "wait_timed_out"
    assert doc["rollout"]["resources"][0]["outcome"] == "timed_out"
    assert doc["rollout"]["resources"][0]["phase"] == "progressing"


def test_transient_failure_gets_a_grace_then_ready(demo):
    """A transient health failure inside the grace does not fail the rollout."""
    gate, _port = add_gated_env(demo, "gated")
    proc = popen(demo, "env", "deploy", "gated", "--yes", "--json", "--stability-window", "0.3", "--events")
    until(lambda: current_of(demo, "gated"), what="the promotion")
    gate.write_text("up")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert json.loads(out)["rollout"]["phase"] == "ready"


def test_in_flight_rollout_declines_with_4_and_supersede_replaces_it_with_6(demo):
    """Exit 4 rollout_in_flight unless --supersede; the replaced wait ends SUPERSEDED with exit 6."""
    gate, port = add_gated_env(demo, "gated")
    demo.run("env", "build", "gated", "--release", "v1", check=True)
    svc = demo.root / "services" / "gated" / "main.py"
    svc.write_text(svc.read_text() + "\n# v2\n")
    demo.commit("v2")
    demo.run("env", "build", "gated", "--release", "v2", check=True)
    # the first wait cannot end ready while the test supersedes it: v1 and v2 share the gate file, and a
    # first deploy that saw the gate open and stabilized before the superseding promotion landed would exit 0
    first = popen(demo, "env", "deploy", "gated", "v1", "--yes", "--json", "--grace", "300",
                  "--stability-window", "300")
    until(lambda: current_of(demo, "gated"), what="the first promotion")
    code, doc = demo.json("env", "deploy", "gated", "v2", "--yes")
    assert code == 4 and doc["error"]["code"] == "rollout_in_flight"
    gate.write_text("up")  # let the replacement become healthy
    code, doc = demo.json("env", "deploy", "gated", "v2", "--yes", "--supersede", "--stability-window", "0.3")
    assert code == 0, doc
    assert doc["promotion"]["supersede"] is True
    out, _ = first.communicate(timeout=120)
    assert first.returncode == 6, out
    assert json.loads(out)["error"]["code"] == "superseded"
    code, shown = demo.json("ledger", "show", "gated")
    assert [p["release"] for p in shown["promotions"]] == ["v2", "v1"]


def test_racing_deploys_append_exactly_one_promotion_other_exits_3(demo):
    """Compare-and-set (docs/reference-deploy.md#env-deploy): two deploys racing on one environment (real
    parallel processes) append exactly one promotion; the other is refused by compare-and-set with exit 3."""
    demo.run("env", "build", "dev", "--release", "v1", check=True)
    demo.edit_api("two")
    demo.commit("two")
    demo.run("env", "build", "dev", "--release", "v2", check=True)
    code, plan1 = demo.json("env", "deploy", "dev", "v1", "--plan")
    code, plan2 = demo.json("env", "deploy", "dev", "v2", "--plan")
    a = popen(
        demo, "env", "deploy", "dev", "v1", "--approve", plan1["deploy_plan"]["digest"], "--json", "--no-wait"
    )
    b = popen(
        demo, "env", "deploy", "dev", "v2", "--approve", plan2["deploy_plan"]["digest"], "--json", "--no-wait"
    )
    results = sorted([(a.wait(timeout=120), a.stdout.read()), (b.wait(timeout=120), b.stdout.read())])
    assert [r[0] for r in results] == [0, 3], results
    loser = json.loads(results[1][1])
    assert loser["error"]["code"] == "promotion_conflict" and loser["applied"] is False
    code, shown = demo.json("ledger", "show", "dev")
    assert len(shown["promotions"]) == 1
    assert shown["promotions"][0]["release"] == json.loads(results[0][1])["target"]["release"]


def test_no_wait_reports_not_waited(demo):
    """--no-wait applies and reports every resource as not_waited."""
    code, doc = demo.json("env", "deploy", "dev", "--yes", "--no-wait")
    assert code == 0
    assert {r["outcome"] for r in doc["rollout"]["resources"]} == {"not_waited"}


def test_gate_file_freezes_evidence_onto_the_promotion(demo, tmp_path):
    """--gate <file> freezes evidence onto the entry; gate list shows it first (promote-time)."""
    evidence = tmp_path / "gate.json"
    evidence.write_text(
        json.dumps({"name": "unit", "status": "passed", "summary": "42 tests", "run_id": "9.1"})
    )
    code, doc = demo.json("env", "deploy", "dev", "--yes", "--no-wait", "--gate", str(evidence))
    assert code == 0
    assert [(g["name"], g["at_promote"]) for g in doc["promotion"]["gates"]] == [("unit", True)]
    demo.run("gate", "record", "dev", "--name", "smoke", "--status", "failed", check=True)
    code, gates = demo.json("gate", "list", "dev")
    assert [(g["name"], g["status"]) for g in gates["gates"]] == [("unit", "passed"), ("smoke", "failed")]


def test_gate_list_without_environment_lists_every_environment(demo):
    """`gate list [env]` (docs/reference-deploy.md#commands): the environment is optional; without it every
    machine-ledger environment's current gates, each in the documented order; hosted ones are skipped."""
    assert demo.json("env", "deploy", "dev", "--yes", "--no-wait")[0] == 0
    demo.run("gate", "record", "dev", "--name", "smoke", "--status", "passed", check=True)
    demo.run("gate", "record", "dev", "--name", "load", "--status", "failed", check=True)
    code, doc = demo.json("gate", "list")
    assert code == 0, doc
    by_env = {e["env"]: e for e in doc["environments"]}
    assert sorted(by_env) == ["cluster", "dev", "prod", "staging"]
    assert [g["name"] for g in by_env["dev"]["gates"]] == ["smoke", "load"]
    assert by_env["staging"]["promotion_id"] is None and by_env["staging"]["gates"] == []
    assert [s["env"] for s in doc["skipped"]] == ["cloud"]
    code, one = demo.json("gate", "list", "--promotion", by_env["dev"]["promotion_id"])
    assert code == 0 and [e["env"] for e in one["environments"]] == ["dev"]
    human = demo.run("gate", "list", check=True).stdout
    assert "dev " in human and "staging has no promotion" in human


def test_removed_workload_needs_acknowledge_destructive(demo):
    """Stop-class findings (a workload removed) need --acknowledge-destructive."""
    assert demo.json("env", "deploy", "dev", "--yes", "--no-wait")[0] == 0
    dev = demo.root / "deploy" / "kcl" / "dev" / "main.k"
    text = dev.read_text()
    dev.write_text(
        text[: text.index('        framework.Workload {\n            name = "web"')] + "    ]\n}\n"
    )
    demo.commit("drop web")
    code, doc = demo.json("env", "deploy", "dev", "--yes", "--no-wait")
    assert code == 1 and doc["refusal"]["code"] == "destructive_unacknowledged"
    code, doc = demo.json(
        "env", "deploy", "dev", "--yes", "--no-wait", "--acknowledge-destructive", "workload_removed"
    )
    assert code == 0, doc
    assert [i["change"] for i in doc["deploy_plan"]["images"] if i["name"] == "web"] == ["removed"]


def test_health_check_kinds_tcp_and_command(demo):
    """Health checks by default: http on the first port; a workload may declare tcp or command instead."""
    gate, _ = add_gated_env(demo, "tcpcheck", health='health = framework.HealthCheck {type = "tcp"}')
    code, doc = demo.json("env", "deploy", "tcpcheck", "--yes", "--stability-window", "0.2", "--timeout", "60")
    assert code == 0, doc  # /healthz answers 503 (no gate file) but the port is open
    assert doc["rollout"]["resources"][0]["message"].startswith("tcp ")
    gate2, _ = add_gated_env(demo, "cmdcheck", health=f'health = framework.HealthCheck {{type = "command", '
                                                      f'command = "test -f {demo.root.parent}/cmd.flag"}}')
    (demo.root.parent / "cmd.flag").write_text("ok")
    code, doc = demo.json("env", "deploy", "cmdcheck", "--yes", "--stability-window", "0.2", "--timeout", "60")
    assert code == 0, doc
    assert doc["rollout"]["resources"][0]["message"] == "health command exited 0"


def test_killed_deploy_leaves_a_whole_promotion_and_no_stuck_rollout(demo):
    """Crash safety: SIGKILL of a deploy mid-wait leaves its promotion whole and the ledger readable;
    the dead rollout is abandoned, so the next deploy is not declined as in flight."""
    import signal

    gate, _ = add_gated_env(demo, "gated")
    first = popen(demo, "env", "deploy", "gated", "--yes", "--json", "--grace", "300")
    until(lambda: current_of(demo, "gated"), what="the promotion")
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    code, shown = demo.json("ledger", "show", "gated")
    assert code == 0 and len(shown["promotions"]) == 1 and shown["promotions"][0]["images"]
    gate.write_text("up")
    code, doc = demo.json("env", "deploy", "gated", "--yes", "--stability-window", "0.2")
    assert code == 0, doc
    assert doc["appended"] is False  # same release: nothing appended, applied and healthy
    code, shown = demo.json("ledger", "show", "gated")
    assert [a["outcome"] for a in shown["applies"]] == ["ready", "abandoned"]


def test_an_instance_left_without_a_record_is_stopped_by_the_next_deploy(demo):
    """docs/reference-deploy.md#the-process-runtime: a deploy killed between starting an instance and writing its
    record leaves a process carrying the environment's markers and no record, holding the workload's port; the next
    deploy stops it (marker-checked: only a process with this environment's and workload's markers) instead of
    failing on the port. A stranger on the port still fails the deploy (the test below)."""
    from engine.processes import port_free
    from engine.project import find_project

    gate, port = add_gated_env(demo, "gated")
    gate.write_text("up")
    markers = {"FRAMEWORK_OWNED_BY": "framework", "FRAMEWORK_INSTANCE": "0" * 32, "FRAMEWORK_ENV": "gated",
               "FRAMEWORK_PROJECT": find_project(demo.root).key, "FRAMEWORK_WORKLOAD": "gated"}
    orphan = subprocess.Popen([sys.executable, "services/gated/main.py"], cwd=demo.root, start_new_session=True,
                              env={**demo.env, **markers, "PORT": str(port), "GATE_FILE": str(gate)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        until(lambda: not port_free(port), what="the unrecorded instance to listen")
        code, doc = demo.json("env", "deploy", "gated", "--yes", "--stability-window", "0.2", "--timeout", "60")
        assert code == 0, json.dumps(doc.get("rollout"))
        assert orphan.wait(timeout=30) is not None  # stopped by the deploy, not by this test
        code, status = demo.json("env", "status", "gated")
        assert code == 0, status
    finally:
        if orphan.poll() is None:
            orphan.kill()
            orphan.wait()


def test_declared_port_held_by_a_stranger_fails_fast_and_says_so(demo):
    """DEGRADED (exit 1) with a clear message when the declared port is taken by a process we do not own."""
    import socket

    _, port = add_gated_env(demo, "gated")
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        code, doc = demo.json("env", "deploy", "gated", "--yes", "--timeout", "60")
    assert code == 1 and doc["rollout"]["phase"] == "DEGRADED", json.dumps(doc["rollout"])
    assert f"port {port} is in use" in doc["rollout"]["resources"][0]["message"]
