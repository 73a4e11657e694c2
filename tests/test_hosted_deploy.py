"""Hosted environments on the control plane (docs/reference-hosted.md): deploy, status, ledger, releases,
against a real `platform server` that converges them with the process runtime."""

from __future__ import annotations

import httpx

from tests.deploy_fixtures import Demo
from tests.hosted_fixtures import (  # noqa: F401
    Server,
    demo,
    environ_of_hosted,
    hosted_env,
    mint_in_store,
    pids_of_hosted,
    plane,
    seed_org_in_store,
    server_factory,
)
from tests.waiting import until


def test_hosted_deploy_converges_on_the_control_plane(plane: Server, demo: Demo) -> None:  # noqa: F811
    """A hosted environment is converged by the control plane
    (docs/reference-hosted.md#commands-on-hosted-environments); the CLI waits on its status and exits 0 once
    healthy. Re-deploying the running release appends nothing. `ledger where` names the control plane and
    the declaration; `cloud releases` lists the release."""
    seed_org_in_store(plane, "acme")
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = mint_in_store(plane, "acme")
    port = hosted_env(demo, plane.url)
    code, doc = demo.json("env", "deploy", "cloud", "--yes", "--timeout", "60")
    assert code == 0, doc
    assert doc["appended"] is True and doc["rollout"]["phase"] == "converged"
    assert httpx.get(f"http://127.0.0.1:{port}/").json() == {"message": "hello from cloud"}
    hosted = environ_of_hosted(plane)  # the workload starts from a clean environment, not the server's
    assert hosted and all("PLATFORM_ROLLOUT_TIMEOUT_S" not in e and "FRAMEWORK_LEDGER_HOME" not in e
                          for e in hosted)
    assert all(e["GREETING"] == "hello from cloud" for e in hosted)
    version = doc["target"]["release"]
    code, again = demo.json("env", "deploy", "cloud", version, "--yes")
    assert code == 0 and again["appended"] is False
    assert again["current"]["promotion_id"] == doc["promotion"]["id"]
    code, where = demo.json("ledger", "where", "cloud")
    assert code == 0 and where["backend"] == "control_plane" and where["location"] == plane.url
    code, releases = demo.json("cloud", "releases", "cloud")
    assert code == 0 and [r["version"] for r in releases["releases"]] == [version]
    code, status = demo.json("env", "status", "cloud")
    assert code == 0 and status["environments"][0]["convergence"] == "converged"
    code, explained = demo.json("env", "deploy", "cloud", version, "--explain")
    assert code == 0 and any("control plane" in step for step in explained["explain"])


def test_the_control_plane_restarts_a_crashed_workload(plane: Server, demo: Demo) -> None:  # noqa: F811
    """Hosted convergence (docs/reference-hosted.md#convergence): the control plane supervises what it runs;
    a workload process that dies is started again (health-checked), with no deploy and no new promotion."""
    import os
    import signal

    seed_org_in_store(plane, "acme")
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = mint_in_store(plane, "acme")
    port = hosted_env(demo, plane.url)
    code, doc = demo.json("env", "deploy", "cloud", "--yes")
    assert code == 0, doc
    pids = pids_of_hosted(plane)
    assert len(pids) == 1
    os.kill(pids[0], signal.SIGKILL)
    until(lambda: (again := pids_of_hosted(plane)) and again != pids, 60,
          what=lambda: "the crashed workload to be started again:\n" + "".join(plane.lines[-40:]))
    code, status = demo.json("env", "status", "cloud", "--wait", "--timeout", "60")
    assert code == 0, (status, "".join(plane.lines[-40:]))  # diagnostics: the control plane's log tail
    assert status["environments"][0]["promotion"]["id"] == doc["promotion"]["id"]
    assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200


def test_ci_run_reads_a_hosted_environment_from_its_control_plane(plane: Server, demo: Demo) -> None:  # noqa: F811
    """`ci run <run-id> --env <hosted>` (docs/reference-ci.md#commands): the promotions and gates a CI run recorded
    on the control plane form its timeline; the promotion carries the run id (`<run>.<attempt>`)."""
    from tests.hosted_fixtures import run_json

    seed_org_in_store(plane, "acme")
    demo.env["FRAMEWORK_CONTROL_PLANE_TOKEN"] = mint_in_store(plane, "acme")
    hosted_env(demo, plane.url)
    ci = {**demo.env, "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "2"}
    code, doc = run_json(demo, ci, "env", "deploy", "cloud", "--yes", "--no-wait")
    assert code == 0 and doc["promotion"]["run_id"] == "4242.2"
    code, gate = run_json(demo, ci, "gate", "record", "cloud", "--name", "smoke", "--status", "passed")
    assert code == 0
    code, timeline = demo.json("ci", "run", "4242", "--env", "cloud")
    assert code == 0, timeline
    assert [(s["kind"], s["status"]) for s in timeline["stages"]] == [("promotion", "passed"), ("gate", "passed")]
