"""Hosted environment states (queued on billing, env stop, env start, env delete;
deploy and status exit 7: docs/reference-hosted.md#commands-on-hosted-environments) against a real control plane."""

from __future__ import annotations

import httpx

from tests.deploy_fixtures import Demo
from tests.hosted_fixtures import (  # noqa: F401
    Server,
    admin,
    commit,
    demo,
    hosted_env,
    mint_in_store,
    plane,
    seed_org_in_store,
    server_factory,
)


def _up(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def test_no_billing_queues_then_goes_live_by_itself(plane: Server, demo: Demo) -> None:  # noqa: F811
    """States: an organization without billing -> the deploy is accepted and recorded, exit 7, `.queued`
    names the wait and an action URL; `env start` is refused with the server's reason; a newer deploy
    replaces the queued one; enabling billing (the admin command) makes it go live by itself."""
    seed_org_in_store(plane, "beta", billing=False)
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = mint_in_store(plane, "beta")
    port = hosted_env(demo, plane.url)
    code, doc = demo.json("env", "deploy", "cloud", "--yes")
    assert code == 7 and doc["error"]["code"] == "queued"
    assert doc["queued"]["wait"] == "billing" and doc["queued"]["action_url"] == f"{plane.url}/billing/beta"
    assert httpx.get(doc["queued"]["action_url"]).status_code == 200
    first = doc["promotion"]["id"]
    code, status = demo.json("env", "status", "cloud")
    assert code == 7 and status["environments"][0]["queued"]["wait"] == "billing"
    code, refused = demo.json("env", "start", "cloud")
    assert code == 7 and "billing" in refused["error"]["message"]
    demo.edit_api("hola")
    commit(demo, "newer")
    code, newer = demo.json("env", "deploy", "cloud", "--yes")
    assert code == 7 and newer["current"]["promotion_id"] == first and newer["appended"] is True
    assert not _up(port)  # nothing runs while queued
    admin(plane, "org", "billing", "beta", "--enable")
    code, waited = demo.json("env", "status", "cloud", "--wait", "--timeout", "60")
    assert code == 0, waited
    st = waited["environments"][0]
    assert st["promotion"]["id"] == newer["promotion"]["id"] and st["convergence"] == "converged"
    assert st["wait"]["outcome"] == "stayed_up" and st["wait"]["stability_window"] == 2.0
    assert _up(port)
    code, shown = demo.json("ledger", "show", "cloud")
    assert code == 0 and [p["id"] for p in shown["promotions"]] == [newer["promotion"]["id"], first]
    code, page = demo.json("env", "status", "cloud", "--history", "--limit", "1")  # Status: paged history
    history = page["environments"][0]["history"]
    assert [p["id"] for p in history["items"]] == [newer["promotion"]["id"]] and history["next_before"]
    code, page = demo.json("env", "status", "cloud", "--history", "--limit", "1", "--before", history["next_before"])
    assert [p["id"] for p in page["environments"][0]["history"]["items"]] == [first]
    assert page["environments"][0]["history"]["next_before"] == ""


def test_stop_start_delete_and_a_new_environment(plane: Server, demo: Demo) -> None:  # noqa: F811
    """States: `env stop` is never refused and keeps data; `env start --wait` converges it again;
    `env delete` needs --yes without a terminal, removes deployments and state, and a later deploy of
    the same name creates a new environment. Non-hosted environments are refused naming the command."""
    seed_org_in_store(plane, "acme")
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = mint_in_store(plane, "acme")
    port = hosted_env(demo, plane.url)
    code, doc = demo.json("env", "deploy", "cloud", "--yes")
    assert code == 0, doc
    code, stopped = demo.json("env", "stop", "cloud")
    assert code == 0 and stopped["result"]["state"] == "stopped" and not _up(port)
    code, status = demo.json("env", "status", "cloud")
    assert code == 0 and status["environments"][0]["convergence"] == "stopped"
    code, shown = demo.json("ledger", "show", "cloud")
    assert [p["id"] for p in shown["promotions"]] == [doc["promotion"]["id"]]  # data kept
    code, started = demo.json("env", "start", "cloud", "--wait", "--timeout", "60")
    assert code == 0 and started["wait"]["outcome"] == "converged" and _up(port)
    code, one = demo.json("env", "stop", "cloud", "--target", "api")  # --target: one workload
    assert code == 0 and one["result"]["targets"] == ["api"] and not _up(port)
    code, status = demo.json("env", "status", "cloud")
    assert [w["phase"] for w in status["environments"][0]["workloads"]] == ["stopped"]
    code, back = demo.json("env", "start", "cloud", "--target", "api", "--wait", "--timeout", "60")
    assert code == 0 and back["wait"]["outcome"] == "converged" and _up(port)
    assert demo.run("env", "stop", "cloud", "--target", "nope").returncode == 1
    code, refused = demo.json("env", "delete", "cloud")  # no terminal and no --yes
    assert code == 5 and _up(port)
    code, deleted = demo.json("env", "delete", "cloud", "--yes")
    assert code == 0 and deleted["result"]["deleted"] is True and not _up(port)
    code, status = demo.json("env", "status", "cloud")
    assert code == 0 and status["environments"][0]["convergence"] == "unbound"
    code, again = demo.json("env", "deploy", "cloud", "--yes")
    assert code == 0 and again["appended"] is True and again["current"]["promotion_id"] is None
    assert again["deploy_plan"]["direction"] == "INITIAL" and _up(port)
    proc = demo.run("env", "stop", "prod")
    assert proc.returncode == 1 and "framework env down prod" in proc.stderr


def test_delete_on_a_terminal_needs_the_typed_name(plane: Server, demo: Demo) -> None:  # noqa: F811
    """States: `env delete` is confirmed by typing the environment's name on a terminal (tmux): a wrong
    name deletes nothing (exit 5); the right one deletes."""
    import shlex
    import subprocess
    import uuid

    from tests.deploy_fixtures import FRAMEWORK_BIN
    from tests.test_deploy_tty import showing, tmux

    seed_org_in_store(plane, "acme")
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = mint_in_store(plane, "acme")
    hosted_env(demo, plane.url)
    assert demo.json("env", "deploy", "cloud", "--yes", "--no-wait")[0] == 0
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in demo.env.items()
                   if k.startswith(("FRAMEWORK_", "GIT_", "XDG_")) or k in ("HOME", "PATH", "NO_COLOR"))
    for typed, code in (("clod", "EXIT=5"), ("cloud", "EXIT=0")):
        name = f"fw18-{uuid.uuid4().hex[:8]}"
        tmux("new-session", "-d", "-s", name, "-x", "160", "-y", "40",
             f"cd {shlex.quote(str(demo.root))} && env -u CI {env} TERM=xterm {FRAMEWORK_BIN} env delete cloud; "
             "echo EXIT=$?; sleep 60")
        try:
            showing(name, "Type its name to confirm")
            tmux("send-keys", "-t", name, typed, "Enter")
            assert code in showing(name, "EXIT=")
        finally:
            subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True, check=False)
        _code, status = demo.json("env", "status", "cloud")
        assert (status["environments"][0]["convergence"] == "unbound") == (typed == "cloud")


def test_a_targeted_stop_holds_against_a_converger_look_that_predates_it(plane: Server, demo: Demo) -> None:  # noqa: F811
    """docs/reference-hosted.md#convergence: a workload stopped with `env stop --target` stays stopped even when the
    converger read the environment just before the stop. The interleaving is forced: the environment's row is read
    as a converger's look reads it, then the stop lands (through the server), then a converger checks health and
    rolls out from that stale row: it must read the stopped workloads as stored now, find the environment healthy
    and start nothing."""
    from sqlalchemy import select

    from engine.controlplane import tables as t
    from engine.controlplane.converge import Converger
    from tests.hosted_fixtures import _store

    seed_org_in_store(plane, "race")
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = mint_in_store(plane, "race")
    port = hosted_env(demo, plane.url)
    code, doc = demo.json("env", "deploy", "cloud", "--yes")
    assert code == 0 and _up(port), doc
    engine = _store(plane)
    try:
        with engine.connect() as conn:  # the columns converge.tick() reads, before the stop
            stale = conn.execute(
                select(t.envs.c.id, t.envs.c.org_id, t.envs.c.name, t.envs.c.converged_id, t.envs.c.stopped_targets,
                       t.envs.c.lease_owner, t.envs.c.lease_until, t.current.c.promotion_id)
                .join(t.current, t.current.c.env_id == t.envs.c.id).where(t.envs.c.name == "cloud")).one()
        assert stale.stopped_targets == "[]" and stale.converged_id == stale.promotion_id
        code, one = demo.json("env", "stop", "cloud", "--target", "api")
        assert code == 0 and one["result"]["targets"] == ["api"] and not _up(port)
        late = Converger(engine, plane.data_dir)
        assert late._healthy(stale)  # the stopped api is not a missing instance
        late._converge(stale)  # a rollout from the stale row: the api is not among its workloads
        assert not _up(port)
        code, status = demo.json("env", "status", "cloud")
        assert [w["phase"] for w in status["environments"][0]["workloads"]] == ["stopped"]
    finally:
        engine.dispose()
