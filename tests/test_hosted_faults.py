"""Faults of hosted environments (docs/reference-hosted.md#design, docs/reference-hosted.md#convergence)
against real control planes: a deploy:read token cannot promote; organizations are isolated both ways; two
machines racing -> one promotion and exit 3 (on a PostgreSQL-backed control plane); the control plane killed
mid-rollout."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import cli_fork
import httpx

from tests.database_fixtures import query
from tests.deploy_fixtures import FRAMEWORK_BIN, Demo, make_demo
from tests.hosted_fixtures import (  # noqa: F401
    Server,
    cp_get,
    demo,
    hosted_env,
    mint_in_store,
    plane,
    run_json,
    second_machine,
    seed_org_in_store,
    server_factory,
    slow_start,
    start_server,
    stop_hosted,
)
from tests.pg_fixtures import pg_url  # noqa: F401
from tests.waiting import until


def _promotions(srv: Server, token: str, env: str = "cloud") -> list[str]:
    r = cp_get(srv, token, f"/v1/envs/{env}/ledger?limit=50")
    assert r.status_code == 200, r.text
    return [p["id"] for p in r.json()["promotions"]]


def test_deploy_read_token_cannot_promote_but_deploy_write_records_gates(plane: Server, demo: Demo) -> None:  # noqa: F811
    """Scopes (docs/reference-hosted.md#the-http-interface-v1-json-bearer-tokens): a token with only
    deploy:read cannot promote (nothing appended); gate recording needs only deploy:write, deliberately
    weaker than promote; append-only and idempotent."""
    seed_org_in_store(plane, "acme")
    full = mint_in_store(plane, "acme", name="full")
    reader = mint_in_store(plane, "acme", ("deploy:read",), name="reader")
    writer = mint_in_store(plane, "acme", ("deploy:read", "deploy:write"), name="writer")
    hosted_env(demo, plane.url)
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = reader
    code, doc = demo.json("env", "deploy", "cloud", "--yes")
    assert code == 1 and doc["error"]["code"] == "insufficient_scope"  # refused at the release upload
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = writer
    code, doc = demo.json("env", "deploy", "cloud", "--yes")
    assert code == 1 and doc["error"]["code"] == "insufficient_scope" and "deploy:promote" in doc["error"]["message"]
    assert _promotions(plane, full) == []
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = full
    code, deployed = demo.json("env", "deploy", "cloud", "--yes", "--no-wait")
    assert code == 0
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = writer
    for _ in range(2):  # idempotent on (promotion, check, run id)
        code, gate = demo.json("gate", "record", "cloud", "--name", "smoke", "--status", "failed")
        assert code == 0 and gate["promotion_id"] == deployed["promotion"]["id"]
    assert gate["recorded"] == [] and [g["name"] for g in gate["already_recorded"]] == ["smoke"]
    code, listed = demo.json("gate", "list", "cloud")
    assert code == 0 and [(g["name"], g["status"]) for g in listed["gates"]] == [("smoke", "failed")]
    code, every = demo.json("gate", "list")  # every environment's, hosted ones from their control plane
    gates_by_env = {e["env"]: [g["name"] for g in e["gates"]] for e in every["environments"]}
    assert code == 0 and gates_by_env["cloud"] == ["smoke"]
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = reader
    code, refused = demo.json("gate", "record", "cloud", "--name", "lint", "--status", "passed")
    assert code == 1 and "deploy:write" in refused["error"]["message"]


def test_organizations_are_isolated_both_ways(plane: Server, demo: Demo, tmp_path: Path) -> None:  # noqa: F811
    """`cloud releases` lists the caller's organization's releases (the request carries no
    organization); neither organization sees the other's releases or environments."""
    seed_org_in_store(plane, "acme")
    seed_org_in_store(plane, "beta")
    a, b = mint_in_store(plane, "acme"), mint_in_store(plane, "beta")
    other = make_demo(tmp_path / "b")
    other.edit_api("beta's")
    hosted_env(demo, plane.url)
    hosted_env(other, plane.url)
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"], other.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = a, b
    code, da = demo.json("env", "deploy", "cloud", "--yes", "--no-wait")
    assert code == 0
    code, db = other.json("env", "deploy", "cloud", "--yes", "--no-wait")
    assert code == 0 and db["current"]["promotion_id"] is None  # beta's "cloud" is its own environment
    va, vb = da["target"]["release"], db["target"]["release"]
    assert va != vb
    assert cp_get(plane, plane.token, "/v1/releases").status_code == 403  # the platform admin token: no organization
    assert httpx.get(f"{plane.url}/v1/releases").status_code == 401
    for who, mine, theirs, promo in ((demo, va, vb, da), (other, vb, va, db)):
        code, rel = who.json("cloud", "releases", "cloud")
        assert code == 0 and [r["version"] for r in rel["releases"]] == [mine]
        token = who.env["FRAMEWORK_CONTROL_PLANE_TOKEN"]
        assert cp_get(plane, token, f"/v1/releases/{theirs}").status_code == 404
        assert _promotions(plane, token) == [promo["promotion"]["id"]]
        code, where = who.json("release", "where", theirs)
        assert code == 1 and where["environments"] == []


def test_two_machines_race_one_promotion_on_postgresql(server_factory: Callable[..., Server], demo: Demo,  # noqa: F811
                                                       tmp_path: Path, pg_url: str) -> None:  # noqa: F811
    """Compare-and-set (docs/reference-hosted.md#design) on a PostgreSQL-backed control plane: two machines
    (two ledger homes) approve the same plan at once -> exactly one promotion is appended, the other exits 3."""
    srv = server_factory(extra_env={"DATABASE_URL": pg_url})
    try:
        seed_org_in_store(srv, "acme")
        token = mint_in_store(srv, "acme")
        hosted_env(demo, srv.url)
        one = {**demo.env, "FRAMEWORK_CONTROL_PLANE_TOKEN": token}
        two = {**second_machine(demo, tmp_path), "FRAMEWORK_CONTROL_PLANE_TOKEN": token}
        code, plan = run_json(demo, one, "env", "deploy", "cloud", "--plan")
        assert code == 0
        version, digest = plan["target"]["release"], plan["deploy_plan"]["digest"]
        for machine in (one, two):  # each machine builds the release's files into its own store
            code, cut = run_json(demo, machine, "env", "build", "cloud", "--release", version)
            assert code == 0, cut
        procs = [cli_fork.popen([FRAMEWORK_BIN, "env", "deploy", "cloud", version, "--approve", digest, "--no-wait",
                                   "--json"], cwd=demo.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for env in (one, two)]
        codes = sorted(p.wait(120) for p in procs)
        assert codes == [0, 3], [p.communicate() for p in procs]
        assert len(_promotions(srv, token)) == 1
    finally:
        srv.stop()
        stop_hosted(srv)


def test_control_plane_killed_mid_rollout(server_factory: Callable[..., Server], demo: Demo) -> None:  # noqa: F811
    """Fault: the control plane is killed mid-rollout and restarted; the waiting CLI resumes its wait
    (or would exit 2 had it not come back) and the ledger holds exactly what was accepted."""
    srv = server_factory(extra_env={"PLATFORM_ROLLOUT_TIMEOUT_S": "60"})
    restarted: Server | None = None
    try:
        seed_org_in_store(srv, "acme")
        token = mint_in_store(srv, "acme")
        port = hosted_env(demo, srv.url, service="slow")
        slow_start(demo, 10)  # the kill lands mid-rollout, however loaded the machine
        env = {**demo.env, "FRAMEWORK_CONTROL_PLANE_TOKEN": token}
        deploy = cli_fork.popen([FRAMEWORK_BIN, "env", "deploy", "cloud", "--yes", "--timeout", "90", "--json"],
                                  cwd=demo.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        until(lambda: (r := cp_get(srv, token, "/v1/status?env=cloud").json()["environments"][0])["convergence"]
              == "progressing" and r.get("apply"), 60, what="the control plane to be rolling it out")
        srv.kill()
        # the same HTTP port (the CLI's endpoint); the daemon gateway on any free port (its default, the
        # HTTP port + 1, may be taken by then)
        restarted = start_server(srv.data_dir, srv.env, srv.token, "--port", srv.url.rsplit(":", 1)[1],
                                 "--gateway-port", "0")
        out, err = deploy.communicate(timeout=120)
        assert deploy.returncode in (0, 2), err
        assert deploy.returncode == 0, err  # it came back within the budget: the wait resumed
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
        assert len(_promotions(restarted, token)) == 1
    finally:
        for s in (srv, restarted):
            if s is not None:
                s.stop()
        stop_hosted(srv)


def test_two_servers_on_one_postgresql_converge_once(server_factory: Callable[..., Server], demo: Demo,  # noqa: F811
                                                      tmp_path: Path, pg_url: str) -> None:  # noqa: F811
    """DESIGN (several server processes on one PostgreSQL must be correct): two control-plane processes
    converge a hosted environment exactly once (one owner per environment, by lease); the one that
    stays takes supervision over when the other dies, without starting it twice
    (docs/reference-hosted.md#convergence; the lease shortened by PLATFORM_CONVERGE_LEASE_S)."""
    from tests.hosted_fixtures import pids_of_hosted

    def lease() -> tuple[str, int]:
        row = query(pg_url, "SELECT lease_owner, lease_until FROM cp_envs WHERE name = 'cloud'")
        return (row[0][0] or "", row[0][1] or 0) if row else ("", 0)

    data = tmp_path / "shared-data"
    one = server_factory(data_dir=data, extra_env={"DATABASE_URL": pg_url, "PLATFORM_CONVERGE_LEASE_S": "2"})
    two = start_server(data, one.env, one.token)  # the admin token exists: the second start prints none
    try:
        seed_org_in_store(one, "acme")
        token = mint_in_store(one, "acme")
        port = hosted_env(demo, one.url)
        code, doc = run_json(demo, {**demo.env, "FRAMEWORK_CONTROL_PLANE_TOKEN": token}, "env", "deploy", "cloud",
                             "--yes", "--timeout", "60")
        assert code == 0, doc
        pids = pids_of_hosted(one)
        assert len(pids) == 1
        status = cp_get(two, token, "/v1/status?env=cloud").json()["environments"][0]
        assert status["convergence"] == "converged" and status["workloads"][0]["running"] == 1
        owner = lease()[0]
        dead, other = (one, two) if f":{one.proc.pid}:" in owner else (two, one)
        assert f":{dead.proc.pid}:" in owner, owner  # one of the two owns it
        dead.kill()
        _, taken_until = until(lambda: (got := lease())[0] and f":{other.proc.pid}:" in got[0] and got, 30,
                               what="the other server to take the dead owner's lease over")
        until(lambda: lease()[1] > taken_until, 30, what="its next lease renewal (a whole tick as the owner)")
        assert pids_of_hosted(other) == pids  # supervised, not started again
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
        assert cp_get(other, token, "/v1/status?env=cloud").json()["environments"][0]["convergence"] == "converged"
    finally:
        for s in (one, two):
            s.stop()
        stop_hosted(two)
