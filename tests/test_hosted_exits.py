"""Hosted deploy exit codes beyond success (1, 2 and 8: docs/reference-deploy.md#env-deploy; a release is
immutable on the control plane:
docs/reference-hosted.md#the-http-interface-v1-json-bearer-tokens) against a real control plane."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cli_fork

from tests.deploy_fixtures import Demo, make_demo
from tests.hosted_fixtures import (  # noqa: F401
    Server,
    commit,
    demo,
    hosted_env,
    mint_in_store,
    plane,
    seed_org_in_store,
    server_factory,
    slow_start,
)
from tests.waiting import until

CRASH = "import sys\nsys.exit(3)\n"


def test_unreachable_and_refused_credentials_exit_2_naming_what_was_tried(plane: Server, demo: Demo) -> None:  # noqa: F811
    """Exit 2 (undetermined): a refused credential names its source and the sources tried; an unreachable
    control plane names the endpoint; nothing is promoted either way."""
    seed_org_in_store(plane, "acme")
    token = mint_in_store(plane, "acme")
    hosted_env(demo, plane.url)
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = "plt_not-a-token"
    code, doc = demo.json("env", "deploy", "cloud", "--yes")
    assert code == 2 and doc["error"]["code"] == "credential_refused"
    assert "env:FRAMEWORK_CONTROL_PLANE_TOKEN" in doc["error"]["message"]
    assert "$FRAMEWORK_CREDENTIAL_HELPER" in doc["error"]["message"]
    del demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"]
    code, doc = demo.json("env", "status", "cloud")
    assert code == 2 and "no credential" in doc["environments"][0]["message"]
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = token
    main = demo.root / "deploy" / "kcl" / "cloud" / "main.k"
    main.write_text(main.read_text().replace(plane.url, "http://127.0.0.1:9"))
    commit(demo, "unreachable")
    code, doc = demo.json("env", "deploy", "cloud", "--yes")
    assert code == 2 and doc["error"]["code"] == "control_plane_unreachable"
    assert "127.0.0.1:9" in doc["error"]["message"]


def test_degraded_and_wait_budget_exits(plane: Server, demo: Demo) -> None:  # noqa: F811
    """Exit 1: the control plane's rollout is DEGRADED (a crash loop); exit 8: the wait budget expired
    while it was converging (a slow start), the promotion recorded either way."""
    seed_org_in_store(plane, "acme")
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = mint_in_store(plane, "acme")
    hosted_env(demo, plane.url, name="slowcloud", service="slow")
    code, doc = demo.json("env", "deploy", "slowcloud", "--yes", "--timeout", "1")
    assert code == 8 and doc["error"]["code"] == "wait_timed_out" and doc["appended"] is True
    (demo.root / "services" / "api" / "main.py").write_text(CRASH)
    commit(demo, "crash")
    hosted_env(demo, plane.url)
    code, doc = demo.json("env", "deploy", "cloud", "--yes", "--timeout", "60")
    assert code == 1 and doc["error"]["code"] == "degraded" and "crash loop" in doc["error"]["message"]
    code, status = demo.json("env", "status", "cloud")
    assert code == 1 and status["environments"][0]["convergence"] == "DEGRADED"


def test_release_is_immutable_on_the_control_plane(plane: Server, demo: Demo, tmp_path: Path) -> None:  # noqa: F811
    """Records: releases are immutable: the same version over different artifacts is refused by the control
    plane (nothing promoted); over the same artifacts it is a no-op."""
    seed_org_in_store(plane, "acme")
    token = mint_in_store(plane, "acme")
    other = make_demo(tmp_path / "other")
    other.edit_api("different bytes")
    for d in (demo, other):
        d.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = token
        hosted_env(d, plane.url)
        d.run("env", "build", "cloud", "--release", "v1", check=True)
    code, first = demo.json("env", "deploy", "cloud", "v1", "--yes", "--no-wait")
    assert code == 0
    code, again = demo.json("env", "deploy", "cloud", "v1", "--yes", "--no-wait")
    assert code == 0 and again["appended"] is False
    code, refused = other.json("env", "deploy", "cloud", "v1", "--yes", "--no-wait")
    assert code == 1 and refused["error"]["code"] == "conflict" and "immutable" in refused["error"]["message"]
    code, shown = demo.json("ledger", "show", "cloud")
    assert [p["id"] for p in shown["promotions"]] == [first["promotion"]["id"]]
    assert json.loads((demo.root / ".framework" / "releases" / "v1.json").read_text())["version"] == "v1"


def test_a_newer_promotion_supersedes_the_wait(plane: Server, demo: Demo) -> None:  # noqa: F811
    """States: a waited promotion becomes SUPERSEDED when a newer promotion lands; that wait exits 6, the
    newer deploy converges."""
    import subprocess

    from tests.deploy_fixtures import FRAMEWORK_BIN
    from tests.hosted_fixtures import cp_get

    seed_org_in_store(plane, "acme")
    token = mint_in_store(plane, "acme")
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = token
    hosted_env(demo, plane.url, service="slow")
    slow_start(demo, 600)  # still rolling out when the newer promotion lands, however loaded the machine
    waiting = cli_fork.popen([FRAMEWORK_BIN, "env", "deploy", "cloud", "--yes", "--timeout", "60", "--json"],
                               cwd=demo.root, env=demo.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    until(lambda: cp_get(plane, token, "/v1/status?env=cloud").json()["environments"][0]["promotion"], 60,
          what="the first promotion on the control plane")
    (demo.root / "services" / "slow" / "main.py").write_text(
        (demo.root / "services" / "slow" / "main.py").read_text().replace('"600"', '"0"'))
    commit(demo, "faster")
    code, newer = demo.json("env", "deploy", "cloud", "--yes", "--timeout", "60")
    out, err = waiting.communicate(timeout=90)
    assert waiting.returncode == 6, err
    assert json.loads(out)["error"]["code"] == "superseded"
    assert code == 0 and newer["appended"] is True


def test_stop_during_a_rollout_leaves_nothing_running(plane: Server, demo: Demo) -> None:  # noqa: F811
    """States: `env stop` is never refused, also mid-rollout; what that rollout had started stops too
    (docs/reference-hosted.md#convergence: a rollout superseded by `env stop` stops what it had
    started). Waited for: the rollout's end, recorded on its apply row, then nothing runs."""
    from tests.hosted_fixtures import cp_get, pids_of_hosted

    seed_org_in_store(plane, "acme")
    token = mint_in_store(plane, "acme")
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = token
    hosted_env(demo, plane.url, service="slow")
    slow_start(demo, 600)  # the stop lands mid-rollout
    code, doc = demo.json("env", "deploy", "cloud", "--yes", "--no-wait")
    assert code == 0
    until(lambda: pids_of_hosted(plane), 60, what="the rollout to start the (slow) workload")
    code, stopped = demo.json("env", "stop", "cloud")
    assert code == 0

    def status() -> dict[str, Any]:
        return dict(cp_get(plane, token, "/v1/status?env=cloud").json()["environments"][0])

    apply = until(lambda: (status()["apply"] or {}).get("finished_at") and status()["apply"], 60,
                  what="the interrupted rollout to end (its apply row closed)")
    assert apply["outcome"] == "superseded", apply
    until(lambda: not pids_of_hosted(plane), 30, what="what the rollout had started to stop")
    assert status()["convergence"] == "stopped"
